"""`egym train CONFIG.yaml [key=value ...]`: GRPO training on rubric scores (see docs/training.md)."""

from __future__ import annotations

import contextlib
import datetime as dt
import time
from collections.abc import Callable, Iterator
from typing import Any

import typer

from gym.cli.errors import friendly
from gym.cli.options import CHAT, Chat, use_chat


class RunEta:
    """Time left for the whole run, from the pace of the steps this invocation finished.

    A resumed run's earlier steps ran in another process, so they do not count towards the pace.
    """

    def __init__(self, steps: int, clock: Callable[[], float] = time.monotonic):
        self.steps, self.clock = steps, clock
        self.started = clock()
        self.first: int | None = None  # the first step this invocation ran

    def after(self, step: int) -> str:
        """Called as `step` finishes: how many steps are left and when the run should end."""
        self.first = step if self.first is None else self.first
        per_step = (self.clock() - self.started) / (step - self.first + 1)
        left = self.steps - step
        return f"{left} of {self.steps} steps left, run ETA {dt.timedelta(seconds=round(per_step * left))}"


def _line(record: dict[str, Any]) -> str:
    def fmt(value: Any, spec: str) -> str:
        return "-" if value is None else format(value, spec)

    return (
        f"step {record['step']:>5}  reward {fmt(record['reward_mean'], '.3f')} ± {fmt(record['reward_std'], '.3f')}"
        f"  pass {fmt(record['pass_rate'], '.0%')}  groups {record['groups_kept']}/{record['groups']}"
        f"  loss {fmt(record['loss'], '+.4f')}  clip {fmt(record['clip_frac'], '.3f')}"
        f"  zero-var {fmt(record.get('zero_variance_share'), '.0%')}"
        f"  rollout {record['time_rollout']:.1f}s  update {record['time_update']:.1f}s  sync {record['time_sync']:.1f}s"
        + (f"  eval {record['eval_reward_mean']:.3f}" if "eval_reward_mean" in record else "")
    )


@contextlib.contextmanager
def _live_progress(console: Any, steps: int) -> Iterator[tuple[Callable[..., None], Callable[..., None]]]:
    """A progress line during each step (rollouts done, reward so far, tokens/s, the phase's ETA),
    redrawn on a terminal and printed every 30 s in a log, with each finished step printed above it
    with the ETA of the whole run."""
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn

    from gym.batch.progress import eta, make_progress

    run_eta = RunEta(steps)
    with make_progress(
        TextColumn("step {task.fields[step]} {task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("reward {task.fields[reward]} · {task.fields[speed]} tok/s"),
        *eta(),
        console=console,
        transient=True,
    ) as progress:
        bars: list[Any] = []  # the one bar, added when the first step starts

        def on_progress(p: Any) -> None:
            if not bars:
                bars.append(progress.add_task(p.phase, total=p.total, step=p.step, reward="-", speed="-"))
            bar = bars[0]
            if p.phase == "update":  # no per-item progress inside an optimizer step
                progress.reset(bar, description=f"update ({p.total} sequences)", total=None)
                progress.update(bar, step=p.step)
                return
            if p.done == 0:
                progress.reset(bar, description=p.phase, total=p.total)
            reward = "-" if p.reward_mean is None else f"{p.reward_mean:.3f}"
            progress.update(bar, completed=p.done, step=p.step, reward=reward, speed=f"{p.tokens_per_s:.1f}")

        def on_step(record: dict[str, Any]) -> None:
            line = f"{_line(record)}  {run_eta.after(record['step'])}"
            progress.console.print(line, highlight=False, soft_wrap=True)

        yield on_step, on_progress


def register(app: typer.Typer) -> None:
    @app.command("train")
    @friendly
    def train(
        config: str = typer.Argument(..., help="Training config YAML (see trainer/configs/)."),
        overrides: list[str] = typer.Argument(
            None, help="Dotted overrides, e.g. loss.clip_high=0.28 steps=200."
        ),
        print_config: bool = typer.Option(
            False, "--print-config", help="Print the resolved config and exit."
        ),
        judge_same_model: bool = typer.Option(
            False, "--judge-same-model", help="Let the trained model judge its own work (judge items)."
        ),
        chat: Chat | None = CHAT,
    ) -> None:
        """Train a policy with GRPO on groups of rollouts scored by the rubrics."""
        use_chat(chat)
        import yaml
        from rich.console import Console

        from trainer.config import load_config

        extra = ["rollout.options.judge.allow_same_model=true"] if judge_same_model else []
        cfg = load_config(config, [*(overrides or []), *extra])
        console = Console()
        if print_config:
            console.print(
                yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False), end="", highlight=False
            )
            return
        from trainer.local import build_trainer

        console.print(
            f"training {cfg.model.path or cfg.model.builder} for {cfg.steps} steps -> {cfg.output_dir}"
        )
        trainer = build_trainer(cfg)
        with _live_progress(console, cfg.steps) as (on_step, on_progress):
            records = trainer.run(on_step=on_step, on_progress=on_progress)
        last = records[-1] if records else {}
        console.print(
            f"done: {len(records)} steps, last reward {last.get('reward_mean', 0):.3f}; "
            f"metrics {cfg.output_dir}/{cfg.logging.metrics_file}, checkpoints {cfg.checkpoint_dir}",
            soft_wrap=True,
        )

    @app.command("sft")
    @friendly
    def sft(
        config: str = typer.Argument(..., help="SFT config YAML (see trainer/configs/sft-smollm2.yaml)."),
        overrides: list[str] = typer.Argument(
            None, help="Dotted overrides, e.g. data=.egym/sft/l0 epochs=2."
        ),
    ) -> None:
        """Fine-tune on `egym sft-data` examples (the warm start before GRPO); writes <output_dir>/model."""
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn

        from gym.batch.progress import eta, make_progress
        from trainer.sft import load_sft_config, resume_point, run_sft

        cfg = load_sft_config(config, overrides or [])
        console = Console()
        console.print(
            f"fine-tuning {cfg.model.path or cfg.model.builder} on {cfg.data} for {cfg.epochs} epoch(s) "
            f"-> {cfg.output_dir}"
        )
        if (found := resume_point(cfg)) is not None:
            console.print(f"going on from {found}")
        with make_progress(
            TextColumn("sft"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("steps · loss {task.fields[loss]} · {task.fields[speed]} tok/s"),
            *eta(),
            console=console,
        ) as progress:
            bar = progress.add_task("sft", total=None, loss="-", speed="-")

            def shown(record: dict[str, Any]) -> None:
                progress.update(
                    bar,
                    completed=record["step"],
                    total=record["steps_total"],
                    loss=f"{record['loss']:.3f}",
                    speed=f"{record['tokens_per_s']:.0f}",
                )

            records = run_sft(cfg, on_step=shown)
        console.print(
            f"done: {len(records)} steps, loss {records[0]['loss']:.3f} -> {records[-1]['loss']:.3f}; "
            f"model {cfg.output_dir}/model (use it as --model or model.path), metrics {cfg.output_dir}/metrics.jsonl",
            soft_wrap=True,
        )
