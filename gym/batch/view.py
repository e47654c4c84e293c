"""Rich views of one rollout: its turns as they happen, and the rubric breakdown at the end."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from core.trajectory import Step, Trajectory
from grader.grade import Grade, ItemResult
from gym.batch.report import fmt_points
from gym.store import RolloutRow

STATUS_STYLE = {"pass": "green", "fail": "red", "error": "yellow"}


def _clip(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + f" … [{len(text) - limit} more chars]"


def render_step(step: Step, *, limit: int = 600) -> RenderableType:
    """One assistant turn: its text, each tool call with arguments, and each result."""
    parts: list[RenderableType] = []
    if step.turn.content.strip():
        parts.append(Text(_clip(step.turn.content, limit)))
    results = {r.call_id: r for r in step.results}
    for call in step.turn.tool_calls:
        parts.append(
            Text.assemble(("→ ", "cyan"), (call.name, "bold cyan"), " ", _clip(call.arguments, limit // 2))
        )
        result = results.get(call.id)
        if result is not None:
            style = "red" if result.is_error else "dim"
            fault = f" [injected {result.fault}]" if result.fault else ""
            parts.append(Text(_clip(result.output, limit) + fault, style=style))
    title = f"turn {step.index + 1}  policy {step.policy_seconds:.1f}s  tools {step.tool_seconds:.1f}s"
    return Panel(
        Group(*parts) if parts else Text("(empty turn)", style="dim"), title=title, title_align="left"
    )


FULL_TABLE_UP_TO = 30  # items; bigger grades print their sections and what did not pass


def rubric_table(
    grade: Grade, items: list[ItemResult] | None = None, *, was: Grade | None = None, title: str | None = None
) -> Table:
    """Per item: status, points earned of possible, and what the check saw (or why it could not run)."""
    table = Table(title=title or f"rubric: {grade.summary()}", title_justify="left", expand=False)
    for name in ("item", "section", "kind", "status", "points", "evidence"):
        table.add_column(name, overflow="fold")
    before = {item.id: item.status for item in was.items} if was else {}
    for item in grade.items if items is None else items:
        style = STATUS_STYLE[item.status]
        note = item.error or item.evidence or ""
        if item.verdicts:
            note = note or "; ".join(v.reason for v in item.verdicts if v.reason)
        changed = f" (was {before[item.id]})" if before.get(item.id, item.status) != item.status else ""
        table.add_row(
            item.id,
            item.section or "",
            item.kind,
            f"[{style}]{item.status}[/]{changed}",
            f"{fmt_points(item.earned)}/{item.points}",
            _clip(note, 160),
        )
    return table


def worst_first(items: list[ItemResult]) -> list[ItemResult]:
    """Items that did not pass: errors, then failures by points lost (penalties charged count too)."""
    missed = [i for i in items if i.status != "pass"]
    return sorted(
        missed, key=lambda i: (i.status != "error", -abs(i.points - i.earned if i.points > 0 else i.earned))
    )


def grade_view(
    grade: Grade, *, items: bool = False, failed_only: bool = False, was: Grade | None = None
) -> RenderableType:
    """A grade for the terminal: sections, then every item when small (or `items`), else what did not pass."""
    parts: list[RenderableType] = []
    if len(grade.sections()) > 1:
        parts.append(section_table(grade))
    if items or len(grade.items) <= FULL_TABLE_UP_TO:
        shown = [i for i in grade.items if i.status != "pass"] if failed_only else grade.items
        parts.append(rubric_table(grade, shown, was=was))
        return Group(*parts)
    missed = worst_first(grade.items)
    shown = missed[:FULL_TABLE_UP_TO]
    title = f"rubric: {grade.summary()}; not passing, worst first"
    parts.append(rubric_table(grade, shown, was=was, title=title))
    rest = len(missed) - len(shown)
    passing = len(grade.items) - len(missed)
    more = f"… {rest} more not passing; " if rest else ""
    parts.append(Text(f"{more}{passing} passing; --items shows all {len(grade.items)} items", style="dim"))
    return Group(*parts)


def section_table(grade: Grade) -> Table:
    table = Table(title="sections", title_justify="left")
    table.add_column("section")
    table.add_column("score", justify="right")
    for section, (earned, possible) in grade.sections().items():
        table.add_row(section or "(none)", f"{fmt_points(earned)}/{possible}")
    return table


def header(trajectory: Trajectory | None, grade: Grade | None, *, error: str | None = None) -> Text:
    text = Text()
    if trajectory is not None:
        text.append(f"{trajectory.task}  policy {trajectory.policy}")
        text.append(
            f"  stop {trajectory.stop_reason}  turns {len(trajectory.steps)}  {trajectory.seconds:.1f}s"
        )
    if grade is not None:
        text.append("  score ")
        text.append(str(grade), style="bold green" if grade.normalized >= 0.999 else "bold")
        text.append(f" ({grade.normalized:.1%})")
        if grade.incomplete:
            text.append(f"  {grade.incomplete_note()}: not counted as a pass or a reward", style="yellow")
    error = error or (trajectory.error if trajectory is not None else None)
    if error:
        text.append(f"\nerror: {error}", style="red")
    return text


def render_rollout(
    row: RolloutRow, *, turns: bool = True, failed_only: bool = False, items: bool = False
) -> RenderableType:
    """Everything `egym show` prints for a stored rollout."""
    trajectory, grade = row.trajectory_model(), row.grade_model()
    meta = Text(f"rollout {row.id}  run {row.run_id}  {row.task} #{row.sample}  {row.status}", style="bold")
    parts: list[RenderableType] = [meta, header(trajectory, grade, error=row.error)]
    if turns and trajectory is not None:
        if trajectory.final_answer:
            parts.append(
                Panel(_clip(trajectory.final_answer, 2000), title="final answer", title_align="left")
            )
        parts[2:2] = [render_step(step) for step in trajectory.steps]
    if grade is not None:
        parts.append(grade_view(grade, items=items, failed_only=failed_only))
    return Group(*parts)
