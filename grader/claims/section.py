"""The claims section every grade with claim items gets: wrong values charged, kind by kind.

No rubric writes these items (like the damage section). For each kind its items ask
for, every distinct wrong value the agent asserted anywhere it wrote (grader.claims.statements)
costs `charge` points, at most `cap`:

- charge: by default the mean points of the kind's items, times the odds against guessing
  when the kind is a closed lexicon: with m of its N values expected, m / (N - m), and with k
  of its n items expecting one value, k / (n - k) (at least 1). So a wrong value costs what a
  right one earns, and listing every value of a lexicon, guessing any subset of it blindly, or
  giving every subject the same value (approve everything), earns nothing;
- cap: by default the points of the kind's items, so an answer that asserts everything
  of a kind nets at most zero on it, the same as saying nothing.

A value asserted in a place the task did not ask for (another channel, another person's
direct messages) is charged too, even when it is the right value; a wrong value told to three
people, or recorded on three rows, is three wrong values.
"""

from __future__ import annotations

from grader.claims.extract import fold
from grader.claims.statements import Statements
from grader.grade import ItemResult

SECTION = "claims"
SHOWN = 8  # wrong values named in the evidence


def charge_rate(statements: Statements, kind: str) -> tuple[float, float]:
    """(points per wrong value, cap) for one kind."""
    spec = statements.kinds[kind]
    mine = [e for e in statements.expected if e.kind == kind]
    points = float(sum(e.points for e in mine))
    mean = points / len(mine) if mine else 0.0
    rate = spec.charge if spec.charge is not None else mean * _odds(spec, mine)
    cap = spec.cap if spec.cap is not None else points
    return rate, cap


def _odds(spec, mine: list) -> float:
    """How much more a wrong value of a closed lexicon costs than a right one earns, so that no blind
    strategy earns anything: guessing any subset of the lexicon (with m of its N values expected,
    m / (N - m)), or saying one value for every subject (with k of n items expecting it, k / (n - k))."""
    if spec.values is None:
        return 1.0
    lexicon = {fold(e.value).casefold() for e in spec.entries()}
    wanted = [fold(str(e.value)).casefold() for e in mine]
    rest = len(lexicon - set(wanted))
    odds = [1.0, len(set(wanted)) / rest if rest else 1.0]
    odds += [
        wanted.count(v) / (len(wanted) - wanted.count(v))
        for v in set(wanted)
        if wanted.count(v) < len(wanted)
    ]
    return max(odds)


def _shown(value: object, text: str) -> str:
    return text if len(text) <= 40 else text[:39] + "…"


def claims_items(statements: Statements) -> list[ItemResult]:
    """One penalty item per kind that the rubric's claim items ask for."""
    items = []
    asked = sorted({e.kind for e in statements.expected})
    for kind in asked:
        rate, cap = charge_rate(statements, kind)
        if cap <= 0:
            continue
        wrong = statements.wrong(kind)
        cost = min(cap, rate * len(wrong))
        shown = "; ".join(
            f"{_shown(s.found.value, s.found.text)} ({s.place}{', about ' + s.about if s.about else ''})"
            for s in wrong[:SHOWN]
        )
        more = f"; +{len(wrong) - SHOWN} more" if len(wrong) > SHOWN else ""
        notes = f" [{'; '.join(statements.notes)}]" if statements.notes else ""
        evidence = (
            f"{len(wrong)} wrong or misplaced {kind} value(s) at {rate:g} each: {shown}{more}"
            if wrong
            else f"no wrong {kind} value asserted"
        ) + notes
        items.append(
            ItemResult(
                id=f"claims.{kind}",
                description=f"Penalty: {kind} values asserted that the task did not ask for, or not where it asked",
                section=SECTION,
                points=-round(cap) or -1,
                status="fail" if wrong else "pass",
                earned=-round(cost, 4),
                evidence=evidence[:300],
            )
        )
    return items
