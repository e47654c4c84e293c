"""The system prompt and the tool list the policy is given: `prompt: compact` only removes words, still
names every tool with its required arguments, is what the episode records, and is much shorter."""

from __future__ import annotations

import re

import pytest

from core.errors import ConfigError
from core.trajectory import AssistantTurn
from gym.cli.options import harness_settings
from gym.harness import HarnessConfig
from gym.harness.builtin_tools import BUILTIN_TOOLS
from gym.harness.config import LevelLimits
from gym.harness.prompt import offered_tools, system_prompt
from gym.models.store import models_dir
from gym.task_refs import resolve
from gym.tasks import world_of

# An app tool the way an MCP server lists it: annotations everywhere, an argument called `description`.
TICKET_TOOL = {
    "type": "function",
    "function": {
        "name": "desk.open_ticket",
        "description": "Open a support ticket (the customer is told); returns its id.\nExample: ...",
        "parameters": {
            "type": "object",
            "title": "open_ticketArguments",
            "properties": {
                "description": {"type": "string", "title": "Description", "description": "What is wrong."},
                "priority": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
            },
            "required": ["description"],
        },
    },
}
SMOLLM2 = models_dir() / "SmolLM2-135M-Instruct"


def words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text))


def schemas() -> list[dict]:
    return [spec.schema() for spec in BUILTIN_TOOLS.values()] + [TICKET_TOOL]


def annotations(schema: object) -> set[str]:
    """The annotation keywords left anywhere in a schema (property names are not keywords)."""
    if isinstance(schema, list):
        return set().union(*map(annotations, schema)) if schema else set()
    if not isinstance(schema, dict):
        return set()
    found = {k for k in schema if k in ("description", "title", "default")}
    for key, value in schema.items():
        children = value.values() if key in ("properties", "$defs") else [value]
        found |= set().union(*map(annotations, children)) if children else set()
    return found


def test_the_compact_system_prompt_only_removes_words():
    (task,) = resolve(["acme/coworker-question-l0-s0"])  # the database and the chat
    world = world_of(task)
    full, compact = system_prompt(task, world), system_prompt(task, world, "compact")
    assert words(compact) <= words(full) and len(compact) < len(full) / 2
    assert world.agent.chat_username in compact and "db.*" in compact and "chat.*" in compact
    assert system_prompt(task, world, "full") == full
    own = task.model_copy(update={"system_prompt": "You are a test."})
    assert system_prompt(own, world, "compact") == "You are a test."  # a task's own prompt is its own


def test_the_compact_tool_list_keeps_every_tool_and_its_required_arguments_only():
    full = schemas()
    compact = offered_tools(full, "compact")
    assert offered_tools(full, "full") is full
    assert [t["function"]["name"] for t in compact] == [t["function"]["name"] for t in full]
    for before, after in zip(full, compact, strict=True):
        params, kept = before["function"]["parameters"], after["function"]["parameters"]
        assert kept["required"] == params.get("required", [])
        assert list(kept["properties"]) == kept["required"]  # optional arguments are not listed
        assert words(after["function"]["description"]) <= words(before["function"]["description"])
        assert after["function"]["description"]
        assert not annotations(kept)
    ticket = compact[-1]["function"]
    assert ticket["description"] == "Open a support ticket"
    assert ticket["parameters"]["properties"] == {"description": {"type": "string"}}
    assert full[-1]["function"]["parameters"]["properties"]["priority"]  # the input was not changed


def test_the_setting_is_checked_and_taken_from_the_command_line():
    settings = harness_settings(["prompt=compact", "limits_by_level.0.max_turns=3"])
    assert settings.prompt == "compact" and settings.limits_by_level[0].max_turns == 3
    with pytest.raises(ConfigError, match="prompt"):
        harness_settings(["prompt=short"])


def test_a_level_set_in_a_file_and_overridden_on_the_command_line_is_one_level():
    from trainer.config import build_config
    from trainer.rollouts.gym_source import GymOptions

    in_file = {"limits_by_level": {0: {"max_turns": 4, "max_new_tokens": 256}}}
    config = build_config(
        {"model": {"path": "m"}, "rollout": {"options": {"harness": in_file}}},
        ["rollout.options.harness.limits_by_level.0.max_turns=2"],
    )
    caps = GymOptions.model_validate(config.rollout.options).harness.limits_by_level
    assert caps == {0: LevelLimits(max_turns=2, max_new_tokens=256)}


class Recorder:
    """Answers at once, keeping what it was shown."""

    name = "recorder"

    def __init__(self) -> None:
        self.shown: tuple[list, list] | None = None

    async def next(self, messages, tools):
        self.shown = (list(messages), list(tools))
        return AssistantTurn(content="done", finish_reason="stop")


@pytest.mark.docker
@pytest.mark.model
async def test_a_level0_turn_in_the_compact_prompt_is_much_shorter_and_names_every_tool(docker_image):
    if not SMOLLM2.is_dir():
        pytest.skip(
            f"counts with SmolLM2's tokenizer, not imported at {SMOLLM2}: run `egym models import smollm2`"
        )
    from transformers import AutoTokenizer

    from gym.episode import open_episode
    from gym.policies.chat_render import render_prompt_ids

    tokenizer = AutoTokenizer.from_pretrained(str(SMOLLM2))
    (task,) = resolve(["acme/coworker-question-l0-s0"])
    shown, tokens = {}, {}
    for style in ("full", "compact"):
        recorder = Recorder()
        async with open_episode(task, run_id="pytest-prompt", rollout_id=f"prompt-{style}") as episode:
            trajectory = await episode.play(recorder, HarnessConfig(prompt=style))
        messages, tools = recorder.shown
        assert trajectory.meta["prompt"] == style and trajectory.meta["tool_schemas"] == tools
        assert trajectory.messages[0].content == messages[0].content  # SFT data renders what was shown
        shown[style] = tokenizer.decode(render_prompt_ids(tokenizer, messages, tools))
        tokens[style] = len(render_prompt_ids(tokenizer, messages, tools))
        if style == "full":
            full_tools = tools
    assert tokens["compact"] < 0.6 * tokens["full"], tokens  # the task prompt itself is the same
    names = [t["function"]["name"] for t in full_tools]
    assert any(name.startswith("chat.") for name in names) and any(name.startswith("db.") for name in names)
    for tool in full_tools:
        function = tool["function"]
        (line,) = [ln for ln in shown["compact"].splitlines() if ln.startswith(f"- {function['name']}(")]
        for argument in function["parameters"].get("required", []):
            assert f"{argument}: " in line, (line, argument)
