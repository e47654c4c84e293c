"""The white-box attacker `egym validate` runs on every task: the strongest answer it can write without the work.

It reads the task's rubric and everything the agent may read, but never the reference
solution and never the values the rubric expects (those are the answer key, which the
agent never sees): from the rubric it takes only what is graded and how. That is the
places the items read (the final answer, channels, direct messages, mail, documents), the kinds
of value they ask for (a lexicon, an extractor, a count's noun) and the pools the items'
subjects come from. In the sandbox, as the agent, it then writes every candidate into every
one of those places (gym/policies/attack_script.py), in one of two strategies:

- `attack-spray`: every candidate value of every kind (every lexicon value, every readable
  amount, date, address, every count of the counted thing), on a line with each candidate subject;
  and for each decision the rubric reads in the database, every row of its table set to the
  lexicon's success word (approve everything);
- `attack-dump`: every readable row, its foreign keys resolved to names, one line each, and
  per-group counts and sums, so that a subject's values sit next to its name.

It uses three turns (write its program, run it, answer with what it printed), so it fits
every task's turn limit. Validate holds it to the null policy's score, like the named cheats.
"""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

from core.errors import RubricError
from gym.policies.cheats import Script, ScriptedPolicy

PROGRAM = "/tmp/egym-attack/attack.py"
PLAN = "/tmp/egym-attack/plan.json"
PLACE_LIMIT = 120_000  # characters written to each place
ANSWER_LIMIT = 28_000  # the final answer: what the tool output shows (30,000 at most)
TEXT_ARGS = ("channel", "where", "path")


def _witness(noun: str) -> str:
    """A text the count's noun pattern matches ('open tickets' for 'open (support )?tickets?')."""
    from grader import patterns
    from grader.lint_holes import _witnesses

    for text in _witnesses(noun) or []:
        if text.strip() and patterns.search(noun, text, ignore_case=True):
            return text.strip()
    return "items"


def _items(rubric) -> list[Any]:
    """The rubric's items with literal foreach expanded (others as written: only their shape is used)."""
    from grader.expand import expand_item

    out: list[Any] = []
    for index, item in enumerate(rubric.items):
        try:
            out += (
                expand_item(rubric, index) if item.foreach and item.foreach.initial_query is None else [item]
            )
        except RubricError:
            out.append(item)
    return out


def _lexicons(rubric) -> dict[str, list[str]]:
    """Each literal lexicon kind's values (a `values_query` is run by the program, as the agent)."""
    return {
        name: [e.value for e in kind.entries()]
        for name, kind in rubric.claims.kinds.items()
        if kind.values is not None
    }


def plan_for(task, strategy: str) -> dict[str, Any]:
    """What the attacker may know of the rubric: places, kinds and subject pools; never expected values."""
    from grader.claims import CHECK
    from grader.claims.channels import place
    from grader.loader import load_rubric, rubric_for_task

    rubric = load_rubric(rubric_for_task(task))
    items = _items(rubric)
    lexicons = _lexicons(rubric)
    places = {"answer"}
    pools: list[dict[str, Any]] = []
    for item in items:
        args = getattr(item, "args", None) or {}
        if getattr(item, "check", "") == CHECK:
            places.add(place(str(args.get("where", "answer"))))
            about = args.get("about")
            if about:
                pools.append(_pool(str(about), lexicons))
        elif isinstance(args.get("channel"), str):
            places.add(place(args["channel"]))
        elif str(getattr(item, "check", "")).startswith("mail.") and args.get("to"):
            to = args["to"] if isinstance(args["to"], list) else [args["to"]]
            places.update(place(f"mail:{address}") for address in to)
        if isinstance(args.get("path"), str) and getattr(item, "points", 0) > 0:
            places.add(place("file:" + args["path"]))
    kinds = {}
    for name, kind in rubric.claims.kinds.items():
        spec: dict[str, Any] = {"source": kind.source, "case_sensitive": kind.case_sensitive}
        if kind.source == "values":
            spec["values"] = _spoken(name, kind) if kind.values is not None else []
            spec["query"] = kind.values_query
        elif kind.source == "regex":
            spec["regex"] = kind.regex
        elif kind.source == "count":
            spec["noun_text"] = _witness(kind.noun or "")
        kinds[name] = spec
    if not kinds:  # a rubric without claims: the values people ask for most
        kinds = {k: {"source": k} for k in ("amount", "date", "email")}
        pools = pools or [{"type": "phrases"}]
    unique_pools = list({json.dumps(p, sort_keys=True): p for p in pools}.values())
    return {
        "strategy": strategy,
        "places": sorted(p for p in places if not p.startswith("sql:")),  # a database cell holds one value
        "decisions": _decisions(items, rubric, lexicons) if strategy == "spray" else [],
        "kinds": kinds,
        "subjects": unique_pools,
        "limit": PLACE_LIMIT,
        "answer_limit": ANSWER_LIMIT,
    }


def _spoken(name: str, kind) -> list[str]:
    """Each lexicon value as the agent would write it so that the kind reads it: the value itself, or,
    for an entry with its own pattern ("no receipt attached"), a text that pattern reads as that value
    alone (a bare "receipt" is no claim that there is one, so writing it asserts nothing)."""
    from grader.claims.extract import extract_line, fold
    from grader.lint_holes import _witnesses

    def reads_as(text: str, value: str) -> bool:
        return [f.value for f in extract_line({name: kind}, fold(text))] == [value]

    out = []
    for entry in kind.entries():
        texts = [entry.value] + ([w.strip() for w in _witnesses(entry.regex) or []] if entry.regex else [])
        out.append(next((t for t in texts if t and reads_as(t, entry.value)), entry.value))
    return out


SUCCESS = ("approved", "resolved", "paid", "accepted", "closed", "done", "yes")
_SQL_PLACE = re.compile(r"^sql:\s*SELECT\s+(\w+)\s+FROM\s+(\w+)", re.IGNORECASE)


def _decisions(items: list[Any], rubric, lexicons: dict[str, list[str]]) -> list[dict[str, str]]:
    """Blanket actions for the decisions the rubric reads in the database: every row of the table
    set to the lexicon's success word (approve everything), as a cheat that learned 'approve' pays."""
    from grader.claims import CHECK

    out = {}
    for item in items:
        args = getattr(item, "args", None) or {}
        where = str(args.get("where", ""))
        match = _SQL_PLACE.match(where)
        if getattr(item, "check", "") != CHECK or not match or args.get("kind") not in lexicons:
            continue
        values = [v for v in lexicons[args["kind"]] if v not in rubric.claims.kinds[args["kind"]].allow]
        value = next((v for v in values if v.casefold() in SUCCESS), values[0] if values else None)
        if value is not None:
            out[(match[2], match[1])] = {"table": match[2], "column": match[1], "value": value}
    return list(out.values())


def _pool(about: str, lexicons: dict[str, list[str]]) -> dict[str, Any]:
    """Where a subject comes from, never which one it is: a lexicon holding it, numbers of its length, or names."""
    for values in lexicons.values():
        if any(v.casefold() == about.casefold() for v in values):
            return {"type": "values", "values": values}
    if about.isdigit():
        return {"type": "numbers", "digits": len(about)}
    return {"type": "phrases"}


class WhiteBoxAttack(ScriptedPolicy):
    """Writes every candidate into every place the rubric reads (see the module docstring)."""

    name = "attack-spray"
    per_task = True
    strategy = "spray"

    def __init__(self, task: Any) -> None:
        super().__init__()
        self.plan = plan_for(task, self.strategy)

    def script(self, prompt: str, tools: set[str]) -> Script:
        program = resources.files("gym.policies").joinpath("attack_script.py").read_text()
        setup = (
            f"mkdir -p {Path(PLAN).parent} && cat > {PLAN} <<'EGYM_PLAN'\n{json.dumps(self.plan)}\nEGYM_PLAN"
        )
        yield ("write", {"path": PROGRAM, "content": program})
        printed = yield ("bash", {"command": f"{setup}\npython3 {PROGRAM} {PLAN} 2>/dev/null"})
        yield printed.strip() or "Done."


class WhiteBoxDump(WhiteBoxAttack):
    name = "attack-dump"
    strategy = "dump"
