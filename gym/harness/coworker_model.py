"""A model that puts a coworker's reply in their own words (the harness's `coworkers.model`).

The rules still decide what a coworker says: which rule answers, and so every fact, comes from
gym/harness/coworkers.py. The model only rewords it: in mode `otherwise` the reply to a message no
rule recognised (so "Sorry, what do you need?" can fit what was asked), in mode `paraphrase` every
reply. A rewording that drops or adds a fact (a number, a date, a month or weekday, an address, a
name the reply gives) is rejected and the rule's own phrasing is posted, so a model can make a
coworker sound natural but never make them wrong.

Replies are cached on disk by conversation state (endpoint, model, mode, task, person, the
conversation with them so far, the rule's reply), at temperature 0: every rollout of a group that
says the same things hears the same words, and a replay takes them from the trajectory
(`seed_cache`), so it needs neither the endpoint nor the cache of the machine that ran it.
A request that fails raises CoworkerModelError: the session then falls silent and the grade is
incomplete, as for any coworker failure.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from core.content_cache import ContentCache, content_key
from core.errors import EgymError
from core.strict import StrictModel
from gym.tasks import Coworker

Mode = Literal["rules", "otherwise", "paraphrase"]

SYSTEM = (
    "You are {name}, {persona}, writing to a colleague in the company's chat or e-mail. Rewrite the reply "
    "you are given in your own words, as a short and natural chat message (one or two sentences) that fits "
    "the colleague's message. Keep every fact of the reply exactly (names, numbers, dates, addresses) and "
    "add none: no new names, numbers, dates, promises or opinions. Write only the message."
)
MONTHS_AND_DAYS = (
    "january|february|march|april|may|june|july|august|september|october|november|december|"
    "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
)
FACT = re.compile(rf"\d+(?:[.,]\d+)*|[\w.+-]+@[\w.-]+\w|\b(?:{MONTHS_AND_DAYS})\b", re.IGNORECASE)
# A capitalised word: a name the reply gives, unless it opens a sentence as one of these words do.
NAME = re.compile(r"\b[A-Z][a-z]+(?:[A-Z][a-z]+)*\b")
SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+|\n\s*|[\"'(]\s*)$")
OPENERS = frozenset(
    [
        "About",
        "After",
        "Also",
        "Although",
        "And",
        "Any",
        "Are",
        "As",
        "At",
        "Before",
        "Best",
        "But",
        "By",
        "Can",
        "Cheers",
        "Could",
        "Did",
        "Do",
        "Does",
        "Exactly",
        "For",
        "From",
        "Glad",
        "Good",
        "Got",
        "Great",
        "Had",
        "Has",
        "Have",
        "He",
        "Hello",
        "Her",
        "Here",
        "Hey",
        "Hi",
        "His",
        "How",
        "However",
        "If",
        "In",
        "Is",
        "It",
        "Its",
        "Just",
        "Let",
        "Maybe",
        "My",
        "No",
        "Nope",
        "Not",
        "Noted",
        "Now",
        "Of",
        "Ok",
        "Okay",
        "On",
        "Once",
        "Only",
        "Or",
        "Our",
        "Per",
        "Please",
        "Quick",
        "Right",
        "She",
        "Should",
        "Since",
        "So",
        "Some",
        "Sorry",
        "Sure",
        "Thanks",
        "Thank",
        "That",
        "The",
        "Their",
        "Then",
        "There",
        "They",
        "This",
        "Those",
        "To",
        "Unfortunately",
        "Was",
        "We",
        "Well",
        "What",
        "When",
        "Where",
        "Which",
        "While",
        "Who",
        "Will",
        "With",
        "Without",
        "Would",
        "Yeah",
        "Yes",
        "Yep",
        "You",
        "Your",
    ]
)


class CoworkerModelError(EgymError):
    """The coworkers' model endpoint failed or answered nothing usable."""


class CoworkerModelConfig(StrictModel, allow_inf_nan=False):
    """Who rewords the coworkers' replies (harness `coworkers:`); by default no one: the rules' own words."""

    mode: Mode = Field(
        "rules",
        description="'rules': the rules' phrasings only; 'otherwise': a model rewords the reply to a message "
        "no rule recognised; 'paraphrase': a model rewords every reply. Facts always come from the rules.",
    )
    model: str | None = Field(None, description="Model name at the endpoint (default $OPENAI_MODEL).")
    base_url: str | None = Field(
        None, description="OpenAI-compatible endpoint, e.g. `egym models serve`'s (default $OPENAI_BASE_URL)."
    )
    timeout_s: float = Field(60.0, gt=0, le=3600, description="Per request.")
    max_tokens: int = Field(80, ge=8, le=2048, description="Longest reworded reply in tokens.")
    cache_dir: Path | None = Field(
        Path(".egym/coworker-cache"), description="Replies by conversation state; None disables the cache."
    )

    def endpoint(self) -> tuple[str, str]:
        model = self.model or os.environ.get("OPENAI_MODEL")
        base_url = self.base_url or os.environ.get("OPENAI_BASE_URL")
        if not model or not base_url:
            raise CoworkerModelError(
                f"coworkers.mode={self.mode} needs a model and an endpoint: set coworkers.model and "
                "coworkers.base_url (or OPENAI_MODEL and OPENAI_BASE_URL)"
            )
        return model, base_url.rstrip("/")


@dataclass(frozen=True)
class Worded:
    """A reply as posted: the model's words, or the rule's when the model was not asked or was rejected."""

    message: str
    source: Literal["rules", "model"]
    key: str = ""  # the cache key of the model's answer ("" when the model was not asked)
    cached: bool = False
    model_text: str = ""  # what the model wrote (kept when rejected, so a replay can seed it)
    rejected: str = ""  # why the model's words were not used


def facts_without_names(text: str) -> set[str]:
    """The facts no rewording may add: numbers, addresses, months, weekdays."""
    return {m.group(0).casefold() for m in FACT.finditer(text)}


def names(text: str) -> set[str]:
    """The capitalised words of `text` that may be names: all but the common words opening a sentence."""
    return {
        m.group(0).casefold()
        for m in NAME.finditer(text)
        if m.group(0) not in OPENERS or not SENTENCE_START.search(text, 0, m.start())
    }


def facts(text: str) -> set[str]:
    """What a reply asserts that a rewording must keep: numbers, addresses, months, weekdays, names."""
    return facts_without_names(text) | names(text)


def _display_name(username: str) -> str:
    return " ".join(part.capitalize() for part in re.split(r"[._-]+", username) if part)


class CoworkerModel:
    """Rewords replies through one OpenAI-compatible endpoint, with the on-disk cache. Thread-safe enough for
    the harness, which calls it from one worker thread per episode."""

    def __init__(self, config: CoworkerModelConfig):
        self.config = config
        self.model, self.base_url = config.endpoint()
        self.cache = ContentCache(config.cache_dir)
        self._client: Any = None
        self.requests = 0  # sent to the endpoint (cache misses), for tests and benches

    def describe(self) -> dict[str, Any]:
        """What a trajectory keeps, so a replay rewords the same way (no key, no cache path)."""
        return {"mode": self.config.mode, "model": self.model, "base_url": self.base_url}

    def rewords(self, matched_rule: bool) -> bool:
        return self.config.mode == "paraphrase" or (self.config.mode == "otherwise" and not matched_rule)

    def question(
        self, person: Coworker, seed: str, reply: str, message: str, history: list[tuple[str, str]]
    ) -> dict[str, Any]:
        """The request, which is also the cache key: the conversation state and the reply to reword."""
        name = _display_name(person.username)
        turns = [
            {"role": "user" if who == "agent" else "assistant", "content": text} for who, text in history
        ]
        return {
            "endpoint": self.base_url,
            "model": self.model,
            "mode": self.config.mode,
            "task": seed,
            "person": person.username,
            "messages": [
                {
                    "role": "system",
                    "content": SYSTEM.format(name=name, persona=person.persona or "a colleague"),
                },
                *turns,
                {"role": "user", "content": f"{' '.join(message.split())}\n\n[Reply to reword: {reply}]"},
            ],
            "max_tokens": self.config.max_tokens,
        }

    def word(
        self, person: Coworker, seed: str, reply: str, message: str, history: list[tuple[str, str]]
    ) -> Worded:
        """The reply in the person's words when they hold the same facts; else the rule's."""
        question = self.question(person, seed, reply, message, history)
        key = content_key(question)
        cached = self.cache.get(key)
        text = cached["text"] if cached else self._ask(question)
        if not cached:
            self.cache.put(key, {"text": text})
        kept = facts(reply)
        # A name may come back in another case or place ("Approved." for "it is approved"), and a name
        # said in the conversation may come back ("Globex? ..."); a number, date or address never may.
        said_facts, said_names = facts_without_names(text), names(text)
        words = set(re.findall(r"\w+", text.casefold()))
        dropped = {fact for fact in kept - said_facts - said_names if fact not in words}
        heard = {
            w
            for line in [reply, message, *(line for _, line in history)]
            for w in re.findall(r"\w+", line.casefold())
        }
        added = (said_facts - kept) | (said_names - kept - heard)
        if not text:
            why = "empty"
        elif dropped:
            why = "drops " + ", ".join(sorted(dropped))
        elif added:
            why = "adds " + ", ".join(sorted(added))
        else:
            return Worded(text, "model", key, bool(cached), text)
        return Worded(reply, "rules", key, bool(cached), text, why)

    def _ask(self, question: dict[str, Any]) -> str:
        import openai

        if self._client is None:
            self._client = openai.OpenAI(
                base_url=self.base_url,
                api_key=os.environ.get("OPENAI_API_KEY") or "none",
                timeout=self.config.timeout_s,
                max_retries=2,
            )
        self.requests += 1
        try:
            answer = self._client.chat.completions.create(
                model=self.model,
                messages=question["messages"],
                max_tokens=question["max_tokens"],
                temperature=0.0,
            )
        except openai.OpenAIError as exc:
            raise CoworkerModelError(
                f"coworkers' model {self.model} at {self.base_url}: {type(exc).__name__}: {exc}"
            ) from None
        content = answer.choices[0].message.content if answer.choices else None
        return " ".join((content or "").split())

    def seed_cache(self, log: list[dict[str, Any]]) -> int:
        """Store a trajectory's reworded replies (its `meta.coworkers`) in the cache; how many."""
        seeded = 0
        for entry in log:
            said = entry.get("said") or {}
            if said.get("key") and said.get("model_text"):
                self.cache.put(said["key"], {"text": said["model_text"]})
                seeded += 1
        return seeded


def coworker_model(config: CoworkerModelConfig) -> CoworkerModel | None:
    """The model of a harness's `coworkers:` setting; None in mode `rules`."""
    return None if config.mode == "rules" else CoworkerModel(config)
