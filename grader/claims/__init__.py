"""Precision over everything the agent writes: the values it asserts, wherever it asserts them.

A rubric declares the kinds of value its answer items ask for (`claims.kinds`: amounts,
dates, counts, names from a lexicon, ...); an answer item is `claims.stated` with the
value it expects, where (the final answer, a channel, a direct message, a document) and,
when the answer lists several subjects, what the value is about. The grader reads the
agent's final answer, every post it added or edited, and the documents the items read,
extracts every value of every declared kind (grader.claims.extract), and

- passes an item when its value is stated where it was asked, about its subject;
- charges, per kind, every wrong value asserted anywhere, and every right value put in a
  place the task did not ask for (grader.claims.section).

So an answer that sprays every candidate value, or dumps every row, earns no more than
one that says nothing. docs/rubrics.md has the rules and the formula.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.errors import RubricError
from grader.claims.section import claims_items
from grader.claims.statements import CHECK, Expected, Statement, Statements, build
from grader.rubric import Claims

__all__ = ["CHECK", "Expected", "Statement", "Statements", "build", "claims_items", "resolved"]


def resolved(claims: Claims, initial_rows: Mapping[str, list[dict[str, Any]]] | None) -> Claims:
    """The claims with every `values_query` lexicon read from the initial state's rows."""
    kinds = {}
    for name, kind in claims.kinds.items():
        if kind.values_query is None:
            kinds[name] = kind
            continue
        if initial_rows is None or kind.values_query not in initial_rows:
            raise RubricError(f"claims.kinds.{name}.values_query: not resolved against the initial state")
        values = [str(next(iter(row.values()))) for row in initial_rows[kind.values_query] if row]
        kinds[name] = kind.model_copy(update={"values": values, "values_query": None})
    return claims.model_copy(update={"kinds": kinds})
