"""grade(rubric, probe, trajectory) -> Grade: run every item, never crash, say what could not be judged.

Order: expand the rubric; prefetch every document the items read (one LibreOffice
run); read what the agent asserted (grader.claims); run python checks one after
another (they share the probe's caches) and render judge evidence, in a worker
thread; then ask the judge about all judge items concurrently; last, the claims
section (wrong values charged) and the damage section (grader.damage) from what
the episode changed. A check that raises is `error` (StateError: `fail`), a judge
call that fails after retries is `error`, and either makes the grade incomplete.

Grading is bounded (rubric `limits`): each check runs under its own time limit
(grader.timebox) and the whole grade under a budget; whatever runs over is an
`error` item with the reason, never a hung rollout.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import time
from collections.abc import Mapping
from typing import Any

from core.trajectory import Trajectory
from grader.checks import documents_read, queries_read, resolve
from grader.checks.base import CheckContext, CheckResult
from grader.claims import CHECK as CLAIM_CHECK
from grader.claims import Statements, claims_items
from grader.claims import build as build_statements
from grader.claims import resolved as resolved_claims
from grader.damage import damage_items, error_items
from grader.errors import ProbeError, StateError
from grader.evidence import render
from grader.expand import expand_items
from grader.grade import Grade, ItemResult, Verdict
from grader.initial_state import InitialState
from grader.initial_state import initial_rows as resolve_initial_rows
from grader.judge import Judge, combine
from grader.probe import Probe
from grader.rubric import Claims, Item, JudgeItem, PythonItem, Rubric
from grader.timebox import CheckRunner

EVIDENCE_LIMIT = 300


def _result(item: Item, status: str, **kw: Any) -> ItemResult:
    return ItemResult(
        id=item.id,
        description=item.description,
        section=item.section,
        kind=item.kind,
        points=item.points,
        gate=item.gate,
        status=status,
        **kw,
    )


def run_python(
    item: PythonItem,
    probe: Probe,
    trajectory: Trajectory | None,
    rubric: Rubric,
    runner: CheckRunner,
    deadline: float,
    claims: Statements | None = None,
) -> ItemResult:
    """One check under its time limit; whatever it raises or however long it takes, an ItemResult."""
    started = time.monotonic()
    limit = item.timeout_s or rubric.limits.check_timeout_s
    try:
        fn = resolve(item.check, near=rubric.path)
        out = runner.run(
            lambda timed: fn(CheckContext(timed, trajectory, item.id, claims), **item.args),
            probe,
            limit_s=limit,
            deadline=deadline,
        )
        if not isinstance(out, CheckResult | bool):
            raise TypeError(f"check returned {type(out).__name__}, expected bool or CheckResult")
        passed, evidence = (out.passed, out.evidence) if isinstance(out, CheckResult) else (out, "")
        if item.negate:
            passed, evidence = not passed, f"(negated) {evidence}"
    except StateError as exc:
        # What the agent left cannot answer: that counts against it whatever the item's sign or
        # `negate` (a positive item fails, a penalty fires), never flipped into a pass.
        passed, evidence = False, str(exc)
    except Exception as exc:  # noqa: BLE001 - a broken check must not break the grade
        return _result(
            item,
            "error",
            error=f"{type(exc).__name__}: {exc}"[:EVIDENCE_LIMIT],
            seconds=time.monotonic() - started,
        )
    score = 1.0 if passed else 0.0
    return _result(
        item,
        "pass" if passed else "fail",
        earned=item.earned_for(score),
        evidence=evidence[:EVIDENCE_LIMIT],
        seconds=time.monotonic() - started,
    )


def _prefetch(items: list[Item], probe: Probe, rubric: Rubric) -> None:
    """Load what the items declared they read in bulk: one LibreOffice run, one SQL round trip."""
    paths: list[str] = []
    queries: list[tuple[str, Any]] = []
    for item in items:
        if isinstance(item, PythonItem):
            try:
                fn = resolve(item.check, near=rubric.path)
            except Exception:  # noqa: BLE001 - reported when the item runs
                continue
            paths += documents_read(fn, item.args)
            queries += queries_read(fn, item.args)
        else:
            paths += [e.path for e in item.evidence if e.type == "document"]
            queries += [(e.query, e.params) for e in item.evidence if e.type == "sql"]
    if paths or queries:
        with contextlib.suppress(ProbeError):  # each item will try again and report its own error
            probe.prefetch(paths, queries)


def _sync_part(
    items, probe, trajectory, rubric, deadline: float, claims: Claims
) -> tuple[list[ItemResult | None], dict[int, str | ItemResult], list[ItemResult]]:
    """Python items' results, per judge item its evidence text or an error result, and the claims section."""
    _prefetch(items, probe, rubric)
    results: list[ItemResult | None] = []
    evidence: dict[int, str | ItemResult] = {}
    statements, section = _claims(claims, items, probe, trajectory)
    runner = CheckRunner()
    try:
        for index, item in enumerate(items):
            if isinstance(item, PythonItem):
                results.append(run_python(item, probe, trajectory, rubric, runner, deadline, statements))
                continue
            results.append(None)
            try:
                evidence[index] = render(item.evidence, probe, trajectory)
            except StateError as exc:  # what the agent left cannot be shown to the judge: charged to it
                evidence[index] = _result(
                    item,
                    "fail",
                    earned=item.earned_for(0.0),
                    evidence=f"evidence unreadable: {exc}"[:EVIDENCE_LIMIT],
                )
            except Exception as exc:  # noqa: BLE001
                evidence[index] = _result(
                    item, "error", error=f"evidence unavailable: {type(exc).__name__}: {exc}"[:EVIDENCE_LIMIT]
                )
    finally:
        runner.close()
    return results, evidence, section


def _claims(
    claims: Claims, items: list[Item], probe: Probe, trajectory: Trajectory | None
) -> tuple[Statements | None, list[ItemResult]]:
    """What the agent asserted (shared by the claim items) and the section charging its wrong values.

    Unreadable state: ProbeError makes the section `error`; what the agent's own text caused
    (a pattern running over its time on it) charges every kind its cap.
    """
    if not claims.kinds:
        return None, []
    try:
        statements = build_statements(claims, items, probe, trajectory)
    except ProbeError as exc:
        statements = Statements(kinds=dict(claims.kinds), expected=[])
        return statements, [_claims_failed(claims, items, "error", f"claims unreadable: {exc}")]
    except StateError as exc:
        statements = Statements(kinds=dict(claims.kinds), expected=[])
        return statements, [_claims_failed(claims, items, "fail", f"charged to the agent: {exc}")]
    return statements, claims_items(statements)


def _claims_failed(claims: Claims, items: list[Item], status: str, why: str) -> ItemResult:
    """The whole claims section as one item when the agent's writing could not be read."""
    points = sum(
        i.points for i in items if isinstance(i, PythonItem) and i.check == CLAIM_CHECK and i.points > 0
    )
    return ItemResult(
        id="claims",
        description="Penalty: values asserted that the task did not ask for",
        section="claims",
        points=-max(points, 1),
        status=status,
        earned=-float(max(points, 1)) if status == "fail" else 0.0,
        evidence=why[:EVIDENCE_LIMIT] if status == "fail" else "",
        error=why[:EVIDENCE_LIMIT] if status == "error" else None,
    )


def _damage(rubric: Rubric, probe: Probe, possible: int, items: list[Item]) -> list[ItemResult]:
    """The damage section from what the episode changed; none when the probe has no baseline.

    Changes the infrastructure could not read are `error`; changes the agent made unreadable
    (a maze of folders, a listing past its bounds: StateError) cost every kind its cap.
    """
    try:
        changes = probe.changes()
    except ProbeError as exc:
        return error_items(rubric, possible, f"changes unreadable: {exc}")
    except StateError as exc:
        return error_items(rubric, possible, f"changes unreadable: {exc}", charged=True)
    return damage_items(rubric, changes, possible, items) if changes is not None else []


async def run_judge(item: JudgeItem, evidence: str, judge: Judge | None, rubric: Rubric) -> ItemResult:
    if judge is None:
        return _result(item, "error", error="no judge configured (set EGYM_JUDGE_MODEL and an endpoint)")
    started = time.monotonic()
    panel = item.panel or rubric.judge
    try:
        verdicts = await judge.panel(item, evidence, panel)
    except Exception as exc:  # noqa: BLE001 - judge trouble is infrastructure: error, never fail
        return _result(item, "error", error=f"{type(exc).__name__}: {exc}"[:EVIDENCE_LIMIT])
    seconds = time.monotonic() - started
    failed = [v for v in verdicts if v.error]
    if failed:
        return _result(item, "error", error=failed[0].error, verdicts=verdicts, seconds=seconds)
    score, passed = combine(verdicts, (panel.rule if panel else "majority"), item.scale)
    reason = (
        verdicts[0].reason if len(verdicts) == 1 else "; ".join(f"{v.model}: {v.verdict}" for v in verdicts)
    )
    return _result(
        item,
        "pass" if passed else "fail",
        earned=round(item.earned_for(score), 4),
        evidence=reason[:EVIDENCE_LIMIT],
        verdicts=verdicts,
        seconds=seconds,
    )


def aggregate(rubric: Rubric, results: list[ItemResult], seconds: float, meta: dict[str, Any]) -> Grade:
    possible = sum(max(r.points, 0) for r in results)
    gated = any(r.gate and r.status == "fail" for r in results)
    gains = 0.0 if gated else sum(r.earned for r in results if r.points > 0)
    raw = round(gains + sum(r.earned for r in results if r.points < 0), 4)
    earned = max(0.0, raw) if not gated else 0.0
    normalized = min(1.0, earned / possible) if possible else 0.0
    return Grade(
        task=rubric.task,
        rubric_hash=rubric.hash or None,
        earned=earned,
        raw_earned=raw,
        possible=possible,
        normalized=normalized,
        incomplete=any(r.status == "error" for r in results),
        gated=gated,
        items=results,
        seconds=seconds,
        meta=meta,
    )


async def grade_async(
    rubric: Rubric,
    probe: Probe,
    trajectory: Trajectory | None = None,
    *,
    judge: Judge | None = None,
    initial: InitialState | None = None,
    initial_rows: Mapping[str, list[dict[str, Any]]] | None = None,
) -> Grade:
    """Grade a final state. `initial` (the task's initial state) lets `initial_query` expansions resolve (cached)."""
    started = time.monotonic()
    deadline = started + rubric.limits.grade_timeout_s
    if initial_rows is None and rubric.initial_queries() and initial is not None:
        initial_rows = await asyncio.to_thread(resolve_initial_rows, rubric, initial)
    items = expand_items(rubric, initial_rows)
    claims = resolved_claims(rubric.claims, initial_rows)
    results, evidence, claimed = await asyncio.to_thread(
        _sync_part, items, probe, trajectory, rubric, deadline, claims
    )
    pending = {i: ev for i, ev in evidence.items() if isinstance(ev, str)}
    judged = await _judge_within(
        [(items[i], ev) for i, ev in pending.items()], judge, rubric, deadline - time.monotonic()
    )
    for i, result in zip(pending, judged, strict=True):
        results[i] = result
    for i, ev in evidence.items():
        if isinstance(ev, ItemResult):
            results[i] = ev
    final = [r for r in results if r is not None]
    possible = sum(max(r.points, 0) for r in final)
    final += claimed
    final += await asyncio.to_thread(_damage, rubric, probe, possible, items)
    final += _coworkers_failed(trajectory)
    meta = {"items": len(items), "judge_calls": sum(len(r.verdicts) for r in final)}
    return aggregate(rubric, final, time.monotonic() - started, meta)


def _coworkers_failed(trajectory: Trajectory | None) -> list[ItemResult]:
    """An `error` item when the task's coworkers stopped answering (gym/harness/coworkers.py): what the
    agent could not learn from them is the harness's failure, so the grade is incomplete, never wrong."""
    log = (trajectory.meta.get("coworkers") or []) if trajectory is not None else []
    error = next((e["error"] for e in log if "error" in e), None)
    if error is None:
        return []
    return [
        ItemResult(
            id="coworkers",
            description="The task's coworkers answered throughout the episode",
            section="conversation",
            points=0,
            status="error",
            error=f"the coworkers stopped answering: {error}",
        )
    ]


async def _judge_within(
    work: list[tuple[JudgeItem, str]], judge: Judge | None, rubric: Rubric, seconds: float
) -> list[ItemResult]:
    """Judge every item concurrently; those still waiting when the grade's budget ends are `error`."""
    tasks = [asyncio.ensure_future(run_judge(item, ev, judge, rubric)) for item, ev in work]
    if not tasks:
        return []
    _, late = await asyncio.wait(tasks, timeout=max(0.0, seconds))
    for task in late:
        task.cancel()
    await asyncio.gather(*late, return_exceptions=True)
    return [
        task.result()
        if task not in late
        else _result(item, "error", error="the grade's time budget ran out before the judge answered")
        for task, (item, _) in zip(tasks, work, strict=True)
    ]


def grade(rubric: Rubric, probe: Probe, trajectory: Trajectory | None = None, **kw: Any) -> Grade:
    """Synchronous grade_async; works from inside a running event loop too (runs in a worker thread)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(grade_async(rubric, probe, trajectory, **kw))
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, grade_async(rubric, probe, trajectory, **kw)).result()


__all__ = ["grade", "grade_async", "aggregate", "run_python", "run_judge", "Verdict"]
