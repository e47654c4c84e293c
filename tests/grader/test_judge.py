"""Judge items against a local server speaking the OpenAI chat-completions protocol."""

from __future__ import annotations

import json
import threading

import pytest

from core.trajectory import Trajectory
from grader.grade import Verdict
from grader.judge import Judge, JudgeConfig, combine
from grader.probe import StaticProbe
from grader.rubric import Scale
from grader.score import grade
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.grader.conftest import make_rubric

TRAJ = Trajectory(
    task="acme/test", policy="openai", model="policy-model", final_answer="Dear customer, sorry!"
)


def judge_item(id: str = "tone", points: int = 4, **extra) -> dict:
    return {
        "id": id,
        "description": "The reply is polite",
        "points": points,
        "kind": "judge",
        "prompt": "Is the reply to the customer polite?",
        "evidence": [{"type": "final_answer"}],
        **extra,
    }


def verdict(value, reason: str = "looks fine") -> Reply:
    return Reply.text(json.dumps({"reason": reason, "verdict": value}))


def make_judge(server: FakeOpenAI, tmp_path, **overrides) -> Judge:
    options = {"max_retries": 2, "timeout_s": 5.0, **overrides}
    config = JudgeConfig(
        base_url=server.base_url,
        api_key="test",
        model="judge-model",
        cache_dir=tmp_path / "judge-cache",
        **options,
    )
    return Judge(config, policy_model="policy-model")


def test_structured_output_request_and_verdict(tmp_path):
    with FakeOpenAI(lambda req: verdict("pass", "Apologises and addresses the customer.")) as server:
        result = grade(make_rubric([judge_item()]), StaticProbe(), TRAJ, judge=make_judge(server, tmp_path))
    item = result.items[0]
    assert item.status == "pass" and item.earned == 4 and str(result) == "4/4"
    assert item.evidence == "Apologises and addresses the customer."
    assert [(v.model, v.verdict, v.cached) for v in item.verdicts] == [("judge-model", "pass", False)]
    request = server.requests[0]
    assert request["model"] == "judge-model"
    schema = request["response_format"]["json_schema"]
    assert request["response_format"]["type"] == "json_schema" and schema["strict"] is True
    assert schema["schema"]["properties"]["verdict"] == {"type": "string", "enum": ["pass", "fail"]}
    assert schema["schema"]["required"] == ["reason", "verdict"]
    assert "Dear customer, sorry!" in request["messages"][1]["content"]


def test_a_regrade_is_served_from_the_cache(tmp_path):
    rubric = make_rubric([judge_item("a"), judge_item("b", prompt="Is it short?")])
    with FakeOpenAI(lambda req: verdict("fail")) as server:
        first = grade(rubric, StaticProbe(), TRAJ, judge=make_judge(server, tmp_path))
        assert len(server.requests) == 2
        judge = make_judge(server, tmp_path)  # a new process would start like this
        second = grade(rubric, StaticProbe(), TRAJ, judge=judge)
        assert len(server.requests) == 2 and judge.calls == 0
    assert [i.status for i in second.items] == [i.status for i in first.items] == ["fail", "fail"]
    assert all(v.cached for i in second.items for v in i.verdicts)
    # Different evidence is a different question: not served from the cache.
    with FakeOpenAI(lambda req: verdict("pass")) as server:
        other = TRAJ.model_copy(update={"final_answer": "Whatever."})
        third = grade(rubric, StaticProbe(), other, judge=make_judge(server, tmp_path))
        assert len(server.requests) == 2 and third.items[0].status == "pass"


def test_a_500_is_retried_and_then_succeeds(tmp_path):
    calls = []

    def respond(req):
        calls.append(1)
        return Reply.error(500, "upstream exploded") if len(calls) == 1 else verdict("pass")

    with FakeOpenAI(respond) as server:
        result = grade(make_rubric([judge_item()]), StaticProbe(), TRAJ, judge=make_judge(server, tmp_path))
    assert len(calls) == 2
    assert result.items[0].status == "pass" and not result.incomplete


def test_a_timeout_becomes_an_error_item_never_a_fail(tmp_path):
    with FakeOpenAI(lambda req: Reply(body=verdict("pass").body, delay_s=2.0)) as server:
        judge = make_judge(server, tmp_path, timeout_s=0.3, max_retries=1)
        result = grade(
            make_rubric(
                [
                    judge_item(),
                    {
                        "id": "x",
                        "description": "d",
                        "points": 1,
                        "kind": "python",
                        "check": "transcript.final_answer_contains",
                        "args": {"text": "sorry"},
                    },
                ]
            ),
            StaticProbe(),
            TRAJ,
            judge=judge,
        )
    item = result.items[0]
    assert item.status == "error" and item.earned == 0
    assert "timed out" in item.error
    assert item.verdicts[0].error and item.verdicts[0].score is None
    assert result.incomplete and str(result) == "1/5"
    assert len(server.requests) == 2  # the first try and one retry
    assert not list((tmp_path / "judge-cache").rglob("*.json"))  # failures are never cached


def test_an_answer_off_the_scale_is_asked_again_then_errors(tmp_path):
    with FakeOpenAI(lambda req: Reply.text("I think it is fine")) as server:
        result = grade(make_rubric([judge_item()]), StaticProbe(), TRAJ, judge=make_judge(server, tmp_path))
    assert result.items[0].status == "error" and "unusable judge answer" in result.items[0].error
    assert len(server.requests) == 2


def test_concurrency_is_bounded(tmp_path):
    items = [judge_item(f"q{i}", prompt=f"Question {i}?") for i in range(12)]
    with FakeOpenAI(lambda req: Reply(body=verdict("pass").body, delay_s=0.3)) as server:
        result = grade(
            make_rubric(items), StaticProbe(), TRAJ, judge=make_judge(server, tmp_path, max_concurrency=3)
        )
    assert len(server.requests) == 12 and all(i.status == "pass" for i in result.items)
    assert server.max_in_flight == 3


def test_a_panel_records_every_verdict_and_applies_its_rule(tmp_path):
    answers = {"judge-a": "pass", "judge-b": "fail", "judge-c": "pass"}
    lock = threading.Lock()

    def respond(req):
        with lock:
            return verdict(answers[req["model"]], f"{req['model']} says so")

    panel_item = judge_item(
        "majority", panel={"models": ["judge-a", "judge-b", "judge-c"], "rule": "majority"}
    )
    mean_item = judge_item(
        "mean", points=6, prompt="Mean?", panel={"models": ["judge-a", "judge-b", "judge-c"], "rule": "mean"}
    )
    with FakeOpenAI(respond) as server:
        result = grade(
            make_rubric([panel_item, mean_item]), StaticProbe(), TRAJ, judge=make_judge(server, tmp_path)
        )
    majority, mean = result.items
    assert majority.status == "pass" and majority.earned == 4
    assert sorted((v.model, v.verdict) for v in majority.verdicts) == [
        ("judge-a", "pass"),
        ("judge-b", "fail"),
        ("judge-c", "pass"),
    ]
    assert mean.status == "pass" and mean.earned == 4  # 2/3 of 6 points
    assert str(result) == "8/10"


def test_samples_of_one_model_use_a_sampling_temperature(tmp_path):
    with FakeOpenAI(lambda req: verdict(4)) as server:
        item = judge_item(scale={"min": 1, "max": 5, "pass": 4}, panel={"samples": 3})
        result = grade(make_rubric([item]), StaticProbe(), TRAJ, judge=make_judge(server, tmp_path))
    assert len(server.requests) == 3 and {r["temperature"] for r in server.requests} == {0.7}
    assert server.requests[0]["response_format"]["json_schema"]["schema"]["properties"]["verdict"][
        "enum"
    ] == [1, 2, 3, 4, 5]
    assert result.items[0].status == "pass" and result.items[0].earned == 3.0  # rating 4 of 1..5 -> 75%
    assert [v.sample for v in result.items[0].verdicts] == [0, 1, 2]


def test_the_policy_model_cannot_judge_itself_unless_forced(tmp_path):
    rubric = make_rubric([judge_item(panel={"models": ["openai/Policy-Model"]})])
    with FakeOpenAI(lambda req: verdict("pass")) as server:
        refused = grade(rubric, StaticProbe(), TRAJ, judge=make_judge(server, tmp_path))
        assert server.requests == []
        forced = grade(rubric, StaticProbe(), TRAJ, judge=make_judge(server, tmp_path, allow_same_model=True))
    # not a crash of the rollout: the item is not graded, the grade says so, the rest is graded as usual
    assert refused.items[0].status == "error" and "is the policy's own model" in refused.items[0].error
    assert refused.incomplete
    assert forced.items[0].status == "pass"


def test_a_penalty_judge_costs_points_when_it_fails(tmp_path):
    with FakeOpenAI(lambda req: verdict("fail")) as server:
        rubric = make_rubric(
            [
                judge_item("rude", points=-3),
                {
                    "id": "x",
                    "description": "d",
                    "points": 2,
                    "kind": "python",
                    "check": "transcript.final_answer_contains",
                    "args": {"text": "sorry"},
                },
            ]
        )
        result = grade(rubric, StaticProbe(), TRAJ, judge=make_judge(server, tmp_path))
    assert result.items[0].earned == -3 and str(result) == "0/2"


@pytest.mark.parametrize(
    ("scores", "rule", "scale", "expected"),
    [
        ([1, 0, 1], "majority", "pass_fail", (1.0, True)),
        ([1, 0], "majority", "pass_fail", (0.0, False)),  # a tie is not a majority
        ([1, 0, 0], "mean", "pass_fail", (1 / 3, False)),
        ([0.25, 0.75, 1.0], "majority", Scale(min=1, max=5, pass_=4), (0.75, True)),
        ([0.25, 0.5, 1.0], "majority", Scale(min=1, max=5, pass_=4), (0.5, False)),
    ],
)
def test_combine_rules(scores, rule, scale, expected):
    verdicts = [Verdict(model="m", sample=i, score=s) for i, s in enumerate(scores)]
    assert combine(verdicts, rule, scale) == pytest.approx(expected)
