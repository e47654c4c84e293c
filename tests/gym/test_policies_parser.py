"""The tool-call parser: labelled real outputs, every format models emit, and properties that must always hold.

tests/gym/fixtures/toolcalls.jsonl holds raw completions, each labelled with the
calls it intends: SmolLM2-135M-Instruct's own outputs (sampled here, with and
without tool_choice="first") and examples of the Hermes/Qwen, Llama 3, Mistral,
JSON-list and fenced formats. `malformed: 1` marks an attempted call that cannot
be read: the parser must return it with an error, not drop it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gym.policies.toolcall_parser import parse_tool_calls

FIXTURES = [json.loads(line) for line in (Path(__file__).parent / "fixtures" / "toolcalls.jsonl").open()]
NAMES = ["bash", "db.query", "chat.post_message", "read", "office.read_sheet"]


def recovered(case: dict) -> bool:
    """Whether the parser read the labelled intent: the same calls, no call, or one flagged malformed call."""
    _, calls = parse_tool_calls(case["text"], tool_names=case["tools"])
    if case.get("malformed"):
        return len(calls) == 1 and calls[0].error is not None
    got = [(c.name, json.loads(c.arguments)) for c in calls if c.error is None]
    return got == [(c["name"], c["arguments"]) for c in case["calls"]] and all(c.error is None for c in calls)


def test_labelled_outputs_are_recovered():
    misses = [case["text"][:120] for case in FIXTURES if not recovered(case)]
    rate = 1 - len(misses) / len(FIXTURES)
    assert len(FIXTURES) >= 60 and {c["source"].split(" ")[0] for c in FIXTURES} >= {
        "smollm2-135m",
        "hermes",
        "llama3",
        "mistral-v3",
        "mistral-v11",
        "json-list",
        "fenced",
        "answer",
    }
    assert rate >= 0.95, misses


@pytest.mark.parametrize("case", FIXTURES, ids=lambda c: c["source"])
def test_each_labelled_output(case):
    assert recovered(case)


def test_text_around_calls_is_kept_as_content():
    content, calls = parse_tool_calls(
        'Let me look.\n<tool_call>{"name": "bash", "arguments": {"command": "ls"}}'
        "</tool_call>\nThen I answer.",
        "t",
    )
    assert content == "Let me look.\n\nThen I answer."
    assert [(c.id, c.name) for c in calls] == [("t_0", "bash")]


def test_malformed_call_says_what_is_wrong_and_is_not_run():
    _, (call,) = parse_tool_calls('<tool_call>{"name": "bash", "arguments": {"command": "ls"</tool_call>')
    assert call.name == "bash" and "invalid JSON" in call.error
    with pytest.raises(ValueError, match="could not be read: invalid JSON"):
        call.parsed_arguments()


def test_json_outside_markers_is_a_call_only_when_it_names_a_tool():
    assert parse_tool_calls('{"name": "Globex", "total": 5}', tool_names=NAMES)[1] == []
    assert (
        parse_tool_calls('{"name": "bash", "parameters": {"command": "ls"}}', tool_names=NAMES)[1][0].name
        == "bash"
    )
    assert parse_tool_calls('{"name": "bash", "parameters": {"command": "ls"}}')[1] == []  # no tools offered


# -- properties ------------------------------------------------------------------

ARGUMENT = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
CALL = st.tuples(
    st.sampled_from(NAMES), st.dictionaries(st.text(min_size=1, max_size=10), ARGUMENT, max_size=4)
)
# prose that cannot itself open a call or a JSON value
NOISE = st.text(
    alphabet=st.characters(blacklist_characters='{}[]<`\\"', blacklist_categories=("Cs",)), max_size=60
)
FORMATS = {
    "hermes": lambda calls: "".join(
        f"<tool_call>{json.dumps({'name': n, 'arguments': a})}</tool_call>" for n, a in calls
    ),
    "smollm2": lambda calls: (
        f"<tool_call>{json.dumps([{'name': n, 'arguments': a} for n, a in calls])}</tool_call>"
    ),
    "mistral": lambda calls: "[TOOL_CALLS] " + json.dumps([{"name": n, "arguments": a} for n, a in calls]),
    "llama3": lambda calls: " ; ".join(json.dumps({"name": n, "parameters": a}) for n, a in calls),
    "list": lambda calls: json.dumps([{"name": n, "arguments": a} for n, a in calls]),
}


@settings(max_examples=300, deadline=None)
@given(
    calls=st.lists(CALL, min_size=1, max_size=3),
    fmt=st.sampled_from(sorted(FORMATS)),
    before=NOISE,
    after=NOISE,
)
def test_any_valid_call_embedded_in_noise_is_recovered(calls, fmt, before, after):
    text = f"{before}\n{FORMATS[fmt](calls)}\n{after}"
    _, found = parse_tool_calls(text, tool_names=NAMES)
    assert [(c.name, json.loads(c.arguments)) for c in found] == calls
    assert all(c.error is None for c in found)


@settings(max_examples=500, deadline=None)
@given(text=st.text(max_size=400) | st.text(alphabet="{}[]<>\"':,tool_call/ namebash", max_size=400))
def test_no_input_raises(text):
    content, calls = parse_tool_calls(text, tool_names=NAMES)
    assert isinstance(content, str)
    for call in calls:
        assert call.error is not None or isinstance(call.parsed_arguments(), dict)


@pytest.mark.slow
def test_deep_nesting_and_huge_input_do_not_raise():
    assert parse_tool_calls("[" * 100_000)[1] == []
    content, calls = parse_tool_calls("<tool_call>" + "[" * 5000 + "</tool_call>")
    assert len(calls) == 1 and calls[0].error
    assert parse_tool_calls("{" * 300_000, tool_names=NAMES)[1] == []
