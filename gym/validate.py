"""`egym validate`: is this task's rubric trustworthy? The author's main tool, like Gymnasium's check_env.

For each task, in real sandboxes:
1. the `oracle` (reference solution) must reach the full score; every item it fails is named;
2. the `null` policy (does nothing) must stay at or below `null_threshold` of the points;
3. the untouched initial state is graded: every positive item that already passes is
   a rubric hole, unless the item is marked `baseline_ok` (with a reason); every
   penalty or gate that already fires is a problem (it would charge doing nothing);
4. scripted cheats (gym.policies.cheats) and the white-box attacker (gym.policies.attacker:
   it reads how the rubric grades, never what it expects, and writes every candidate where
   the rubric reads) must not score above the null policy, and `cheat-destroy` must score
   strictly below it in the raw score (no floor at 0), which only the damage section
   (grader.damage) and the task's penalties can do.
Without a judge model configured, judge items cannot be checked: they are left out of
every score here and counted in the report, instead of failing every task.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from rich.console import Console
from rich.table import Table

from core.trajectory import Trajectory
from grader.grade import Grade, ItemResult
from gym.batch.report import fmt_points
from gym.harness.config import HarnessConfig, harness_config
from gym.policies import CHEATS, COWORKER_CHEATS
from gym.rollout import RolloutOutcome, RolloutSpec, describe_error, run_rollout
from gym.tasks import Task

EPS = 1e-9


@dataclass
class ValidateOptions:
    null_threshold: float = 0.1  # fraction of the possible points the null policy may earn
    cheats: bool = True
    concurrency: int = 2
    harness: HarnessConfig = field(default_factory=HarnessConfig)  # or its fields as a dict

    def __post_init__(self) -> None:
        self.harness = harness_config(self.harness)


@dataclass
class Score:
    """A grade restricted to the items validate can check (judge items only with a judge)."""

    earned: float
    possible: int
    items: list[ItemResult]
    raw: float = 0.0  # earned without the floor at 0
    error: str | None = None
    skipped: int = 0  # judge items left out (no judge configured)
    episode_error: str | None = None  # the harness's error when the episode itself broke

    @property
    def normalized(self) -> float:
        return self.earned / self.possible if self.possible else 0.0

    def __str__(self) -> str:
        if self.error:
            return "error"
        raw = f" (raw {fmt_points(self.raw)})" if self.raw != self.earned else ""
        return f"{fmt_points(self.earned)}/{self.possible}{raw}"

    def passing(self) -> list[str]:
        return [i.id for i in self.items if i.status == "pass" and i.points > 0]

    def errors(self) -> list[ItemResult]:
        return [i for i in self.items if i.status == "error"]


@dataclass
class TaskReport:
    task: str
    oracle: Score | None = None
    null: Score | None = None
    baseline: Score | None = None
    cheats: dict[str, Score] = field(default_factory=dict)
    holes: list[str] = field(default_factory=list)
    excused: list[str] = field(default_factory=list)  # baseline_ok items that pass at baseline
    judge_items_skipped: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def restrict(grade: Grade | None, *, with_judge: bool, error: str | None = None) -> Score:
    """Earned/possible over the checkable items, with gates and the floor at 0 as in grader.score."""
    if grade is None:
        return Score(0.0, 0, [], error or "no grade")
    items = [i for i in grade.items if with_judge or i.kind != "judge"]
    gated = any(i.gate and i.status == "fail" for i in items)
    gains = 0.0 if gated else sum(i.earned for i in items if i.points > 0)
    raw = round(gains + sum(i.earned for i in items if i.points < 0), 4)
    earned = 0.0 if gated else max(0.0, raw)
    possible = sum(max(i.points, 0) for i in items)
    return Score(earned, possible, items, raw=raw, skipped=len(grade.items) - len(items))


def baseline_ok_ids(task: Task) -> set[str]:
    """Ids (after expansion) of the items the rubric allows to pass on the untouched initial state."""
    from grader.expand import expand_items
    from grader.initial_state import initial_rows
    from grader.loader import load_rubric, rubric_for_task
    from gym.episode import TaskInitialState

    rubric = load_rubric(rubric_for_task(task))
    rows = initial_rows(rubric, TaskInitialState(task)) if rubric.initial_queries() else None
    return {item.id for item in expand_items(rubric, rows) if item.baseline_ok}


async def grade_untouched(task: Task) -> Grade:
    """Grade a fresh sandbox of the task before anyone acts (an empty transcript)."""
    from gym.episode import open_episode

    async with open_episode(task, run_id="validate") as episode:
        return await episode.grade(Trajectory(task=task.key, policy="baseline"))


async def _rollout(task: Task, policy: str, opts: ValidateOptions) -> RolloutOutcome:
    spec = RolloutSpec(
        run_id="validate",
        rollout_id=uuid.uuid4().hex[:12],
        task=task.key,
        task_path=str(task.path.absolute()),
        policy=policy,
        harness=opts.harness,
    )
    return await run_rollout(spec)


def _describe(items: list[ItemResult], ids: list[str], most: int = 5) -> str:
    by_id = {i.id: i for i in items}
    shown = "; ".join(
        f"{i} ({by_id[i].evidence or by_id[i].error or by_id[i].status})"[:160] for i in ids[:most]
    )
    return shown + (f"; +{len(ids) - most} more" if len(ids) > most else "")


def judge_problems(report: TaskReport, opts: ValidateOptions, ok_ids: set[str]) -> None:
    """Turn the scores into the report's problems (one line each)."""
    oracle, null, base = report.oracle, report.null, report.baseline
    for name, score in (("oracle", oracle), ("null", null), ("baseline", base), *report.cheats.items()):
        if score is not None and score.error:
            report.problems.append(f"{name}: could not run: {score.error}")
        elif score is not None and score.episode_error:
            report.problems.append(f"{name}: the episode broke: {score.episode_error}")
        elif score is not None and score.errors():
            bad = score.errors()[0]
            report.problems.append(
                f"{name}: {len(score.errors())} item(s) could not be checked, e.g. {bad.id}: {bad.error}"
            )
    if oracle and not oracle.error:
        missed = [i.id for i in oracle.items if i.status != "pass"]
        if missed or oracle.earned + EPS < oracle.possible:
            report.problems.append(f"oracle scored {oracle}, failing: {_describe(oracle.items, missed)}")
    if null and not null.error and null.normalized > opts.null_threshold + EPS:
        report.problems.append(
            f"null scored {null} ({null.normalized:.0%} > {opts.null_threshold:.0%}) "
            f"via {', '.join(null.passing())}"
        )
    if base and not base.error:
        passing = base.passing()
        report.holes = [i for i in passing if i not in ok_ids]
        report.excused = [i for i in passing if i in ok_ids]
        if report.holes:
            report.problems.append(
                f"rubric hole: passes on the untouched initial state: {_describe(base.items, report.holes)} "
                "(mark baseline_ok with a reason if intended)"
            )
        firing = [i.id for i in base.items if i.status == "fail" and (i.points < 0 or i.gate)]
        if firing:
            report.problems.append(
                f"fires on the untouched initial state (doing nothing would be charged): "
                f"{_describe(base.items, firing)}"
            )
    floor = null.normalized if null and not null.error else 0.0
    for name, score in report.cheats.items():
        if not score.error and score.normalized > floor + EPS:
            gained = [i for i in score.passing() if not null or i not in null.passing()]
            report.problems.append(
                f"{name} scored {score} > null {null}, via {', '.join(gained) or 'fewer penalties'}"
            )
    destroy = report.cheats.get("cheat-destroy")
    if destroy and null and not destroy.error and not null.error and destroy.raw >= null.raw - EPS:
        report.problems.append(
            f"cheat-destroy scored {destroy}, not below null {null}: its damage was not charged "
            f"(damage section: {_describe(destroy.items, [i.id for i in destroy.items if i.section == 'damage'])})"
        )


def policies_for(opts: ValidateOptions, task: Task) -> list[str]:
    """Oracle, null and the cheats that apply: pestering people needs someone who answers."""
    cheats = [c for c in CHEATS if task.coworkers or c not in COWORKER_CHEATS] if opts.cheats else []
    return ["oracle", "null", *cheats]


async def validate_task(
    task: Task,
    opts: ValidateOptions,
    limit: asyncio.Semaphore,
    with_judge: bool,
    on_rollout: Callable[[], None] = lambda: None,
) -> TaskReport:
    report = TaskReport(task.key)
    policies = policies_for(opts, task)

    async def run(policy: str) -> Score:
        async with limit:
            outcome = await _rollout(task, policy, opts)
        on_rollout()
        score = restrict(outcome.grade, with_judge=with_judge, error=outcome.error)
        if outcome.trajectory is not None and outcome.trajectory.stop_reason == "error":
            score.episode_error = outcome.trajectory.error
        return score

    async def baseline() -> Score:
        async with limit:
            try:
                return restrict(await grade_untouched(task), with_judge=with_judge)
            except Exception as exc:  # noqa: BLE001 - reported as this task's problem
                return Score(0.0, 0, [], describe_error(exc))
            finally:
                on_rollout()

    scores = await asyncio.gather(baseline(), *(run(p) for p in policies))
    report.baseline, report.oracle, report.null = scores[0], scores[1], scores[2]
    report.cheats = {p: s for p, s in zip(policies[2:], scores[3:], strict=True)}
    report.judge_items_skipped = report.oracle.skipped
    try:
        ok_ids = baseline_ok_ids(task)
    except Exception as exc:  # noqa: BLE001
        report.problems.append(f"rubric: {describe_error(exc)}")
        ok_ids = set()
    judge_problems(report, opts, ok_ids)
    return report


async def validate_tasks(
    tasks: list[Task], opts: ValidateOptions, *, console: Console | None = None
) -> list[TaskReport]:
    """Validate every task (rollouts bounded by `opts.concurrency`), in task order."""
    from gym.episode import make_judge

    with_judge = make_judge() is not None
    if console and not with_judge:
        console.print("[yellow]no judge model configured[/]: judge items are left out of validation")
    limit = asyncio.Semaphore(max(1, opts.concurrency))
    if console is None:
        return list(await asyncio.gather(*(validate_task(t, opts, limit, with_judge) for t in tasks)))
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

    from gym.batch.progress import eta, make_progress

    # One step per sandbox run (the untouched state, oracle, null, each cheat); tasks finish as their last lands.
    runs = sum(len(policies_for(opts, t)) + 1 for t in tasks)
    with make_progress(
        TextColumn("validate"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("runs · {task.fields[tasks]}"),
        TimeElapsedColumn(),
        *eta(),
        console=console,
        transient=True,
    ) as progress:
        bar = progress.add_task("validate", total=runs, tasks=f"0/{len(tasks)} tasks")
        finished: list[TaskReport] = []

        async def one(task: Task) -> TaskReport:
            report = await validate_task(task, opts, limit, with_judge, lambda: progress.advance(bar))
            finished.append(report)
            invalid = sum(not r.ok for r in finished)
            progress.update(
                bar, tasks=f"{len(finished)}/{len(tasks)} tasks" + (f", {invalid} invalid" if invalid else "")
            )
            return report

        return list(await asyncio.gather(*(one(t) for t in tasks)))


def report_table(reports: list[TaskReport]) -> Table:
    table = Table(title="egym validate", title_justify="left")
    # The result comes second so a narrow terminal cuts the details, not the verdict; the task name
    # folds rather than being cut short (instance ids share long prefixes).
    for name in ("task", "result", "oracle", "null", "holes", "worst cheat", "destroy", "judge"):
        table.add_column(
            name,
            justify="left" if name in ("task", "result", "worst cheat") else "right",
            overflow="fold" if name in ("task", "result", "worst cheat") else "ellipsis",
            min_width=12 if name == "task" else None,
        )
    for r in reports:
        scored = {k: v for k, v in r.cheats.items() if k != "cheat-destroy"}
        worst = max(scored.items(), key=lambda kv: (kv[1].normalized, kv[1].raw), default=None)
        destroy = r.cheats.get("cheat-destroy")
        table.add_row(
            r.task,
            "[green]ok[/]" if r.ok else f"[red]{len(r.problems)} problem(s)[/]",
            str(r.oracle) if r.oracle else "-",
            str(r.null) if r.null else "-",
            str(len(r.holes)) + (f" (+{len(r.excused)} ok)" if r.excused else ""),
            f"{worst[0].removeprefix('cheat-')} {worst[1]}" if worst else "-",
            f"raw {fmt_points(destroy.raw)}" if destroy and not destroy.error else "-",
            f"{r.judge_items_skipped} skipped" if r.judge_items_skipped else "-",
        )
    return table


def report_record(report: TaskReport) -> dict:
    """One task's report as JSON-ready data (`egym validate --json`): the scores the table shows, every problem."""

    def score(s: Score | None) -> dict | None:
        if s is None:
            return None
        return {"earned": s.earned, "possible": s.possible, "raw": s.raw, "error": s.error or s.episode_error}

    return {
        "task": report.task,
        "ok": report.ok,
        "problems": report.problems,
        "oracle": score(report.oracle),
        "null": score(report.null),
        "baseline": score(report.baseline),
        "cheats": {name: score(s) for name, s in report.cheats.items()},
        "holes": report.holes,
        "excused": report.excused,
        "judge_items_skipped": report.judge_items_skipped,
    }
