"""A model that rewords coworkers' replies (gym/harness/coworker_model.py): it keeps the rules' facts,
answers from its cache by conversation state, fails loudly, and a replay needs neither it nor its cache."""

from __future__ import annotations

import asyncio
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.errors import ConfigError
from gym.harness.config import harness_config
from gym.harness.coworker_model import CoworkerModel, CoworkerModelConfig, CoworkerModelError, facts
from gym.task_refs import resolve
from gym.tasks import Coworker
from tests.fakes.openai_server import FakeOpenAI, Reply

PERSON = Coworker.model_validate(
    {"username": "hannah.schulz", "persona": "the account manager for Oceanic", "rules": []}
)
RULE_REPLY = "We moved it to Friday 25 April, same time."


def _reword(prefix: str):
    """A stand-in model that rewords the reply it is given (the last user message's bracket)."""

    def respond(request) -> Reply:
        reply = re.search(r"\[Reply to reword: (.*)\]$", request["messages"][-1]["content"], re.S).group(1)
        return Reply.text(f"{prefix} {reply}")

    return respond


def model(server, tmp_path, mode="otherwise") -> CoworkerModel:
    return CoworkerModel(
        CoworkerModelConfig(mode=mode, model="fake", base_url=server.base_url, cache_dir=tmp_path / "cache")
    )


def test_the_models_words_are_posted_when_they_hold_the_same_facts(tmp_path):
    with FakeOpenAI(_reword("Sure thing:")) as server:
        worded = model(server, tmp_path).word(PERSON, "acme/t", RULE_REPLY, "When is the call?", [])
    assert (worded.source, worded.message) == ("model", f"Sure thing: {RULE_REPLY}")
    request = server.requests[0]
    assert (
        request["temperature"] == 0.0 and "account manager for Oceanic" in request["messages"][0]["content"]
    )


@pytest.mark.parametrize(
    "words, why",
    [
        ("We moved it to Friday 26 April.", "drops 25"),  # a wrong date
        ("We moved it to Friday, same time.", "drops 25, april"),
        ("Friday 25 April at 10 am, same time.", "adds 10"),  # a fact the rules never gave
        ("We moved it to Friday 25 April; ask Dana too.", "adds dana"),
        ("Marcus says we moved it to Friday 25 April, same time.", "adds marcus"),  # a name opening it
        ("Moved, same time. Priya set it for Friday 25 April.", "adds priya"),
        ("", "empty"),
    ],
)
def test_a_rewording_that_changes_a_fact_is_rejected_for_the_rules_words(tmp_path, words, why):
    with FakeOpenAI(lambda request: Reply.text(words)) as server:
        worded = model(server, tmp_path).word(PERSON, "acme/t", RULE_REPLY, "When?", [])
    assert (worded.source, worded.message, worded.rejected) == ("rules", RULE_REPLY, why)
    assert worded.model_text == words  # kept, so a replay can seed it


def test_a_name_the_agent_used_may_come_back_but_not_a_date_it_guessed(tmp_path):
    with FakeOpenAI(lambda request: Reply.text("Globex? We moved it to Friday 25 April.")) as server:
        assert (
            model(server, tmp_path).word(PERSON, "t", RULE_REPLY, "When is the Globex call?", []).source
            == "model"
        )
    with FakeOpenAI(lambda request: Reply.text("Yes, 3 May.")) as server:
        guessed = model(server, tmp_path).word(PERSON, "t", "Which customer?", "Was it moved to 3 May?", [])
    assert (guessed.source, guessed.rejected) == ("rules", "adds 3, may")


def test_a_name_may_come_back_in_another_case_and_common_openers_are_no_names(tmp_path):
    said = "Approved. Sure, it goes to Friday 25 April."
    with FakeOpenAI(lambda request: Reply.text(said)) as server:
        worded = model(server, tmp_path).word(PERSON, "t", "It is approved for Friday 25 April.", "OK?", [])
    assert (worded.source, worded.message) == ("model", said)
    assert facts("Sure. Thanks, Hannah: The Globex deal.") == {"hannah", "globex"}


@given(st.sampled_from(["12", "3,400.50", "dana.lee@acme.example", "Monday", "march"]))
def test_every_kind_of_fact_counts(fact):
    assert facts(f"it is {fact} then") - facts("it is then") == {fact.casefold()}


def test_the_same_conversation_is_answered_from_the_cache_and_a_new_one_is_asked(tmp_path):
    with FakeOpenAI(_reword("Right:")) as server:
        first = model(server, tmp_path).word(PERSON, "acme/t", RULE_REPLY, "When?", [])
        again = model(server, tmp_path).word(PERSON, "acme/t", RULE_REPLY, "  When?", [])  # another rollout
        assert (again.message, again.cached, len(server.requests)) == (first.message, True, 1)
        later = [("agent", "When?"), ("coworker", first.message)]
        model(server, tmp_path).word(PERSON, "acme/t", RULE_REPLY, "When?", later)  # asked again, later on
        model(server, tmp_path).word(PERSON, "acme/u", RULE_REPLY, "When?", [])  # another task
        assert len(server.requests) == 3


def test_a_failing_endpoint_is_one_error_naming_it(tmp_path):
    with (
        FakeOpenAI(lambda request: Reply.error(500, "boom")) as server,
        pytest.raises(
            CoworkerModelError, match=r"coworkers' model fake at http://127\.0\.0\.1:\d+/v1: "
        ) as e,
    ):
        model(server, tmp_path).word(PERSON, "acme/t", RULE_REPLY, "When?", [])
    assert "\n" not in str(e.value)


def test_rules_by_default_and_a_model_mode_needs_an_endpoint(monkeypatch):
    from gym.harness.coworker_model import coworker_model

    monkeypatch.delenv("OPENAI_MODEL", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert coworker_model(harness_config({}).coworkers) is None
    with pytest.raises(CoworkerModelError, match="needs a model and an endpoint"):
        coworker_model(harness_config({"coworkers": {"mode": "paraphrase"}}).coworkers)
    with pytest.raises(ConfigError, match="coworkers.mode"):
        harness_config({"coworkers": {"mode": "always"}})


def test_only_the_replies_the_mode_names_are_reworded(tmp_path):
    with FakeOpenAI(_reword("Hi:")) as server:
        otherwise, paraphrase = model(server, tmp_path), model(server, tmp_path, "paraphrase")
    assert (otherwise.rewords(matched_rule=False), otherwise.rewords(matched_rule=True)) == (True, False)
    assert paraphrase.rewords(matched_rule=True)


@pytest.mark.docker
@pytest.mark.slow
def test_reworded_replies_reach_the_agent_and_a_replay_hears_them_without_the_model(tmp_path):
    from gym.episode import open_episode
    from gym.harness.config import HarnessConfig
    from gym.policies.oracle import OraclePolicy
    from gym.regrade import replay_and_grade

    [task] = resolve(["acme/ask-colleague-l1-s0"])
    manager = task.coworkers[0]
    with FakeOpenAI(_reword("Sure thing!")) as server:
        config = HarnessConfig(
            coworkers=CoworkerModelConfig(
                mode="paraphrase", model="fake", base_url=server.base_url, cache_dir=tmp_path / "a"
            )
        )

        async def play():
            async with open_episode(task, run_id="pytest-cw-model") as episode:
                trajectory = await episode.play(OraclePolicy(task), config)
                return trajectory, await episode.grade(trajectory)

        first, grade = asyncio.run(play())
    said = [e["said"] for e in first.meta["coworkers"] if "said" in e]
    assert [s["source"] for s in said] == ["model"]
    assert (
        said[0]["message"].startswith("Sure thing! ") and said[0]["message"][12:] in manager.rules[0].replies
    )
    reads = [r.output for s in first.steps for r in s.results if r.name == "chat.read_channel"]
    assert said[0]["message"] in reads[-1]  # the agent read the model's words
    assert grade.normalized == 1.0
    assert first.meta["coworker_model"] == {
        "mode": "paraphrase",
        "model": "fake",
        "base_url": server.base_url,
    }
    # The endpoint is gone; the replay takes the words from the trajectory, seeded into the cache it uses.
    seeded = CoworkerModelConfig().cache_dir / said[0]["key"][:2] / f"{said[0]['key']}.json"
    seeded.unlink(missing_ok=True)
    _, replayed = asyncio.run(replay_and_grade(task, first))
    assert [e["said"]["message"] for e in replayed.meta["coworkers"] if "said" in e] == [said[0]["message"]]
    assert not any("error" in e for e in replayed.meta["coworkers"])
    assert seeded.is_file()
