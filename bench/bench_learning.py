"""Does GRPO learn here? Three training seeds against rejection-sampling fine-tuning and more SFT at the
same compute, from the SFT model of bench_bands.py, on an evaluation whose own noise is measured.

    nohup nice -n 15 .venv/bin/python bench/bench_learning.py > .egym/bench-learning.log 2>&1 &
        -> bench/results/learning.json (rewritten as stages land; `complete: false` until the end)

Every stage is the user's own command, run as a whole process and journalled in
.egym/bench-learning/stages.json, so a rerun goes on where a stop left it (a training run resumes
from its last checkpoint, a batch from its stored rollouts). The recipe was fixed before any run
(no val-split search here: one recipe, said below), and no stage reads test results to choose
anything: the last checkpoint of each run is evaluated.

- start: SmolLM2-135M after bench_bands.py's SFT (oracle turns of train level 0, compact prompt).
- evaluation: the held-out level-0 episodes of bench_warmstart.py (unseen seeds of the train
  families, and the held-out families), 2 samples each (`-k 2`) at temperature 0.7, which is also
  the training temperature, compact prompt, 256 new tokens a turn. The SFT model is evaluated twice
  with two sampling seeds: the control, whose flips are the noise floor of any comparison.
- GRPO x 3 seeds: RECIPE below, STEPS steps of TASKS_PER_STEP groups of GROUP rollouts.
- RFT at the same compute: as many rollouts of the SFT model as one GRPO run samples, one on each
  of as many distinct train level-0 instances; the ones with full score become SFT data; one epoch
  from the SFT model.
- more SFT at the same compute: the SFT data again from the SFT model, for as many epochs as fit
  in GRPO seed 0's training time (one epoch timed first on this machine, then the rest when more
  than one fits).
Compared with `gym.batch.paired`: pass@1 over each episode's samples, difference with a 95 %
interval resampling families, McNemar counts.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_bands import HARNESS  # noqa: E402
from bench.bench_bands import WORK as BANDS  # noqa: E402
from bench.bench_warmstart import (  # noqa: E402
    ACME,
    EGYM,
    STEP_KEYS,
    Stages,
    busy_seconds,
    compare_runs,
    held_out_ids,
    level0,
)
from bench.common import write  # noqa: E402
from gym.dashboard.metrics import read_metrics  # noqa: E402
from gym.families import families, generate  # noqa: E402
from gym.store import Store  # noqa: E402
from trainer.checkpoint import list_checkpoints  # noqa: E402

WORK = ROOT / ".egym" / "bench-learning"
SFT_MODEL = BANDS / "sft" / "model"
SFT_DATA = BANDS / "data"
STORE = WORK / "runs.db"
TRAIN_SEEDS = "0-49"
TEMPERATURE = 0.7
STEPS, TASKS_PER_STEP, GROUP = 20, 4, 8
ROLLOUTS = STEPS * TASKS_PER_STEP * GROUP  # what one GRPO run samples; RFT samples as many
RECIPE = [
    "model.lora.enabled=false",  # a full fine-tune, as the SFT
    "optim.lr=3e-6",
    "optim.warmup_steps=3",
    f"rollout.group_size={GROUP}",
    f"rollout.tasks_per_step={TASKS_PER_STEP}",
    "rollout.concurrency=4",
    "rollout.resample_rounds=1",
    f"sampling.temperature={TEMPERATURE}",
    "sampling.max_new_tokens=256",
    "rollout.options.harness.prompt=compact",
    "loss.kl_coef=0.0",  # KL to the SFT model is logged every step all the same
]
EVAL = [
    "-o",
    "seed={seed}",
    "-o",
    f"temperature={TEMPERATURE}",
    "-o",
    "top_p=1.0",
    "-o",
    "max_new_tokens=256",
]
EVAL += HARNESS


def evaluate(stages: Stages, name: str, model: Path, episodes: list[str], seed: int) -> str:
    run = f"eval-{name}"
    options = [part.format(seed=seed) for part in EVAL]
    stages.run(
        run,
        [*EGYM, "batch", *episodes, "-k", "2", "--policy", "hf", "--model", str(model), *options]
        + ["--concurrency", "4", "--run", run, "--store", str(STORE)],
    )
    return run


def grpo(stages: Stages, seed: int, refs: list[str]) -> Path:
    out = WORK / f"grpo-s{seed}"
    paths = ",".join(f"{ref}@{TRAIN_SEEDS}" for ref in refs)
    stages.run(
        f"grpo-s{seed}",
        [*EGYM, "train", "trainer/configs/gym-cpu.yaml", f"model.path={SFT_MODEL}", f"seed={seed}"]
        + [f"tasks.paths=[{paths}]", "tasks.include=['*-l0-*']", f"steps={STEPS}", "checkpoint.interval=5"]
        + [f"output_dir={out}", *RECIPE],
    )
    return list_checkpoints(out / "checkpoints")[-1] / "model"


def train_instances(train, count: int) -> list[str]:
    """`count` distinct train-split level-0 instances, one family after another in turn (seeds from 0)."""
    queues = {f.name: f for f in train}
    seen, ids, seed = set(), [], 0
    while len(ids) < count and seed < 200:
        for family in queues.values():
            instance = generate(family, 0, seed)
            if family.split_of(instance) == "train" and instance.digest() not in seen and len(ids) < count:
                seen.add(instance.digest())
                ids.append(f"{family.world}/{family.instance_id(0, seed)}")
        seed += 1
    return ids


def rft(stages: Stages, ids: list[str]) -> Path:
    """Rejection sampling: one rollout of the SFT model on each instance, full scores kept, one epoch."""
    stages.run(
        "rft-sample",
        [
            *EGYM,
            "batch",
            *ids,
            "--policy",
            "hf",
            "--model",
            str(SFT_MODEL),
            *[p.format(seed=100) for p in EVAL],
        ]
        + ["--concurrency", "4", "--run", "rft-sample", "--store", str(STORE)],
    )
    data, out = WORK / "rft-data", WORK / "rft"
    stages.run(
        "rft-data",
        [*EGYM, "sft-data", *ids, "--no-oracle", "--from-run", "rft-sample", "--min-score", "1.0"]
        + ["--out", str(data), "--store", str(STORE), *HARNESS],
        then=lambda: {"examples": sum(1 for _ in (data / "data.jsonl").open())},
    )
    stages.run(
        "rft",
        [*EGYM, "sft", "trainer/configs/sft-smollm2.yaml", f"data={data}", f"output_dir={out}"]
        + [f"model.path={SFT_MODEL}", "epochs=1", "lr=1e-4", "prompt=compact"],
    )
    return out / "model"


def training_seconds(run: Path) -> float:
    """A training run's own time, the sum of its steps' (across the sessions a GRPO run was resumed in;
    a stage's `seconds` count only its last invocation)."""
    return sum(
        step.model_dump().get("time_step") or 0.0 for step in read_metrics(run / "metrics.jsonl").steps
    )


def more_sft(stages: Stages) -> Path:
    """The SFT data again, from the SFT model, for GRPO seed 0's training time: one epoch first, timed
    on this machine as GRPO was (the SFT stage of bench_bands.py ran beside other work), then as many
    epochs as fit, from the SFT model again, when that is more than one."""
    common = ["trainer/configs/sft-smollm2.yaml", f"data={SFT_DATA}", f"model.path={SFT_MODEL}", "lr=1e-4"]
    one = WORK / "more-sft-1"
    stages.run("more-sft-1", [*EGYM, "sft", *common, "epochs=1", "prompt=compact", f"output_dir={one}"])
    epochs = max(1, round(training_seconds(WORK / "grpo-s0") / training_seconds(one)))
    if epochs == 1:
        return one / "model"
    out = WORK / "more-sft"
    stages.run(
        "more-sft",
        [*EGYM, "sft", *common, f"epochs={epochs}", "prompt=compact", f"output_dir={out}"],
        then=lambda: {"epochs": epochs},
    )
    return out / "model"


def per_step(seed: int) -> list[dict]:
    keys = (*STEP_KEYS, "kl_ref", "entropy", "grad_norm", "clip_frac", "lr", "tokens_model", "tokens_total")
    path = WORK / f"grpo-s{seed}" / "metrics.jsonl"
    if not path.is_file():
        return []
    return [{k: v for k, v in s.model_dump().items() if k in keys} for s in read_metrics(path).steps]


def seconds(stages: Stages) -> dict[str, float]:
    store = Store(str(STORE))
    try:
        out = {}
        for name in stages.done:
            if name.startswith("eval-") or name == "rft-sample":
                out[name] = busy_seconds(store.list_rollouts(name))
            elif (WORK / name / "metrics.jsonl").is_file():
                out[name] = round(training_seconds(WORK / name), 1)
        return out
    finally:
        store.close()


def report(stages: Stages, parts: dict[str, list[str]], complete: bool) -> None:
    runs = {
        name: f"eval-{name}"
        for name in ("sft", "sft-control", "grpo-s0", "grpo-s1", "grpo-s2", "rft", "more-sft")
    }
    done = {name: run for name, run in runs.items() if run in stages.done}
    against_sft = {
        name: compare_runs(STORE, done["sft"], run)
        for name, run in done.items()
        if name != "sft" and "sft" in done
    }
    gains = [against_sft[f"grpo-s{s}"]["difference"] for s in range(3) if f"grpo-s{s}" in against_sft]
    write(
        "learning",
        {
            "complete": complete,
            "start": "SmolLM2-135M-Instruct after bench_bands.py's SFT (oracle turns, train level 0, compact prompt)",
            "recipe": RECIPE
            + [f"steps={STEPS}", f"tasks: every train family's level 0, seeds {TRAIN_SEEDS}"],
            "rollouts_per_grpo_run": ROLLOUTS,
            "evaluation": {
                "episodes": {part: len(ids) for part, ids in parts.items()},
                "samples_per_episode": 2,
                "decoding": f"temperature {TEMPERATURE} (the training temperature), top-p 1, 256 new tokens, "
                "compact prompt; hf policy seed 0 (the control: seed 1)",
            },
            "noise_floor_sft_vs_sft": against_sft.get("sft-control"),
            "against_sft": {k: v for k, v in against_sft.items() if k != "sft-control"},
            "grpo_mean_gain": round(sum(gains) / len(gains), 4) if gains else None,
            "grpo_seeds_measured": len(gains),
            # Evaluations: wall time with a rollout in flight; training runs: the sum of their steps
            # (both across sessions; a stage's own seconds count only its last invocation).
            "seconds": seconds(stages),
            "per_step": {f"grpo-s{s}": per_step(s) for s in range(3)},
        },
    )


def main() -> None:
    if not SFT_MODEL.is_dir():
        sys.exit(
            f"no SFT model at {SFT_MODEL}: run bench/bench_bands.py first (its first two stages make it)"
        )
    WORK.mkdir(parents=True, exist_ok=True)
    stages = Stages(WORK / "stages.json")
    # Fixed at the first start: families added later do not change a half-done comparison.
    plan_file = WORK / "plan.json"
    if not plan_file.is_file():
        train, held = level0(families(ACME))
        plan = {
            "held_out": held_out_ids(train, held, per_train=2, per_held=8),
            "train_families": [f"acme/{f.name}" for f in train],
            "rft_instances": train_instances(train, ROLLOUTS),
        }
        plan_file.write_text(json.dumps(plan, indent=1) + "\n")
    plan = json.loads(plan_file.read_text())
    parts, refs = plan["held_out"], plan["train_families"]
    episodes = [i for part in parts.values() for i in part]
    evaluate(stages, "sft", SFT_MODEL, episodes, seed=0)
    evaluate(stages, "sft-control", SFT_MODEL, episodes, seed=1)
    report(stages, parts, complete=False)
    for seed in range(3):
        evaluate(stages, f"grpo-s{seed}", grpo(stages, seed, refs), episodes, seed=0)
        report(stages, parts, complete=False)
    evaluate(stages, "rft", rft(stages, plan["rft_instances"]), episodes, seed=0)
    report(stages, parts, complete=False)
    evaluate(stages, "more-sft", more_sft(stages), episodes, seed=0)
    report(stages, parts, complete=True)


if __name__ == "__main__":
    main()
