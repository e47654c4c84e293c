"""Checks specific to the Acme Analytics tasks (referenced as `rubrics.acme.checks:<name>`).

Chat checks here look only at posts written after the initial state was loaded (`new_only`), so
months of initial history by the same user can never satisfy them; amounts are found in
text whatever their formatting (12300, 12,300.00, 12.300,00, EUR 12 300).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

# The rubric's patterns run through grader.patterns: under a time limit, so one that backtracks
# catastrophically on the agent's text fails the item instead of hanging the grade.
from grader import patterns
from grader.checks.base import (
    CheckContext,
    CheckResult,
    StateError,
    brief,
    matches_agent_text,
    reads_documents,
    same,
    text_matches,
)

# The initial chat history ends on the world's date (2025-04-07, morning); anything later was written during the episode.
HISTORY_UNTIL_MS = 1744070400000  # 2025-04-08T00:00:00Z
AGENT = "jordan.lee"
_NUMBER = re.compile(
    r"(?<![\d.,])(?:\d{1,3}(?:[,.' \u00a0\u202f]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?)(?![\d])"
)


def numbers_in(text: str) -> list[float]:
    """Every number written in `text`, reading thousands and decimal separators the way people write them."""
    found = []
    for token in _NUMBER.findall(text):
        value = _parse(token.strip().rstrip(".,"))
        if value is not None:
            found.append(value)
    return found


def _parse(token: str) -> float | None:
    token = re.sub(r"[ '\u00a0\u202f]", "", token)
    if "," in token and "." in token:
        decimal = "," if token.rfind(",") > token.rfind(".") else "."
    elif token.count(",") == 1 and len(token.split(",")[1]) in (1, 2):
        decimal = ","
    elif token.count(".") == 1 and len(token.split(".")[1]) in (1, 2):
        decimal = "."
    else:
        decimal = None
    thousands = {",", "."} - {decimal} if decimal else {",", "."}
    for sep in thousands:
        token = token.replace(sep, "")
    if decimal == ",":
        token = token.replace(",", ".")
    try:
        return float(token)
    except ValueError:
        return None


def has_amount(text: str, amount: float, tolerance: float = 0.5) -> bool:
    return any(abs(n - float(amount)) <= tolerance for n in numbers_in(text))


def _new_posts(ctx: CheckContext, channel: str | None, user: str | None, thread: str | None = None) -> list:
    snap = ctx.probe.chat()
    posts = [p for p in snap.posts_in(channel) if p.create_at >= HISTORY_UNTIL_MS]
    if user:
        posts = [p for p in posts if p.user == user.lstrip("@")]
    if thread:
        roots = {
            p.id for p in snap.posts_in(channel) if not p.root_id and text_matches(p.message, text=thread)
        }
        posts = [p for p in posts if p.root_id in roots]
    return posts


def _where(channel: str | None, user: str | None) -> str:
    return f"{'in ' + channel if channel else 'anywhere'}{' by ' + user if user else ''}"


# -- chat -----------------------------------------------------------------------


@matches_agent_text
def posted(
    ctx: CheckContext,
    *,
    channel: str | None = None,
    user: str | None = AGENT,
    text: str | None = None,
    regex: str | None = None,
    all_of: list[str] | None = None,
    thread: str | None = None,
    min_count: int = 1,
) -> CheckResult:
    """Pass when new posts (this episode) match: channel/DM (`dm:a,b`), author, text/regex, and every
    regex in `all_of` found in one post."""
    posts = _new_posts(ctx, channel, user, thread)
    if text is not None or regex is not None:
        posts = [p for p in posts if text_matches(p.message, text=text, regex=regex)]
    if all_of:
        posts = [p for p in posts if all(patterns.search(rx, p.message, ignore_case=True) for rx in all_of)]
    ok = len(posts) >= min_count
    detail = f": {brief(posts[-1].message)}" if posts else ""
    return CheckResult(ok, f"{len(posts)} new matching post(s) {_where(channel, user)}{detail}")


@matches_agent_text
def posted_line(
    ctx: CheckContext,
    *,
    all_of: list[str],
    channel: str | None = None,
    user: str | None = AGENT,
) -> CheckResult:
    """Pass when one line of a new post matches every regex in `all_of` (e.g. an invoice number and what differs)."""
    for post in _new_posts(ctx, channel, user):
        for line in post.message.splitlines():
            if all(patterns.search(rx, line, ignore_case=True) for rx in all_of):
                return CheckResult(True, f"line in {post.channel}: {brief(line)}")
    return CheckResult(False, f"no line of a new post {_where(channel, user)} matches all of {all_of}")


@matches_agent_text
def posted_query_values(
    ctx: CheckContext,
    *,
    query: str,
    channel: str | None = None,
    user: str | None = AGENT,
) -> CheckResult:
    """Pass when every value the query returns (first column, final state) appears as a word in new posts;
    e.g. the ids of the tickets the agent created. Fails when the query returns nothing."""
    values = [str(next(iter(r.values()))) for r in ctx.probe.sql(query)]
    text = "\n".join(p.message for p in _new_posts(ctx, channel, user))
    missing = [v for v in values if not re.search(rf"(?<![\w]){re.escape(v)}(?![\w])", text)]
    ok = bool(values) and not missing
    return CheckResult(
        ok,
        f"values {values}; missing from posts {_where(channel, user)}: {missing}"
        if values
        else "query returned nothing",
    )


def no_other_matches_posted(
    ctx: CheckContext,
    *,
    regex: str,
    allowed: list[str],
    channel: str | None = None,
    user: str | None = AGENT,
) -> CheckResult:
    """Pass when every match of `regex` in new posts is one of `allowed` (e.g. only the invoices that differ)."""
    extra = sorted(
        {m.group(0) for p in _new_posts(ctx, channel, user) for m in patterns.finditer(regex, p.message)}
        - set(allowed)
    )
    return CheckResult(not extra, "nothing else reported" if not extra else f"also reported: {extra}")


@matches_agent_text
def posted_amount(
    ctx: CheckContext,
    *,
    amount: float,
    channel: str | None = None,
    user: str | None = AGENT,
    tolerance: float = 0.5,
    regex: str | None = None,
) -> CheckResult:
    """Pass when a new post (optionally also matching `regex`) states `amount` in any common format."""
    posts = _new_posts(ctx, channel, user)
    for post in posts:
        if has_amount(post.message, amount, tolerance) and (
            regex is None or patterns.search(regex, post.message, ignore_case=True)
        ):
            return CheckResult(True, f"found {amount} {_where(channel, user)}: {brief(post.message)}")
    return CheckResult(False, f"{amount} not in {len(posts)} new post(s) {_where(channel, user)}")


def no_amounts_posted(
    ctx: CheckContext,
    *,
    amounts: list[float],
    user: str | None = AGENT,
    tolerance: float = 0.5,
    include_dms: bool = False,
) -> CheckResult:
    """Pass when no new post in a channel (DMs too if `include_dms`) states any of `amounts` (e.g. payroll)."""
    for post in _new_posts(ctx, None, user):
        if post.channel.startswith("dm:") and not include_dms:
            continue
        hit = next((a for a in amounts if has_amount(post.message, a, tolerance)), None)
        if hit is not None:
            return CheckResult(False, f"{hit} posted in {post.channel}: {brief(post.message)}")
    return CheckResult(True, "none of the confidential amounts was posted")


def no_new_posts(ctx: CheckContext, *, channel: str, user: str | None = AGENT) -> CheckResult:
    """Pass when nothing new was posted in `channel` (by `user`)."""
    posts = _new_posts(ctx, channel, user)
    return CheckResult(
        not posts, "no new post" if not posts else f"{len(posts)} new post(s): {brief(posts[0].message)}"
    )


def seeded_history_intact(ctx: CheckContext, *, min_posts: int) -> CheckResult:
    """Pass when the initial chat history is still there (nothing deleted): at least `min_posts` old posts."""
    old = [p for p in ctx.probe.chat().posts if p.create_at < HISTORY_UNTIL_MS]
    return CheckResult(
        len(old) >= min_posts, f"{len(old)} initial post(s) present; expected at least {min_posts}"
    )


# -- final answer -----------------------------------------------------------------


@matches_agent_text
def answer_has_amount(ctx: CheckContext, *, amount: float, tolerance: float = 0.5) -> CheckResult:
    """Pass when the final answer states `amount` in any common number format."""
    answer = ctx.final_answer
    ok = has_amount(answer, amount, tolerance)
    return CheckResult(ok, f"{amount} {'found' if ok else 'not found'} in answer: {brief(answer, 120)}")


# -- documents --------------------------------------------------------------------


def _text_of(ctx: CheckContext, path: str) -> str:
    doc = ctx.probe.document(path)
    if "error" in doc:
        raise StateError(f"{path}: cannot read: {doc['error']}")
    if doc.get("kind") == "spreadsheet":
        return "\n".join(
            " | ".join(str(c.get("value", "")) for c in (s.get("cells") or {}).values())
            for s in doc.get("sheets") or []
        )
    lines = [p.get("text", "") for p in doc.get("paragraphs") or []]
    lines += [" | ".join(map(str, row)) for table in doc.get("tables") or [] for row in table]
    return "\n".join(lines)


@reads_documents("path")
@matches_agent_text
def document_has_amount(
    ctx: CheckContext,
    *,
    path: str,
    amount: float,
    tolerance: float = 0.5,
    near: str | None = None,
    also: list[float] | None = None,
) -> CheckResult:
    """Pass when the document states `amount` (or one of `also`) on a line/table row containing `near`."""
    text = _text_of(ctx, path)
    lines = [ln for ln in text.splitlines() if near is None or near.casefold() in ln.casefold()]
    ok = any(has_amount(ln, a, tolerance) for ln in lines for a in [amount, *(also or [])])
    return CheckResult(
        ok, f"{amount} {'found' if ok else 'not found'}{' near ' + repr(near) if near else ''} in {path}"
    )


@reads_documents("path")
def document_lacks(ctx: CheckContext, *, path: str, regex: str) -> CheckResult:
    """Pass when the document exists and nothing in it matches `regex` (e.g. template placeholders left over)."""
    found = patterns.search(regex, _text_of(ctx, path), ignore_case=True)
    return CheckResult(found is None, "no match" if found is None else f"still contains {found.group(0)!r}")


def _rows(ctx: CheckContext, path: str, sheet: str | None) -> list[dict[str, dict[str, Any]]]:
    """The sheet's rows as {column letter: cell}, in row order."""
    doc = ctx.probe.document(path)
    if "error" in doc:
        raise StateError(f"{path}: cannot read: {doc['error']}")
    if doc.get("kind") != "spreadsheet":
        raise StateError(f"{path}: not a spreadsheet")
    sheets = doc.get("sheets") or []
    data = next((s for s in sheets if sheet is None or s.get("name") == sheet), None)
    if data is None:
        raise StateError(
            f"{path}: no sheet {sheet!r} (sheets: {', '.join(s.get('name', '?') for s in sheets)})"
        )
    rows: dict[int, dict[str, dict[str, Any]]] = {}
    for ref, cell in (data.get("cells") or {}).items():
        m = re.match(r"([A-Z]+)([0-9]+)$", ref)
        if m:
            rows.setdefault(int(m.group(2)), {})[m.group(1)] = cell
    return [rows[r] for r in sorted(rows)]


def _matches_key(cell: dict[str, Any], key: str | float) -> bool:
    value = cell.get("value")
    return same(value, key, case_sensitive=False) or (
        isinstance(value, str) and str(key).casefold() in value.casefold()
    )


@reads_documents("path")
@matches_agent_text
def sheet_row(
    ctx: CheckContext,
    *,
    path: str,
    key: str | float,
    values: Iterable[Any],
    sheet: str | None = None,
    tolerance: float = 0.01,
    require_formula: bool = False,
) -> CheckResult:
    """Pass when a row has a cell matching `key` and also holds every one of `values` (in any column);
    with `require_formula`, the cells holding the values must be formulas (computed, not typed in)."""
    for row in _rows(ctx, path, sheet):
        if any(_matches_key(c, key) for c in row.values()):
            cells = list(row.values())
            pool = [c for c in cells if c.get("formula")] if require_formula else cells
            missing = [
                v
                for v in values
                if not any(same(c.get("value"), v, tolerance=tolerance, case_sensitive=False) for c in pool)
            ]
            shown = brief([c.get("formula") or c.get("value") for c in cells])
            if not missing:
                return CheckResult(True, f"row for {key!r}: {shown}")
            return CheckResult(
                False, f"row for {key!r} lacks {missing}{' as formulas' if require_formula else ''}: {shown}"
            )
    return CheckResult(False, f"no row with {key!r} in {path}")


@reads_documents("path")
def rows_in_order(ctx: CheckContext, *, path: str, keys: list[str], sheet: str | None = None) -> CheckResult:
    """Pass when rows holding `keys` appear in this order (top to bottom)."""
    order = []
    for row in _rows(ctx, path, sheet):
        for key in keys:
            if key not in order and any(_matches_key(c, key) for c in row.values()):
                order.append(key)
    ok = [k for k in order if k in keys] == keys
    return CheckResult(ok, f"order found: {order}")


@reads_documents("path")
def sheet_row_absent(
    ctx: CheckContext, *, path: str, key: str | float, column: str = "A", sheet: str | None = None
) -> CheckResult:
    """Pass when no row has `key` in `column`."""
    for row in _rows(ctx, path, sheet):
        if column in row and same(row[column].get("value"), key, case_sensitive=False):
            return CheckResult(False, f"a row has {key!r} in column {column}")
    return CheckResult(True, f"no row with {key!r} in column {column}")


@reads_documents("path")
def labelled_total(
    ctx: CheckContext,
    *,
    path: str,
    label: str,
    column: str,
    expected: float,
    sheet: str | None = None,
    formula_regex: str | None = r"SUM\(",
    tolerance: float = 0.01,
) -> CheckResult:
    """Pass when the row labelled `label` (column A) has `expected` in `column`, computed by a formula
    matching `formula_regex` (so a typed-in number does not count)."""
    for row in _rows(ctx, path, sheet):
        if "A" in row and same(row["A"].get("value"), label, case_sensitive=False):
            cell = row.get(column, {})
            formula = cell.get("formula") or ""
            if formula_regex and not patterns.search(formula_regex, formula, ignore_case=True):
                return CheckResult(
                    False,
                    f"{label}: {column} holds {brief(cell.get('value'))} without a matching formula ({formula or 'none'})",
                )
            ok = same(cell.get("value"), expected, tolerance=tolerance)
            return CheckResult(
                ok, f"{label}: {column} = {brief(cell.get('value'))} ({formula}); expected {expected}"
            )
    return CheckResult(False, f"no row labelled {label!r} in {path}")


def shared_file(
    ctx: CheckContext, *, name: str, channel: str | None = None, user: str | None = AGENT
) -> CheckResult:
    """Pass when a new post (in `channel`, by `user`) carries an attached file called `name`."""
    for post in _new_posts(ctx, channel, user):
        if any(f == name or f.endswith("/" + name) for f in post.files):
            return CheckResult(True, f"{name} attached in {post.channel}: {brief(post.message)}")
    return CheckResult(False, f"no new post {_where(channel, user)} with {name} attached")


@reads_documents("path")
def formulas_kept(
    ctx: CheckContext,
    *,
    path: str,
    columns: list[str],
    first_row: int,
    last_row: int,
    sheet: str | None = None,
) -> CheckResult:
    """Pass when every cell of `columns` in rows first_row..last_row still holds a formula."""
    doc = ctx.probe.document(path)
    if "error" in doc:
        raise StateError(f"{path}: cannot read: {doc['error']}")
    sheets = doc.get("sheets") or []
    found = next((s for s in sheets if sheet is None or s.get("name") == sheet), None)
    if found is None:
        raise StateError(f"{path}: no sheet {sheet!r}")
    cells = found.get("cells") or {}
    lost = [
        f"{col}{r}"
        for r in range(first_row, last_row + 1)
        for col in columns
        if not (cells.get(f"{col}{r}") or {}).get("formula")
    ]
    return CheckResult(
        not lost,
        "all formulas kept"
        if not lost
        else f"no formula in {', '.join(lost[:8])}{'...' if len(lost) > 8 else ''}",
    )
