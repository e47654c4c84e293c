"""Export a run as training data: one row per rollout with prompt, completion and reward.

Columns follow the conversational format TRL, verl and SkyRL read:
- `prompt`: the messages before the agent's first turn (system + task), each
  `{role, content, tool_calls, tool_call_id, name}` in OpenAI chat shape;
- `completion`: every message from the agent's first turn on (assistant turns,
  tool calls with their JSON `arguments` text, tool results);
- `reward`: the rubric's normalized score in [0, 1];
plus `data_source` (verl), `task`, `sample`, `rollout_id`, `run`, `policy`,
`model`, `earned`, `possible`, `passed`, `incomplete`, `stop_reason`, and
`messages` (the whole transcript as JSON text, for anything else).
Failed rollouts (no grade) are skipped; incomplete grades too unless asked.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.errors import ConfigError
from core.trajectory import Message
from gym.store import RolloutRow, Store

FORMATS = ("parquet", "jsonl")


def _message(m: Message) -> dict[str, Any]:
    return {
        "role": m.role,
        "content": m.content,
        "tool_calls": [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in m.tool_calls
        ],
        "tool_call_id": m.tool_call_id,
        "name": m.name,
    }


def split_prompt(messages: list[Message]) -> tuple[list[Message], list[Message]]:
    """(prompt, completion): the completion starts at the first assistant message."""
    first = next((i for i, m in enumerate(messages) if m.role == "assistant"), len(messages))
    return messages[:first], messages[first:]


def rollout_row(run_policy: str, row: RolloutRow) -> dict[str, Any] | None:
    trajectory = row.trajectory_model()
    if trajectory is None or row.reward is None:
        return None
    prompt, completion = split_prompt(trajectory.messages)
    return {
        "prompt": [_message(m) for m in prompt],
        "completion": [_message(m) for m in completion],
        "reward": float(row.reward),
        "data_source": f"egym/{row.task.split('/')[0]}",
        "task": row.task,
        "sample": row.sample,
        "rollout_id": row.id,
        "run": row.run_id,
        "policy": trajectory.policy or run_policy,
        "model": trajectory.model,
        "earned": float(row.earned or 0.0),
        "possible": int(row.possible or 0),
        "passed": bool(row.passed),
        "incomplete": bool(row.incomplete),
        "stop_reason": row.stop_reason,
        "messages": json.dumps([m.to_openai() for m in trajectory.messages]),
    }


def export_rows(store: Store, run_id: str, *, include_incomplete: bool = False) -> list[dict[str, Any]]:
    run = store.get_run(run_id)
    rows = []
    for row in store.list_rollouts(run_id, status="done"):
        if row.incomplete and not include_incomplete:
            continue
        record = rollout_row(run.policy, row)
        if record is not None:
            rows.append(record)
    return rows


def export_run(
    store: Store,
    run_id: str,
    *,
    format: str = "parquet",
    out: str | Path | None = None,
    include_incomplete: bool = False,
) -> tuple[Path, int]:
    """Write the run's rollouts to `out` (default .egym/exports/RUN.FORMAT); returns (path, rows written)."""
    if format not in FORMATS:
        raise ConfigError(f"--format {format}: expected one of {', '.join(FORMATS)}")
    rows = export_rows(store, run_id, include_incomplete=include_incomplete)
    path = Path(out) if out else Path(".egym") / "exports" / f"{run_id}.{format}"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    if format == "jsonl":
        tmp.write_text("".join(json.dumps(r) + "\n" for r in rows))
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist(rows, schema=arrow_schema()), tmp)
    tmp.replace(path)  # a reader never sees a half-written file
    return path, len(rows)


def arrow_schema():
    """The Parquet schema (built lazily so pyarrow is imported only when exporting)."""
    import pyarrow as pa

    call = pa.struct(
        [
            ("id", pa.string()),
            ("type", pa.string()),
            ("function", pa.struct([("name", pa.string()), ("arguments", pa.string())])),
        ]
    )
    message = pa.struct(
        [
            ("role", pa.string()),
            ("content", pa.string()),
            ("tool_calls", pa.list_(call)),
            ("tool_call_id", pa.string()),
            ("name", pa.string()),
        ]
    )
    return pa.schema(
        [
            ("prompt", pa.list_(message)),
            ("completion", pa.list_(message)),
            ("reward", pa.float64()),
            ("data_source", pa.string()),
            ("task", pa.string()),
            ("sample", pa.int64()),
            ("rollout_id", pa.string()),
            ("run", pa.string()),
            ("policy", pa.string()),
            ("model", pa.string()),
            ("earned", pa.float64()),
            ("possible", pa.int64()),
            ("passed", pa.bool_()),
            ("incomplete", pa.bool_()),
            ("stop_reason", pa.string()),
            ("messages", pa.string()),
        ]
    )
