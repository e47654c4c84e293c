"""Answer items: a value of a declared kind, stated where the task asked (grader.claims).

    {"id": "head", "points": 2, "kind": "python", "check": "claims.stated",
     "args": {"kind": "person", "value": "Anna Schmidt", "where": "answer"}}

`where`: `answer` (default), `#channel`, `dm:alice,bob`, or `file:path` (a document).
`about`: the subject the value belongs to when the answer lists several ("Globex Industries").
Wrong values of the kind, and right ones put elsewhere, are charged by the claims section.
"""

from __future__ import annotations

from typing import Any

from core.errors import RubricError
from grader.checks.base import CheckContext, CheckResult, brief
from grader.claims import channels
from grader.claims.extract import normalize
from grader.claims.statements import Expected

__all__ = ["stated"]


def stated(
    ctx: CheckContext,
    *,
    kind: str,
    value: Any,
    where: str = channels.ANSWER,
    about: str | None = None,
    tolerance: float | None = None,
) -> CheckResult:
    """Pass when `value` (of `kind`) is stated in `where`, about `about` when given."""
    statements = ctx.claims
    if statements is None or kind not in statements.kinds:
        raise RubricError(f"claims.stated: the rubric declares no kind {kind!r} under claims.kinds")
    spec = statements.kinds[kind]
    place = channels.place(where)
    wanted = Expected(ctx.item_id, kind, normalize(spec, value), place, about, 1, tolerance)
    hit = statements.stated(wanted)
    subject = f" about {about}" if about else ""
    if hit is not None:
        return CheckResult(True, f"{place} states {brief(hit.found.text, 60)}{subject}")
    said = statements.said(kind, place)
    others = ", ".join(brief(s.found.text, 30) + (f" ({s.about})" if s.about else "") for s in said[:6])
    return CheckResult(
        False,
        f"{place} does not state {brief(value, 40)}{subject}"
        + (f"; it states {others}" if said else f"; no {kind} value there"),
    )
