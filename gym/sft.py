"""Supervised fine-tuning data from the gym: each assistant turn as the local policy would see and write it.

    egym sft-data acme/product-price acme/invoice-status --levels 0 --seeds 0-199 --model smollm2 --out .egym/sft/l0

Where the turns come from:
- the oracle, replayed on train-split tasks in real sandboxes (an ordinary batch run, so it
  resumes after a crash and its rollouts are in the run store);
- and/or stored rollouts of any policy that scored at least `min_score` (rejection sampling).

Each assistant turn is one example: the prompt the `hf` policy would have been given (system
prompt, tool list, history, the model's chat template, the generation prompt; rendered by
gym.policies.chat_render, the same code the policy uses) and the completion it should write,
as text and as token ids. Only the completion is trained on. Examples are deduplicated by
their text.

No leakage: only train-split tasks are used (a `test` family is test at every seed; a train
family's val and test instances are dropped), checked again when writing, and every example
records the task it came from.

Written to `<out>/`: `data.jsonl` and `data.parquet` (columns `prompt` and `completion`, the
prompt-completion format TRL's SFTTrainer reads as is, plus `prompt_ids`, `completion_ids`,
`task`, `source`, `score`, `turn`) and `manifest.json` (the tokenizer, a fingerprint of its
chat template, tool format and harness prompt setting, the tasks, what was skipped and why).

The prompt setting (`-H prompt=compact`, gym.harness.prompt) shapes every prompt: the oracle plays
with it, only stored rollouts made with it are taken, and the fingerprint covers it, so `egym sft`
refuses data made with another setting than its own `prompt`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from core.errors import ConfigError
from core.trajectory import Trajectory
from gym.harness.config import HarnessConfig
from gym.harness.prompt import PromptStyle, prompt_fingerprint
from gym.policies.chat_render import (
    CALL_CLOSE,
    TOOLS_HEADER,
    native_tools,
    render_prompt_ids,
    template_messages,
    tools_in_prompt,
)
from gym.tasks import Task

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Example:
    task: str
    source: str  # "oracle" or "run:<id>"
    score: float
    turn: int
    prompt: str
    completion: str
    prompt_ids: list[int]
    completion_ids: list[int]

    @property
    def key(self) -> str:
        return hashlib.sha256((self.prompt + "\0" + self.completion).encode()).hexdigest()


@dataclass
class Collected:
    examples: list[Example] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # task or rollout -> why it gave no examples
    duplicates: int = 0


def format_id(tokenizer: Any, prompt: PromptStyle = "full") -> str:
    """What the rendering depends on: the chat template, egym's tool format and the harness's prompt
    setting. A dataset is for one format."""
    template = tokenizer.chat_template
    text = json.dumps(template, sort_keys=True) if isinstance(template, dict) else str(template or "")
    rendering = text + TOOLS_HEADER + CALL_CLOSE + prompt_fingerprint(prompt)
    return hashlib.sha256(rendering.encode()).hexdigest()[:16]


def train_only(tasks: Iterable[Task]) -> tuple[list[Task], list[Task]]:
    """(train-split tasks, the others): nothing from val or test, nor from a held-out family, is trained on."""
    tasks = list(tasks)
    return [t for t in tasks if t.split == "train"], [t for t in tasks if t.split != "train"]


def _render(tokenizer: Any, messages: list[Any], tools: list[dict[str, Any]], *, generation: bool) -> str:
    """The text render_prompt_ids tokenizes (generation=True), or the conversation with its last turn."""
    if tools and not native_tools(tokenizer):
        rendered, tools = tools_in_prompt(messages, tools), []
    else:
        rendered = template_messages(messages)
    return tokenizer.apply_chat_template(
        rendered, tools=tools or None, tokenize=False, add_generation_prompt=generation
    )


def examples_from(trajectory: Trajectory, tokenizer: Any, *, source: str, score: float) -> list[Example]:
    """One example per assistant turn of `trajectory` (which must carry its tool schemas)."""
    tools = trajectory.meta.get("tool_schemas")
    if tools is None:
        raise ConfigError(
            f"{trajectory.task}: the rollout has no tool schemas (recorded since this version); run it again"
        )
    out = []
    for index, message in enumerate(trajectory.messages):
        if message.role != "assistant":
            continue
        history = trajectory.messages[:index]
        prompt = _render(tokenizer, history, tools, generation=True)
        whole = _render(tokenizer, [*history, message], tools, generation=False)
        if not whole.startswith(prompt):
            raise ConfigError(
                "the chat template does not render a conversation as a prefix of its continuation"
            )
        completion = whole[len(prompt) :]
        # Up to where the policy stops: the end of a call (a stop string) or the end-of-turn token.
        if message.tool_calls and CALL_CLOSE in completion:
            completion = completion[: completion.index(CALL_CLOSE) + len(CALL_CLOSE)]
        elif tokenizer.eos_token and tokenizer.eos_token in completion:
            completion = completion[: completion.index(tokenizer.eos_token) + len(tokenizer.eos_token)]
        out.append(
            Example(
                task=trajectory.task,
                source=source,
                score=score,
                turn=len(out),
                prompt=prompt,
                completion=completion,
                prompt_ids=render_prompt_ids(tokenizer, history, tools),
                completion_ids=list(tokenizer(completion, add_special_tokens=False)["input_ids"]),
            )
        )
    return out


def below_min_score(row: Any, min_score: float) -> str | None:
    """Why a stored rollout's grade keeps it out of the data at `min_score`; None when its grade qualifies."""
    if row.status != "done" or row.reward is None:
        return f"the rollout {row.status}: {(row.error or '').splitlines()[0] if row.error else 'no grade'}"
    if row.incomplete or row.reward < min_score:
        return "incomplete grade" if row.incomplete else f"scored {row.reward:.0%} < {min_score:.0%}"
    return None


def add_rollout(
    collected: Collected, seen: set[str], trajectory: Trajectory, tokenizer: Any, *, source: str, score: float
) -> None:
    for example in examples_from(trajectory, tokenizer, source=source, score=score):
        if example.key in seen:
            collected.duplicates += 1
            continue
        seen.add(example.key)
        collected.examples.append(example)


def write_dataset(out: Path, collected: Collected, manifest: dict[str, Any]) -> Path:
    """data.jsonl, data.parquet and manifest.json under `out` (each written whole, then renamed)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out.mkdir(parents=True, exist_ok=True)
    rows = [asdict(e) for e in collected.examples]
    lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    _replace(out / "data.jsonl", lines.encode())
    table = pa.Table.from_pylist(rows) if rows else pa.table({k: [] for k in Example.__dataclass_fields__})
    pq.write_table(table, out / "data.parquet.tmp")
    (out / "data.parquet.tmp").replace(out / "data.parquet")
    full = {
        "schema": SCHEMA_VERSION,
        **manifest,
        "examples": len(rows),
        "tasks": sorted({e.task for e in collected.examples}),
        "duplicates_dropped": collected.duplicates,
        "skipped": collected.skipped,
    }
    _replace(out / "manifest.json", (json.dumps(full, indent=1) + "\n").encode())
    return out


def read_dataset(path: Path, tokenizer: Any, prompt: PromptStyle = "full") -> list[dict[str, Any]]:
    """The examples of a dataset folder, refused (one line) when rendered for another chat template, tool
    format or prompt setting."""
    manifest_file = path / "manifest.json"
    if not manifest_file.is_file():
        raise ConfigError(f"{path}: no manifest.json; make the data with `egym sft-data`")
    manifest = json.loads(manifest_file.read_text())
    made_with = manifest.get("prompt", "full")  # data from before the setting existed is full
    if made_with != prompt:
        raise ConfigError(
            f"{path}: made with the {made_with} prompt (harness prompt={made_with}), not the {prompt} one; "
            f"set prompt: {made_with} in the SFT config, or make the data again with -H prompt={prompt}"
        )
    expected = format_id(tokenizer, prompt)
    if manifest.get("format") != expected:
        raise ConfigError(
            f"{path}: rendered for {manifest.get('tokenizer')!r} (format {manifest.get('format')}), not for this "
            f"model's chat template and tool format ({expected}); make the data again with --model"
        )
    leaked = [t for t in manifest.get("splits", {}).items() if t[1] != "train"]
    if leaked:
        raise ConfigError(f"{path}: holds non-train tasks {leaked[:3]}; it cannot be trained on")
    return [json.loads(line) for line in (path / "data.jsonl").read_text().splitlines() if line.strip()]


def _replace(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(path)


async def collect(
    store: Any,
    tasks: list[Task],
    tokenizer: Any,
    *,
    oracle: bool = True,
    runs: Iterable[str] = (),
    min_score: float = 1.0,
    concurrency: int = 2,
    progress: Any = None,
    harness: HarnessConfig | None = None,
) -> Collected:
    """Examples from the oracle on the train-split `tasks` and from stored `runs` scoring >= `min_score`.

    The oracle plays under `harness`; stored rollouts count only if made with its prompt setting."""
    from gym.batch import BatchRequest, run_batch
    from gym.batch.executors import make_executor

    train, held_out = train_only(tasks)
    collected = Collected()
    for task in held_out:
        collected.skipped[task.key] = f"in the {task.split} split: never trained on"
    allowed = {t.key for t in train}
    harness = harness or HarnessConfig()
    seen: set[str] = set()

    def take(row: Any, source: str) -> None:
        if row.task not in allowed:
            collected.skipped[f"{source}/{row.id}"] = (
                f"{row.task} is not a train-split task of the given tasks"
            )
        elif (why := below_min_score(row, min_score)) is not None:
            collected.skipped[f"{source}/{row.task}"] = why
        else:
            trajectory = row.trajectory_model()
            if trajectory is None or "tool_schemas" not in trajectory.meta:
                collected.skipped[f"{source}/{row.task}"] = "stored before rollouts kept their tool schemas"
            elif (made_with := trajectory.meta.get("prompt", "full")) != harness.prompt:
                collected.skipped[f"{source}/{row.task}"] = (
                    f"played with the {made_with} prompt, not {harness.prompt}"
                )
            else:
                add_rollout(collected, seen, trajectory, tokenizer, source=source, score=row.reward)

    if oracle and train:
        executor = make_executor("local")
        try:
            req = BatchRequest(
                tasks=train, policy="oracle", concurrency=concurrency, kind="sft-data", harness=harness
            )
            result = await run_batch(store, req, executor, progress)
        finally:
            executor.close()
        for row in result.rows:
            take(row, "oracle")
    for run_id in runs:
        for row in store.list_rollouts(run_id):
            take(row, f"run:{run_id}")
    return collected
