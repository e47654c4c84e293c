"""The white-box attacker: it knows how a task is graded but never what the rubric expects, and
writes every candidate where the rubric reads; claims must charge it down to the null policy."""

from __future__ import annotations

import asyncio

import pytest

from gym.policies.attacker import plan_for
from gym.rollout import RolloutSpec, run_rollout
from gym.task_refs import resolve


def _expected(task) -> list:
    from grader.loader import load_rubric, rubric_for_task

    rubric = load_rubric(rubric_for_task(task))
    return [i.args["value"] for i in rubric.items if getattr(i, "check", "") == "claims.stated"]


def test_the_plan_holds_places_and_kinds_but_no_expected_value_outside_a_lexicon():
    task = resolve(["acme/coworker-question-l2-s0"])[0]
    plan = plan_for(task, "spray")
    assert plan["places"] == ["answer", "dm:jordan.lee,oliver.grant"]
    assert set(plan["kinds"]) == {"amount", "open_tickets", "stage"}
    assert plan["kinds"]["open_tickets"] == {
        "source": "count",
        "case_sensitive": False,
        "noun_text": "open ticket",
    }
    lexicon = {v for kind in plan["kinds"].values() for v in kind.get("values", [])}
    said = {str(leaf) for leaf in _leaves({k: v for k, v in plan.items() if k != "kinds"})}
    for value in _expected(task):
        assert str(value) in lexicon or str(value) not in said, value


def _leaves(data) -> list:
    if isinstance(data, dict):
        return [leaf for v in data.values() for leaf in _leaves(v)]
    if isinstance(data, list):
        return [leaf for v in data for leaf in _leaves(v)]
    return [data]


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize("policy", ["attack-spray", "attack-dump"])
def test_the_attacker_states_expected_values_and_is_charged_to_null(policy, docker_image):
    task = resolve(["acme/coworker-question-l2-s0"])[0]
    spec = RolloutSpec(
        run_id="pytest-attacker",
        rollout_id=f"attack-{policy}",
        task=task.key,
        task_path=str(task.path.absolute()),
        policy=policy,
    )
    outcome = asyncio.run(run_rollout(spec))
    grade = outcome.grade
    assert grade is not None and not grade.incomplete, outcome.error
    hits = [i.id for i in grade.items if i.points > 0 and i.status == "pass"]
    charged = {i.id: i.earned for i in grade.items if i.section == "claims" and i.status == "fail"}
    assert hits, "the attacker wrote nothing the rubric reads: it would prove nothing"
    assert charged and grade.raw <= 0, grade.summary()


def test_the_spray_states_every_lexicon_value_in_a_form_its_kind_reads():
    """A value written so that the kind cannot read it ("receipt" for an entry that wants "has a
    receipt") asserts nothing: the spray would then hold one lucky value of a two-value lexicon,
    a blind guess that beats null half the time (expense-claim-l1-s7 under validate-all)."""
    from grader.claims.extract import extract_line, fold
    from grader.loader import load_rubric, rubric_for_task
    from gym.policies.attack_script import compose

    task = resolve(["acme/expense-claim-l1-s7"])[0]
    kinds = load_rubric(rubric_for_task(task)).claims.kinds
    plan = plan_for(task, "spray")
    patterned = [name for name, kind in kinds.items() if any(e.regex for e in kind.entries())]
    assert "receipt" in patterned
    for name in patterned:
        only = {**plan, "kinds": {name: plan["kinds"][name]}, "subjects": []}
        read = {
            f.value
            for line in compose(only, "", [], []).splitlines()
            for f in extract_line(kinds, fold(line))
        }
        assert read == {e.value for e in kinds[name].entries()}, compose(only, "", [], [])


def test_the_plan_mails_where_mail_items_read(monkeypatch):
    from grader.rubric import Rubric

    rubric = Rubric.model_validate(
        {
            "task": "acme/t",
            "claims": {"kinds": {"total": {"extract": "amount"}}},
            "items": [
                {
                    "id": "sent",
                    "description": "d",
                    "kind": "python",
                    "points": 1,
                    "check": "mail.sent",
                    "args": {"to": "Lena@client.example", "subject": "quote"},
                },
                {
                    "id": "total",
                    "description": "d",
                    "kind": "python",
                    "points": 2,
                    "check": "claims.stated",
                    "args": {"kind": "total", "value": 760, "where": "mail:lena@client.example"},
                },
            ],
        }
    )
    monkeypatch.setattr("grader.loader.rubric_for_task", lambda task: "unused")
    monkeypatch.setattr("grader.loader.load_rubric", lambda path: rubric)
    plan = plan_for(object(), "spray")
    assert plan["places"] == ["answer", "mail:lena@client.example"]
    assert 760 not in [leaf for leaf in _leaves(plan)]  # the expected value stays out of the plan
