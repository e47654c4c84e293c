"""Tools as plain decorated functions: the signature and docstring become the schema (tau2's `@is_tool`).

    @tool
    async def read(env: ToolEnv, path: str, offset: int = 1) -> str:
        '''Read a text file.

        Args:
            path: Absolute path, or relative to /workspace.
            offset: First line to show (1-based).
        '''

The first parameter is always the harness's context object and is not part
of the schema. A tool reports a failure the model should read by raising
`ToolError`; the message becomes an error tool result, never an exception
that ends the episode.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, get_type_hints

from pydantic import BaseModel, Field, ValidationError, create_model

from core.strict import StrictModel
from core.validation import describe_validation_error

if TYPE_CHECKING:
    from gym.harness.builtin_tools import ToolEnv


class ToolError(Exception):
    """A failure the model should see as a tool result (bad path, ambiguous edit, ...)."""


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]
    args_model: type[BaseModel]
    fn: Callable[..., Awaitable[str]]

    def schema(self) -> dict[str, Any]:
        """The OpenAI function-tool schema."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Checked keyword arguments; raises ToolError with a model-readable message."""
        try:
            parsed = self.args_model.model_validate(arguments)
        except ValidationError as exc:
            problems = describe_validation_error(exc, model=self.args_model, most=4)
            raise ToolError(f"invalid arguments for {self.name}: {problems}") from None
        return {name: getattr(parsed, name) for name in type(parsed).model_fields}

    async def __call__(self, env: ToolEnv, arguments: dict[str, Any]) -> str:
        return await self.fn(env, **self.validate(arguments))


def parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Google-style docstring -> (description, {arg: description})."""
    doc = inspect.cleandoc(doc or "")
    head, _, rest = doc.partition("\nArgs:")
    args: dict[str, str] = {}
    current = None
    for line in rest.splitlines():
        match = re.match(r"^\s{2,8}(\w+)\s*(?:\([^)]*\))?:\s*(.*)$", line)
        if match:
            current = match.group(1)
            args[current] = match.group(2).strip()
        elif line.strip() and current:
            if not line.startswith(" "):
                break  # a new section (Returns:, Raises:)
            args[current] += " " + line.strip()
    return head.strip(), args


def _strip_titles(schema: Any) -> Any:
    """pydantic adds a `title` to every property; models do not need them."""
    if isinstance(schema, dict):
        return {k: _strip_titles(v) for k, v in schema.items() if not (k == "title" and isinstance(v, str))}
    if isinstance(schema, list):
        return [_strip_titles(v) for v in schema]
    return schema


def tool(fn: Callable[..., Awaitable[str]]) -> ToolSpec:
    """Turn `async def name(env, arg: type = default, ...) -> str` into a ToolSpec."""
    description, arg_docs = parse_docstring(fn.__doc__ or "")
    hints = get_type_hints(fn)
    fields: dict[str, Any] = {}
    for param in list(inspect.signature(fn).parameters.values())[1:]:
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (hints[param.name], Field(default, description=arg_docs.get(param.name)))
    model = create_model(f"{fn.__name__}_args", __base__=StrictModel, **fields)
    parameters = _strip_titles(model.model_json_schema())
    return ToolSpec(fn.__name__.rstrip("_"), description, parameters, model, fn)
