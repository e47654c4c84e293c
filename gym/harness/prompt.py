"""The system prompt: who the agent is, when and where it works, what it can use, how to finish.

`prompt: compact` (a harness setting) is for small models, whose turns are mostly prompt: a short
system prompt and a short tool list (each tool's first clause and its required arguments). Both
are cut from the full ones, word for word, so nothing is added that could hint at an answer.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from gym.tasks import Task, World
from mcp_wrappers.apps import app, apps

PromptStyle = Literal["full", "compact"]

TEMPLATE = """\
You are {name}, {title} at {company}. Your e-mail is {email}.
{description}
Today is {date}. You work on your company workstation through tools; every command runs there as the \
Linux user `agent`. Your working files are in /workspace.

Apps available to you:
{apps}

Built-in tools: `bash` (a persistent shell: `cd` and exported variables carry over), `read`, `write` and \
`edit` for text files, `glob` and `grep` to find files and text, `todo` to keep a task list.

Work carefully and check your results; act only through the tools, as a diligent employee would. \
When the work is done, reply with a short final message (what you did, and any answer you were asked for) \
without calling a tool: that ends the session. If something cannot be done, say so in that final message."""

COMPACT_TEMPLATE = """\
You are {name}, {title} at {company}. Your e-mail is {email}. Today is {date}. \
Your working files are in /workspace.
Apps:
{apps}
When the work is done, reply with a short final message (any answer you were asked for) \
without calling a tool."""

_TEMPLATES = {"full": TEMPLATE, "compact": COMPACT_TEMPLATE}
# Said only when the task has coworkers (gym/harness/coworkers.py), so other tasks' prompts are unchanged.
COWORKERS_LINE = {
    "full": "- Colleagues answer chat messages a few steps later: read the conversation again for their reply.",
    "compact": "- Colleagues answer chat messages a few steps later.",
}
_ANNOTATIONS = ("description", "title", "default", "examples")


def app_line(name: str, chat_username: str, style: PromptStyle) -> str:
    """App `name`'s line in the list of apps (its app.toml's `prompt` or `prompt_compact`)."""
    spec = app(name)
    return "- " + (spec.prompt if style == "full" else spec.prompt_compact).format(
        chat_username=chat_username
    )


def system_prompt(task: Task, world: World, style: PromptStyle = "full") -> str:
    """The task's own system prompt when it sets one, else the default built from the world."""
    if task.system_prompt:
        return task.system_prompt
    agent = world.agent
    apps = "\n".join(app_line(name, agent.chat_username, style) for name in task.apps)
    if task.coworkers:
        apps += "\n" + COWORKERS_LINE[style]
    return _TEMPLATES[style].format(
        name=agent.name,
        title=agent.title,
        company=world.company,
        email=agent.email,
        description=world.description.strip(),
        date=world.date.strftime("%A, %d %B %Y"),
        apps=apps or "- (none for this task: use the files in /workspace)",
    )


def offered_tools(schemas: list[dict[str, Any]], style: PromptStyle = "full") -> list[dict[str, Any]]:
    """The tool schemas the policy is given: as listed, or compact (the first clause of each
    description, only the required arguments, no annotations). The tools themselves still take
    every argument they accept."""
    if style == "full":
        return schemas
    out = []
    for schema in schemas:
        function = schema["function"]
        params = function.get("parameters") or {}
        required = list(params.get("required") or [])
        properties = params.get("properties") or {}
        compact = {
            **{k: v for k, v in params.items() if k not in ("properties", "required")},
            "properties": {name: properties[name] for name in required if name in properties},
            "required": required,
        }
        out.append(
            {
                **schema,
                "function": {
                    "name": function["name"],
                    "description": short_description(function.get("description") or ""),
                    "parameters": _bare(compact),
                },
            }
        )
    return out


def short_description(text: str) -> str:
    """A description's first clause, without parentheses: `Show a table's columns (type, ...), keys` ->
    `Show a table's columns`."""
    line = re.sub(r"\s*\([^()]*\)", "", text.strip().split("\n", 1)[0])
    return re.split(r"[.;:,]\s", line, maxsplit=1)[0].strip().rstrip(".;:,")


def prompt_fingerprint(style: PromptStyle) -> str:
    """What a prompt style adds to a rendering's fingerprint (gym.sft.format_id); nothing for the full one,
    so data made before the setting existed keeps its fingerprint."""
    if style == "full":
        return ""
    app_lines = {name: app_line(name, "{chat_username}", style) for name in apps()}
    return f"\0prompt={style}\0{_TEMPLATES[style]}\0{json.dumps(app_lines, sort_keys=True)}"


def _bare(schema: Any) -> Any:
    """A JSON schema without its annotations (descriptions, titles, defaults), walked by keyword, so an
    argument that happens to be called `description` is kept."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _ANNOTATIONS:
            continue
        if key in ("properties", "$defs", "definitions", "patternProperties") and isinstance(value, dict):
            out[key] = {name: _bare(sub) for name, sub in value.items()}
        elif key in ("anyOf", "oneOf", "allOf", "prefixItems") and isinstance(value, list):
            out[key] = [_bare(sub) for sub in value]
        else:
            out[key] = _bare(value) if key in ("items", "additionalProperties", "not") else value
    return out
