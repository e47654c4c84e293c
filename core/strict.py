"""The base of every pydantic model that crosses a file or process boundary (task.yaml, rubric
JSON, trajectories, grades, wire payloads, component settings): an unknown key is an error, not a
silent default.

    class Limits(StrictModel):
        max_turns: int = 20

Models that need more say so in their class line (`class Task(StrictModel, allow_inf_nan=False)`);
pydantic merges it with this configuration.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    """A pydantic model that refuses keys it does not declare."""

    model_config = ConfigDict(extra="forbid")
