"""The Hermes/Qwen tool-call parser on crafted model outputs."""

from __future__ import annotations

import json

from gym.policies.toolcall_parser import parse_tool_calls


def test_plain_text_has_no_calls():
    assert parse_tool_calls("All done. The total is 42.") == ("All done. The total is 42.", [])


def test_one_call_with_text_around_it():
    text = 'Let me look.\n<tool_call>\n{"name": "bash", "arguments": {"command": "ls -la"}}\n</tool_call>'
    content, calls = parse_tool_calls(text, "t")
    assert content == "Let me look."
    assert [(c.id, c.name, json.loads(c.arguments)) for c in calls] == [("t_0", "bash", {"command": "ls -la"})]


def test_several_calls_keep_their_order_and_dotted_names():
    text = ('<tool_call>{"name": "db.query", "arguments": {"sql": "select 1"}}</tool_call>'
            '<tool_call>{"name": "chat.post_message", "arguments": "{\\"channel\\": \\"x\\"}"}</tool_call>')
    _, calls = parse_tool_calls(text)
    assert [c.name for c in calls] == ["db.query", "chat.post_message"]
    assert json.loads(calls[1].arguments) == {"channel": "x"}  # arguments given as a JSON string
    assert calls[0].id != calls[1].id


def test_parameters_key_is_accepted():
    _, calls = parse_tool_calls('<tool_call>{"name": "read", "parameters": {"path": "a"}}</tool_call>')
    assert json.loads(calls[0].arguments) == {"path": "a"}


def test_malformed_json_is_kept_for_the_model_to_see():
    _, calls = parse_tool_calls('<tool_call>{"name": "bash", "arguments": {"command": "ls"</tool_call>')
    assert calls[0].name == "bash"
    assert calls[0].arguments == '{"name": "bash", "arguments": {"command": "ls"'
    try:
        calls[0].parsed_arguments()
    except ValueError as exc:
        assert "not valid JSON" in str(exc)
    else:
        raise AssertionError("malformed arguments must not parse")


def test_an_unclosed_block_at_the_end_still_counts():
    content, calls = parse_tool_calls('ok <tool_call>{"name": "glob", "arguments": {"pattern": "*"}}')
    assert content == "ok" and calls[0].name == "glob" and json.loads(calls[0].arguments) == {"pattern": "*"}


def test_a_call_without_a_name_becomes_an_unknown_tool():
    _, calls = parse_tool_calls("<tool_call>just words</tool_call>")
    assert calls[0].name == "" and calls[0].arguments == "just words"
