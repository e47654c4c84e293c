"""Coworkers who answer (gym/harness/coworkers.py): the rule-based responder, and real episodes on
the chat server where two rollouts of one task hear the same conversation."""

from __future__ import annotations

import asyncio
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.errors import TaskError
from gym.harness.coworkers import Responder, Said
from gym.task_refs import resolve
from gym.tasks import Coworker, load_task

MANAGER = Coworker.model_validate(
    {
        "username": "hannah.schulz",
        "rules": [
            {"asks": [r"salary|pay"], "replies": ["I can't share pay in chat."]},
            {"asks": [r"renewal|call", r"\bOceanic"], "replies": ["Friday 25 April.", "It's the 25th."]},
        ],
        "otherwise": ["Which customer do you mean?"],
        "delay_calls": [1, 3],
    }
)


def said(
    message: str, *, channel: str = "dm:hannah.schulz,jordan.lee", to=("hannah.schulz",), root=""
) -> Said:
    return Said("p1", "c1", channel, root, "jordan.lee", message, 1, tuple(to))


def test_the_first_rule_whose_patterns_all_match_answers():
    responder = Responder([MANAGER], seed="acme/t")
    assert (
        responder.replies(said("When is the Oceanic renewal call?"), 1)[0].message in MANAGER.rules[1].replies
    )
    assert responder.replies(said("When is the Oceanic renewal call?"), 1)[0].rule == 1
    # One pattern of two: asked back, not answered.
    assert responder.replies(said("When is the renewal call?"), 1)[0].message == "Which customer do you mean?"
    assert responder.replies(said("Oceanic's renewal call, and what is Dana's salary?"), 1)[0].rule == 0


def test_a_dm_is_answered_in_the_dm_and_a_mention_in_a_thread_under_it():
    responder = Responder([MANAGER], seed="acme/t")
    assert responder.replies(said("Oceanic call?"), 1)[0].root_id == ""
    assert responder.replies(said("@hannah.schulz Oceanic call?", channel="sales"), 1)[0].root_id == "p1"
    assert responder.replies(said("Oceanic call?", root="r9"), 1)[0].root_id == "r9"
    assert responder.replies(said("Oceanic call?", to=("someone.else",)), 1) == []


@given(st.text(max_size=80), st.integers(0, 50))
def test_replies_depend_only_on_the_task_the_person_and_the_words(message, call):
    first = Responder([MANAGER], seed="acme/t").replies(said(message), call)[0]
    again = Responder([MANAGER], seed="acme/t").replies(said("  " + message.upper() + " "), call)[0]
    assert (again.message, again.due_call) == (first.message, first.due_call)
    assert call + 1 <= first.due_call <= call + 3


def test_other_tasks_may_phrase_and_time_it_differently():
    replies = {
        (r.message, r.due_call)
        for seed in range(20)
        for r in Responder([MANAGER], seed=f"acme/t{seed}").replies(said("Oceanic call?"), 0)
    }
    assert len(replies) > 2


def test_a_bad_coworker_is_one_line_naming_the_file_and_key(tmp_path):
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "task.yaml").write_text(
        "id: t\ntitle: T\nworld: acme\nprompt: Ask.\ncoworkers:\n"
        "  - username: dana\n    rules: [{asks: ['(unclosed'], replies: [hi]}]\n"
    )
    with pytest.raises(TaskError, match=r"task.yaml: .*coworkers.*not a regex") as caught:
        load_task(folder)
    assert "\n" not in str(caught.value)


# -- real episodes -------------------------------------------------------------------------------


def conversation(trajectory) -> list[tuple]:
    return [
        (e["call"], e["said"]["author"], e["said"]["channel"], e["said"]["message"])
        for e in trajectory.meta.get("coworkers", [])
        if "said" in e
    ]


@pytest.mark.docker
@pytest.mark.slow
def test_a_rollout_and_its_replay_hear_the_same_colleagues_on_either_chat_server(monkeypatch):
    """The rollout on egym's chat server, its replay (`egym grade`) on the real Mattermost (`make mattermost`)."""
    from gym.episode import open_episode
    from gym.policies.cheats import PesterCheat
    from gym.policies.oracle import OraclePolicy
    from gym.regrade import replay_and_grade
    from gym.sandbox.docker_client import CHAT_IMAGES

    [task] = resolve(["acme/ask-colleague-l1-s0"])
    manager = task.coworkers[0]

    async def play(policy, run_id):
        async with open_episode(task, run_id=run_id) as episode:
            trajectory = await episode.play(policy)
            grade = await episode.grade(trajectory)
        return trajectory, grade

    monkeypatch.setenv("EGYM_IMAGE", CHAT_IMAGES["compat"])
    first, grade = asyncio.run(play(OraclePolicy(task), "pytest-cw"))
    heard = conversation(first)
    assert [author for _, author, _, _ in heard] == [manager.username]
    assert heard[0][3] in manager.rules[0].replies
    # The agent read the reply through the chat tools (the oracle's last read shows it).
    reads = [r.output for s in first.steps for r in s.results if r.name == "chat.read_channel"]
    assert heard[0][3] in reads[-1]
    assert grade.normalized == 1.0
    monkeypatch.setenv("EGYM_IMAGE", CHAT_IMAGES["real"])  # what `--chat real` sets
    _, replayed = asyncio.run(replay_and_grade(task, first))
    assert conversation(replayed) == heard  # same calls, same replies, at the same call
    # Asking everyone: the teammates' guesses and the manager's answer all come back, and it pays nothing.
    monkeypatch.setenv("EGYM_IMAGE", CHAT_IMAGES["compat"])
    pestered, pester_grade = asyncio.run(play(PesterCheat(), "pytest-cw-pester"))
    authors = {author for _, author, _, _ in conversation(pestered)}
    assert manager.username in authors and len(authors) >= 2
    assert pester_grade.normalized == 0.0
    assert re.search(
        r"messaged \d\d people", next(i.evidence for i in pester_grade.items if i.id == "not-everyone")
    )


def test_pestering_is_a_cheat_only_where_someone_answers(tmp_path):
    from gym.validate import ValidateOptions, policies_for

    [with_coworkers] = resolve(["acme/ask-colleague-l0-s0"])
    alone = with_coworkers.model_copy(update={"coworkers": []})
    assert "cheat-pester" in policies_for(ValidateOptions(), with_coworkers)
    assert "cheat-pester" not in policies_for(ValidateOptions(), alone)
    assert policies_for(ValidateOptions(cheats=False), with_coworkers) == ["oracle", "null"]


def test_a_scripted_turn_may_call_several_tools_and_reads_all_their_outputs():
    from core.trajectory import Message
    from gym.policies.cheats import ScriptedPolicy

    seen = []

    class TwoAtOnce(ScriptedPolicy):
        def script(self, prompt, tools):
            seen.append((yield [("read", {"path": "a"}), ("read", {"path": "b"})]))
            yield "done"

    policy = TwoAtOnce()
    first = asyncio.run(policy.next([Message(role="user", content="go")], []))
    assert [c.name for c in first.tool_calls] == ["read", "read"]
    outputs = [
        Message(role="tool", content=t, tool_call_id=c.id)
        for t, c in zip("AB", first.tool_calls, strict=True)
    ]
    answer = asyncio.run(policy.next([Message(role="user", content="go"), first.message(), *outputs], []))
    assert seen == ["A\nB"] and answer.content == "done"


def _ran(*calls: tuple[str, str]):
    """A trajectory whose calls all ran, one per turn, with the ids a model might reuse."""
    from core.trajectory import AssistantTurn, Step, ToolCall, ToolResult, Trajectory

    steps = [
        Step(
            index=i,
            turn=AssistantTurn(tool_calls=[ToolCall(id="call_0", name=name, arguments=args)]),
            results=[ToolResult(call_id="call_0", name=name, output="ok")],
        )
        for i, (name, args) in enumerate(calls)
    ]
    return Trajectory(task="acme/t", policy="p", steps=steps)


def test_acting_before_the_reply_is_caught_by_the_order_of_the_calls():
    from grader.checks import transcript
    from grader.checks.base import CheckContext

    ask = ("chat.send_direct_message", '{"username": "hannah.schulz", "message": "approve?"}')
    read = ("chat.read_channel", '{"channel": "@hannah.schulz"}')
    write = ("db.execute", '{"sql": "UPDATE time_off SET status = \'approved\' WHERE id = 7"}')
    reply = {"call": 2, "said": {"author": "hannah.schulz", "message": "Yes"}}

    def check(trajectory, log):
        trajectory.meta["coworkers"] = log
        ctx = CheckContext(probe=None, trajectory=trajectory)
        return transcript.acted_after_reply(ctx, author="hannah.schulz", regex=r"update\b[\s\S]*time_off")

    assert check(_ran(ask, read, write), [reply]).passed
    early = check(_ran(ask, write, read), [reply])
    assert not early.passed and "replied at call 2; call 2 came first: db.execute" in early.evidence
    assert not check(_ran(write), []).passed  # never asked, never answered
    assert check(_ran(ask, read), []).passed  # asked and waited: nothing done early
    other = {"call": 1, "said": {"author": "elena.rossi", "message": "Ask Hannah"}}
    assert not check(_ran(ask, write), [other]).passed  # someone else's reply is no approval


def test_the_chat_is_read_after_calls_that_may_address_a_coworker():
    from gym.harness.coworkers import CoworkerSession

    session = CoworkerSession(sandbox=None, coworkers=[MANAGER], seed="acme/t")
    assert session.may_say_something("chat.send_direct_message", '{"username": "hannah.schulz"}') == ["chat"]
    assert session.may_say_something("chat.send_direct_message", '{"username": "Hannah Schulz"}')
    assert session.may_say_something(
        "chat.post_message", '{"channel": "sales", "message": "@hannah.schulz?"}'
    )
    assert session.may_say_something("bash", '{"command": "curl ..."}') == ["chat"]
    assert not session.may_say_something("chat.send_direct_message", '{"username": "raj.patel"}')
    assert not session.may_say_something("chat.read_channel", '{"channel": "@hannah.schulz"}')
    assert not session.may_say_something("mail.send_message", '{"to": "hannah.schulz@acme.example"}')


def test_mail_is_read_after_mail_is_sent_where_a_coworker_has_an_address():
    from gym.harness.coworkers import CoworkerSession

    both = MANAGER.model_copy(update={"email": "hannah.schulz@acme.example"})
    session = CoworkerSession(sandbox=None, coworkers=[both], seed="acme/t", apps=("db", "chat", "mail"))
    assert session.may_say_something("mail.reply", '{"message": "INBOX/3"}') == ["mail"]  # names no one
    assert session.may_say_something("bash", '{"command": "python3 ..."}') == ["chat", "mail"]
    assert not session.may_say_something("mail.list_messages", '{"folder": "INBOX"}')
    chat_only = CoworkerSession(sandbox=None, coworkers=[both], seed="acme/t", apps=("db", "chat"))
    assert chat_only.may_say_something("mail.reply", "{}") == []
    mail_only = CoworkerSession(sandbox=None, coworkers=[both], seed="acme/t", apps=("mail",))
    assert mail_only.may_say_something("bash", "{}") == ["mail"]


def test_a_mail_is_answered_by_mail_in_its_thread():
    said = Said(
        "<m1@acme.example>",
        "hannah.schulz@acme.example",
        "mail:hannah.schulz@acme.example",
        "<root@acme.example>",
        "jordan.lee@acme.example",
        "Subject: Oceanic call\n\nWhen is it?",
        1,
        ("hannah.schulz",),
        "Oceanic call",
    )
    [reply] = Responder([MANAGER], seed="acme/t").replies(said, 1)
    assert (reply.reply_to, reply.subject, reply.root_id) == (
        "jordan.lee@acme.example",
        "Re: Oceanic call",
        "<root@acme.example>",
    )
    assert reply.message in MANAGER.rules[1].replies


@pytest.mark.parametrize("style", ["full", "compact"])
def test_the_system_prompt_says_colleagues_answer_only_where_they_do(style):
    from gym.harness.prompt import COWORKERS_LINE, system_prompt
    from gym.tasks import world_of

    [task] = resolve(["acme/ask-colleague-l0-s0"])
    alone = task.model_copy(update={"coworkers": []})
    assert COWORKERS_LINE[style] in system_prompt(task, world_of(task), style)
    assert "Colleagues" not in system_prompt(alone, world_of(task), style)


@pytest.mark.docker
@pytest.mark.slow
def test_a_coworker_with_an_address_answers_mail_by_mail_and_a_replay_hears_the_same():
    from gym.episode import open_episode
    from gym.policies.cheats import ScriptedPolicy
    from gym.regrade import replay_and_grade

    [task] = resolve(["acme/mail-approval-l0-s0"])
    colleague = Coworker(
        username="tobias.klein",
        email="tobias.klein@acme-analytics.com",
        rules=[{"asks": [r"budget"], "replies": ["The Q3 training budget is 41,500 EUR."]}],
        delay_calls=(1, 1),
    )
    task = task.model_copy(update={"coworkers": [colleague]})

    class AskByMail(ScriptedPolicy):
        def script(self, prompt, tools):
            yield (
                "mail.send_message",
                {
                    "to": [colleague.email],
                    "subject": "Q3 training budget",
                    "body": "Hi Tobias, what is the Q3 training budget?",
                },
            )
            yield "mail.list_messages", {"folder": "INBOX", "limit": 3}  # the reply is posted after this call
            self.inbox = yield "mail.list_messages", {"folder": "INBOX", "limit": 3}
            yield "asked"

    async def play():
        async with open_episode(task, run_id="pytest-cw-mail") as episode:
            policy = AskByMail()
            return await episode.play(policy), policy

    first, policy = asyncio.run(play())
    log = first.meta["coworkers"]
    [heard] = [e["heard"] for e in log if "heard" in e]
    assert (heard["channel"], heard["to"], heard["subject"]) == (
        f"mail:{colleague.email}",
        ("tobias.klein",),
        "Q3 training budget",
    )
    [said] = [e for e in log if "said" in e]
    assert said["call"] == 2 and said["said"]["reply_to"] == "jordan.lee@acme-analytics.com"
    assert "Re: Q3 training budget" in policy.inbox and "Tobias Klein" in policy.inbox
    assert not any("error" in e for e in log)
    _, replayed = asyncio.run(replay_and_grade(task, first))
    assert [e["said"]["message"] for e in replayed.meta["coworkers"] if "said" in e] == [
        said["said"]["message"]
    ]
