"""The bundled real model (SmolLM2-135M-Instruct) on this CPU: generation throughput, rollouts, tool calls.

1. Engine throughput: the prompt of a real task (system prompt, tool list, task),
   128 new tokens per request, 1, 2 and 4 requests at once, with 1 and 2 torch
   threads; tokens/s counts generated tokens over wall time after a warm-up (the
   shared prompt is read once, then reused from the prefix cache).
2. The reference, in the same run: llama.cpp (llama-cpp-python, built from PyPI
   into .egym/bench-llama on first use) on the same GGUF file, same prompt text,
   128 tokens, one sequence (its Python API decodes one sequence at a time).
3. Rollouts through real sandboxes on the shortest bundled tasks, at concurrency
   1, 2 and 4: rollouts/min, peak RSS of this process (the engine lives in it).
4. Tool calls: the share of rollouts that made at least one tool call that ran
   without error (not an error result, no non-zero bash exit code), without help
   (tool_choice auto), with the grammar on calls (constrained), and with the first
   turn forced to be a call (tool_choice first).

    .venv/bin/python bench/bench_model.py [--rollouts 12] [--skip-llama]   -> bench/results/model.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import write  # noqa: E402
from gym.batch import BatchRequest, run_batch  # noqa: E402
from gym.batch.executors import LocalExecutor  # noqa: E402
from gym.models.engine import Engine, default_threads  # noqa: E402
from gym.models.sampling import SamplingParams  # noqa: E402
from gym.models.store import bundled_gguf, resolve_model  # noqa: E402
from gym.store import Store  # noqa: E402
from gym.tasks import load_task  # noqa: E402

SHORT_TASKS = ["collections-list", "march-sla-breaches", "easter-coverage"]
NEW_TOKENS = 128
LIMITS = {"max_new_tokens": 256}  # per turn in the rollouts (the policy's default is 512)
LLAMA_VENV = ROOT / ".egym" / "bench-llama"
LLAMA_SCRIPT = """
import json, sys, time
from llama_cpp import Llama
gguf, prompt, threads, new = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
llm = Llama(gguf, n_ctx=8192, n_threads=threads, n_threads_batch=threads, verbose=False)
tokens = llm.tokenize(prompt.encode(), special=True)
started = time.perf_counter(); llm.eval(tokens); prefill = time.perf_counter() - started
runs = []
for seed in range(3):
    llm.reset(); llm.eval(tokens)
    started, n = time.perf_counter(), 0
    for _ in llm.generate(tokens, temp=0.7, top_p=0.95, reset=False):
        n += 1
        if n >= new:
            break
    runs.append(n / (time.perf_counter() - started))
print(json.dumps({"prompt_tokens": len(tokens), "prefill_tokens_per_s": len(tokens) / prefill,
                  "decode_tokens_per_s": sorted(runs)[1]}))
"""


def task_prompt(engine: Engine) -> tuple[list[int], str]:
    """The first prompt of a real episode (collections-list), as token ids and text."""
    from core.trajectory import Message
    from gym.harness.builtin_tools import BUILTIN_TOOLS
    from gym.harness.prompt import system_prompt
    from gym.policies.chat_render import render_prompt_ids
    from gym.tasks import world_of

    task = load_task(ROOT / "tasks" / "acme" / SHORT_TASKS[0])
    messages = [
        Message(role="system", content=system_prompt(task, world_of(task))),
        Message(role="user", content=task.prompt),
    ]
    ids = render_prompt_ids(engine.tokenizer, messages, [spec.schema() for spec in BUILTIN_TOOLS.values()])
    return ids, engine.tokenizer.decode(ids)


def engine_throughput(engine: Engine, prompt: list[int]) -> dict[str, float]:
    params = SamplingParams(temperature=0.7, top_p=0.95, max_new_tokens=NEW_TOKENS)
    engine.generate(prompt, params.model_copy(update={"max_new_tokens": 1}))  # read the prompt once
    out = {}
    for concurrency in (1, 2, 4):
        started = time.perf_counter()
        requests = [engine.submit(prompt, params, seed=100 + i) for i in range(concurrency)]
        generated = sum(len(r.future.result().token_ids) for r in requests)
        out[f"c{concurrency}"] = round(generated / (time.perf_counter() - started), 2)
    return out


def llama_reference(prompt_text: str) -> dict[str, object]:
    python = LLAMA_VENV / "bin" / "python"
    if not python.exists():
        print("building llama-cpp-python into .egym/bench-llama (several minutes, once)", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(LLAMA_VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "llama-cpp-python"], check=True)
    version = subprocess.run(
        [str(python), "-c", "import llama_cpp; print(llama_cpp.__version__)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    out: dict[str, object] = {"llama_cpp_python": version}
    for threads in (1, 2):
        result = subprocess.run(
            [
                str(python),
                "-c",
                LLAMA_SCRIPT,
                str(bundled_gguf("smollm2")),
                prompt_text,
                str(threads),
                str(NEW_TOKENS),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        out[f"threads{threads}"] = json.loads(result.stdout.strip().splitlines()[-1])
    return out


def tool_call_ran(row) -> bool:
    """At least one call that was read, ran, and did not fail (bash: exit code 0)."""
    trajectory = row.trajectory_model()
    return bool(trajectory and trajectory.working_call_turns)


def made_call(row) -> bool:
    trajectory = row.trajectory_model()
    return bool(trajectory and any(c.error is None for c in trajectory.tool_calls()))


async def rollouts(
    store: Store, concurrency: int, samples: int, options: dict, name: str
) -> dict[str, object]:
    tasks = [load_task(ROOT / "tasks" / "acme" / t) for t in SHORT_TASKS]
    req = BatchRequest(
        tasks=tasks,
        policy="hf",
        model="smollm2",
        samples=samples,
        concurrency=concurrency,
        run_id=name,
        policy_options=options,
        harness={"max_turns": 4},
    )
    started = time.perf_counter()
    result = await run_batch(store, req, LocalExecutor())
    minutes = (time.perf_counter() - started) / 60
    rows = [r for r in result.rows if r.status == "done"]
    return {
        "rollouts": len(result.rows),
        "failed": result.failed,
        "rollouts_per_min": round(len(result.rows) / minutes, 2),
        "made_a_well_formed_call": round(sum(map(made_call, rows)) / max(len(rows), 1), 3),
        "a_call_ran_without_error": round(sum(map(tool_call_ran, rows)) / max(len(rows), 1), 3),
        "mean_score": round(sum(r.reward or 0 for r in rows) / max(len(rows), 1), 4),
        "parse_errors": sum(r.trajectory_model().parse_errors for r in rows if r.trajectory_model()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rollouts", type=int, default=12, help="Rollouts per setting (a multiple of 3).")
    parser.add_argument("--skip-llama", action="store_true", help="Leave out the llama.cpp reference.")
    args = parser.parse_args()
    samples = max(1, args.rollouts // len(SHORT_TASKS))

    result: dict[str, object] = {
        "model": "SmolLM2-135M-Instruct (bundled GGUF Q4_1, dequantised to float32)",
        "new_tokens_per_request": NEW_TOKENS,
    }
    engine = Engine.shared(str(resolve_model("smollm2")))
    prompt, text = task_prompt(engine)
    result["prompt_tokens"] = len(prompt)
    throughput = {}
    for threads in (1, 2):
        engine.threads = threads
        throughput[f"threads{threads}"] = engine_throughput(engine, prompt)
        print(f"engine, {threads} thread(s): {throughput[f'threads{threads}']} tokens/s", flush=True)
    result["engine_tokens_per_s"] = throughput
    if not args.skip_llama:
        reference = llama_reference(text)
        result["llama_cpp"] = reference
        best_llama = max(reference[f"threads{t}"]["decode_tokens_per_s"] for t in (1, 2))
        ours = max(throughput[f"threads{t}"]["c4"] for t in (1, 2))
        result["ratio_c4_to_llama_cpp"] = round(ours / best_llama, 3)
        print(
            f"llama.cpp: {best_llama:.1f} tokens/s; ours at c=4: {ours:.1f} (ratio {ours / best_llama:.2f})"
        )

    engine.threads = default_threads()
    result["threads_default"] = engine.threads
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(str(Path(tmp) / "bench.db"))
        runs = {}
        for concurrency in (1, 2, 4):
            runs[f"c{concurrency}"] = asyncio.run(
                rollouts(
                    store,
                    concurrency,
                    samples,
                    {"tool_choice": "first", "seed": 0, **LIMITS},
                    f"bench-model-c{concurrency}",
                )
            )
            print(f"rollouts c={concurrency}: {runs[f'c{concurrency}']}", flush=True)
        result["rollouts_tool_choice_first"] = runs
        calls = {}
        for label, options in (
            ("auto", {}),
            ("constrained", {"constrained": True}),
            ("first", {"tool_choice": "first"}),
        ):
            calls[label] = asyncio.run(
                rollouts(store, 4, samples, {**options, "seed": 1, **LIMITS}, f"bench-model-{label}")
            )
            print(f"tool calls, {label}: {calls[label]}", flush=True)
        result["tool_calls_by_setting"] = calls
    result["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    write("model", result)


if __name__ == "__main__":
    main()
