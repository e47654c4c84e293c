"""Mattermost's post search syntax turned into SQL.

Supported: plain words (prefix match at a word start, `budg*` works too),
"quoted phrases", `-word` exclusion, and the modifiers `from:username`,
`in:channel-name`, `after:YYYY-MM-DD`, `before:YYYY-MM-DD`, `on:YYYY-MM-DD`.
"""

from __future__ import annotations

import datetime as dt
import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from mcp_wrappers.mattermost_compat.errors import ApiError

MODIFIERS = ("from", "in", "after", "before", "on")


@dataclass
class Query:
    words: list[str] = field(default_factory=list)
    excluded: list[str] = field(default_factory=list)
    phrases: list[str] = field(default_factory=list)
    modifiers: dict[str, list[str]] = field(default_factory=dict)


def parse(terms: str) -> Query:
    query = Query()
    try:
        tokens = shlex.split(terms, posix=True)
    except ValueError:  # an unbalanced quote: search the words as typed
        tokens = terms.replace('"', " ").split()
    for token in tokens:
        key, sep, value = token.partition(":")
        if sep and key.lower() in MODIFIERS and value:
            query.modifiers.setdefault(key.lower(), []).append(value.lstrip("@~#").lower())
        elif " " in token:
            query.phrases.append(token)
        elif token.startswith("-") and len(token) > 1:
            query.excluded.append(token[1:].rstrip("*"))
        elif token.strip("*"):
            query.words.append(token.rstrip("*"))
    return query


def _word_pattern(word: str) -> str:
    # \m is PostgreSQL's start-of-word; re.escape only escapes non-alphanumerics, which ARE accepts.
    return r"\m" + re.escape(word) if word[0].isalnum() else re.escape(word)


def _day_ms(value: str, offset_s: int) -> int:
    try:
        day = dt.datetime.strptime(value, "%Y-%m-%d").replace(tzinfo=dt.UTC)
    except ValueError:
        raise ApiError(
            400, "api.post.search_posts.invalid_date.app_error", f"Invalid date '{value}': use YYYY-MM-DD."
        ) from None
    return int(day.timestamp() - offset_s) * 1000


def where(query: Query, *, or_search: bool, tz_offset_s: int = 0) -> tuple[str, list[Any]]:
    """SQL conditions over `p` (posts), `c` (channels) and `u` (users, the author)."""
    clauses, args = [], []
    text = [("p.message ~* %s", _word_pattern(w)) for w in query.words]
    text += [("p.message ILIKE %s", f"%{phrase}%") for phrase in query.phrases]
    if text:
        joiner = " OR " if or_search else " AND "
        clauses.append("(" + joiner.join(sql for sql, _ in text) + ")")
        args += [arg for _, arg in text]
    for word in query.excluded:
        clauses.append("p.message !~* %s")
        args.append(_word_pattern(word))
    mods = query.modifiers
    if mods.get("from"):
        clauses.append("u.username = ANY(%s)")
        args.append(mods["from"])
    if mods.get("in"):
        clauses.append("(c.name = ANY(%s) OR lower(c.display_name) = ANY(%s))")
        args += [mods["in"], mods["in"]]
    day = 86_400_000
    for value in mods.get("after", []):
        clauses.append("p.create_at >= %s")
        args.append(_day_ms(value, tz_offset_s) + day)
    for value in mods.get("before", []):
        clauses.append("p.create_at < %s")
        args.append(_day_ms(value, tz_offset_s))
    for value in mods.get("on", []):
        clauses.append("p.create_at >= %s AND p.create_at < %s")
        args += [_day_ms(value, tz_offset_s), _day_ms(value, tz_offset_s) + day]
    return " AND ".join(clauses) or "TRUE", args
