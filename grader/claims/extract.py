"""What a line of the agent's text asserts: the values of each declared kind, where they sit.

A kind says how its values are written and how two spellings are compared:

- `extract: amount`: money as people write it (12300, 12,300.00, 12.300,00, EUR 12 300),
  never the digits of a date, a time, an id (INV-2025-0042, CC-100, #12), a percentage,
  a policy section (section 3.2) or a bare year;
- `extract: count` with `noun`: a number next to what it counts ("3 open tickets",
  "tickets: 3", "no open tickets" is 0, small number words too);
- `extract: date`: 2025-03-14, 14.03.2025, 14 March 2025, March 14th (year optional);
- `extract: duration`: 5.7 hours, 5 h 41 min, 341 minutes (in minutes);
- `extract: email`;
- `values`: a closed lexicon (names, statuses, codes): each entry a text, or a value
  with its own regex; matched as whole words, in any case unless `case_sensitive`,
  with or without accents;
- `regex`: every match (its `value` group when it has one) is a value.

Text is folded first (accents stripped), so "García" and "Garcia" are one name. Each
span of a line feeds one kind: lexicons and regexes claim their spans first, then
e-mails, dates, durations, counts and amounts, so the digits of a date are never
also an amount.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from grader import patterns
from grader.rubric import ClaimKind

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september")
MONTHS += ("october", "november", "december")
_MONTH = r"(?P<month>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_DATES = (
    r"(?<![\d.-])(?P<year>\d{4})-(?P<mon>\d{1,2})-(?P<day>\d{1,2})(?![\d-])",
    r"(?<![\d.])(?P<day>\d{1,2})\.(?P<mon>\d{1,2})\.(?P<year>\d{4})(?![\d.]\d)",
    rf"(?<!\d)(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}\b\.?(?:,?\s+(?P<year>\d{{4}})(?!\d))?",
    rf"\b{_MONTH}\.?\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?(?!\d)(?:,?\s+(?P<year>\d{{4}})(?!\d))?",
    # The first days of a list that names its month once: the 21 of "21 and 24 March".
    rf"(?<![\d.])(?P<day>\d{{1,2}})(?:st|nd|rd|th)?(?=(?:\s*(?:,|and|&|or)\s*\d{{1,2}}(?:st|nd|rd|th)?)+\s+(?:of\s+)?{_MONTH}\b(?:,?\s+(?P<year>\d{{4}}))?)",
)
_EMAIL = r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
_DURATION = (
    r"(?<![\d.,])(?P<hours>\d+(?:[.,]\d+)?)\s*(?:h|hrs?|hours?)\b(?:\W{0,3}(?:and\s*)?(?P<minutes>\d+)\s*(?:m|mins?|minutes?)\b)?"
    r"|(?<![\d.,])(?P<only>\d+)\s*(?:m|mins?|minutes?)\b"
)
# A number as written: thousands grouped by , . ' or a narrow/no-break space, up to two decimals.
_NUMBER = r"(?<![\w.,#/-])(?:\d{1,3}(?:[,.'\u00a0\u202f]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?)(?![\w%]|[.,/-]\d)"
_CURRENCY = r"(?:eur|euros?|€|usd|\$|gbp|£|chf)"
_UNITS = (
    r"(?:business |working |calendar )?days?|weeks?|months?|years?|hours?|hrs?|minutes?|mins?|nights?|seats?"
    r"|people|persons?|users?|licen[cs]es?|tickets?|invoices?|claims?|items?|lines?|units?|deals?|requests?"
    r"|employees?|customers?|contacts?|times|pages?|rows?|sheets?"
)
# Numbers that are not amounts: a time, a percentage, a policy section, a list item's number.
_NOT_AMOUNT = (
    r"(?<!\d)\d{1,2}:\d{2}(?::\d{2})?(?!\d)",
    r"(?<![\w.,(])\d{1,2}\)|^\s*(?:[-*\u2022]\s*)?\d{1,2}\.(?=\s)",
    r"(?<![\d.,])\d+(?:[.,]\d+)?\s*(?:%|percent\b|per cent\b)",
    r"(?:section|sections|§|clause|rule|paragraph|para\.?|chapter)\s*\d+(?:\.\d+)*(?:\s*(?:and|,|or)\s*\d+(?:\.\d+)*)*",
    # A number of things, not money: "30 days", "a 3-year term", "the 140-seat renewal".
    rf"(?<![\d.,])\d+(?:[.,]\d+)?(?:\s*-\s*|\s+)(?:{_UNITS})\b",
)
# Counts people write in words: "no open tickets" is 0.
_WORDS = {"no": 0, "none": 0, "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_WORDS |= {"seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
_COUNT_NUMBER = r"(?<![\w.,#/-])(?:\d+|" + "|".join(_WORDS) + r")(?![\w]|[.,]\d)"
ORDER = ("values", "regex", "email", "date", "duration", "count", "amount")  # who claims a span first


@dataclass(frozen=True)
class Found:
    """One value of a kind on a line: normalised value, the text as written, and its span."""

    kind: str
    value: Any
    text: str
    start: int
    end: int


def fold(text: str) -> str:
    """Accents stripped (NFKD without combining marks); case is left to the patterns."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def whole_word(text: str) -> str:
    """`text` as a whole word (names, codes, addresses): not inside a longer word, number or address."""
    return rf"(?<![\w.@-]){re.escape(fold(text))}(?![\w@-])"


def parse_number(token: str) -> float | None:
    """A number as people write it: 12,300.50 / 12.300,50 / 12'300 / 1.5 (the last separator with
    one or two digits after it is the decimal point)."""
    token = re.sub(r"['\u00a0\u202f ]", "", token.strip().rstrip(".,"))
    if "," in token and "." in token:
        decimal = "," if token.rfind(",") > token.rfind(".") else "."
    elif token.count(",") == 1 and len(token.split(",")[1]) in (1, 2):
        decimal = ","
    elif token.count(".") == 1 and len(token.split(".")[1]) in (1, 2):
        decimal = "."
    else:
        decimal = None
    for sep in {",", "."} - {decimal}:
        token = token.replace(sep, "")
    try:
        return float(token.replace(",", ".")) if token else None
    except ValueError:
        return None


def normalize(kind: ClaimKind, value: Any) -> Any:
    """The value an item expects, in the form extraction produces (so the two compare)."""
    if kind.extract in ("amount", "duration"):
        number = value if isinstance(value, int | float) else parse_number(str(value))
        return None if number is None else round(float(number), 2)
    if kind.extract == "count":
        return int(value)
    if kind.extract == "date":
        day = value if isinstance(value, dt.date) else dt.date.fromisoformat(str(value)[:10])
        return (day.year, day.month, day.day)
    if kind.values is not None:
        wanted = fold(str(value))
        for entry in kind.entries():
            if (entry.value if kind.case_sensitive else entry.value.casefold()) == (
                wanted if kind.case_sensitive else wanted.casefold()
            ):
                return entry.value
        return str(value)
    if kind.normalize == "number":
        number = value if isinstance(value, int | float) else parse_number(str(value))
        return None if number is None else float(number)
    text = fold(str(value))
    return text if kind.case_sensitive else text.casefold()


def same(kind: ClaimKind, a: Any, b: Any, tolerance: float | None = None) -> bool:
    """Two normalised values of `kind` are the same value (dates without a year match any year)."""
    if a is None or b is None:
        return False
    if kind.extract == "date":
        return a[1:] == b[1:] and (a[0] is None or b[0] is None or a[0] == b[0])
    if kind.extract in ("amount", "duration"):
        tol = kind.tolerance if tolerance is None else tolerance
        return math.isclose(a, b, abs_tol=tol + 1e-9)
    if kind.values is not None and not kind.case_sensitive:
        return str(a).casefold() == str(b).casefold()
    return a == b


# -- extractors: (kind, folded line, taken spans) -> values found -----------------------------


def _free(start: int, end: int, taken: list[tuple[int, int]]) -> bool:
    return all(end <= s or start >= e for s, e in taken)


def _lexicon_hits(name: str, kind: ClaimKind, line: str) -> list[Found]:
    """Every match of every entry, overlapping ones too (_longest then picks): read one at a time, the
    "receipt, no" of "has a receipt, no receipt" (as in "Receipt: no") would hide the "no receipt"."""
    hits = []
    for entry in kind.entries():
        pattern = entry.regex or whole_word(entry.value)
        for m in patterns.finditer(pattern, line, ignore_case=not kind.case_sensitive, overlapped=True):
            if m.end() > m.start():
                hits.append(Found(name, entry.value, m.group(0), m.start(), m.end()))
    return hits


def _longest(hits: list[Found], taken: list[tuple[int, int]]) -> list[Found]:
    """Longest first, then leftmost, across every lexicon: "Anna Schmidt" wins over an entry "Anna"
    inside it, and a title "Account Executive" over a department "Executive"."""
    out: list[Found] = []
    for found in sorted(hits, key=lambda f: (-(f.end - f.start), f.start)):
        if _free(found.start, found.end, taken + [(f.start, f.end) for f in out]):
            out.append(found)
    return out


def _regex(name: str, kind: ClaimKind, line: str, taken: list[tuple[int, int]]) -> list[Found]:
    out = []
    for m in patterns.finditer(kind.regex, line, ignore_case=not kind.case_sensitive):
        group = "value" if "value" in m.re.groupindex and m.group("value") is not None else 0
        text = m.group(group)
        if text and _free(m.start(), m.end(), taken):
            value = parse_number(text) if kind.normalize == "number" else text
            out.append(
                Found(
                    name,
                    value if kind.case_sensitive or not isinstance(value, str) else value.casefold(),
                    text,
                    m.start(),
                    m.end(),
                )
            )
    return out


def _email(name: str, kind: ClaimKind, line: str, taken: list[tuple[int, int]]) -> list[Found]:
    return [
        Found(name, m.group(0).rstrip(".").casefold(), m.group(0), m.start(), m.end())
        for m in patterns.finditer(_EMAIL, line)
        if _free(m.start(), m.end(), taken)
    ]


def _month(text: str) -> int:
    return next(i for i, month in enumerate(MONTHS, 1) if month.startswith(text.lower()[:3]))


def _date(name: str, kind: ClaimKind, line: str, taken: list[tuple[int, int]]) -> list[Found]:
    out: list[Found] = []
    for pattern in _DATES:
        for m in patterns.finditer(pattern, line, ignore_case=True):
            if not _free(m.start(), m.end(), taken + [(f.start, f.end) for f in out]):
                continue
            groups = m.groupdict()
            month = int(groups["mon"]) if groups.get("mon") else _month(groups["month"])
            year = int(groups["year"]) if groups.get("year") else None
            try:
                dt.date(year or 2000, month, int(groups["day"]))
            except ValueError:
                continue
            out.append(Found(name, (year, month, int(groups["day"])), m.group(0), m.start(), m.end()))
    return out


def _duration(name: str, kind: ClaimKind, line: str, taken: list[tuple[int, int]]) -> list[Found]:
    out = []
    for m in patterns.finditer(_DURATION, line, ignore_case=True):
        if not _free(m.start(), m.end(), taken):
            continue
        if m.group("only"):
            minutes = float(m.group("only"))
        else:
            minutes = (parse_number(m.group("hours")) or 0.0) * 60 + float(m.group("minutes") or 0)
        out.append(Found(name, round(minutes, 2), m.group(0), m.start(), m.end()))
    return out


def _count(name: str, kind: ClaimKind, line: str, taken: list[tuple[int, int]]) -> list[Found]:
    """A number with the noun within 25 characters, on either side, with no other digit or list break
    between them ("3 open tickets", "open tickets: 3"; not the 7 of "no open tickets; 7 closed")."""
    nouns = [(m.start(), m.end()) for m in patterns.finditer(kind.noun or "", line, ignore_case=True)]

    def joined(gap: str) -> bool:
        return len(gap) <= 25 and not re.search(r"\d|[;|]|,\s", gap)

    blocked = taken + _date_spans(line)  # the 2025 of "tickets created in March 2025" counts nothing
    out = []
    for m in patterns.finditer(_COUNT_NUMBER, line, ignore_case=True):
        if not _free(m.start(), m.end(), blocked) or re.fullmatch(r"(?:19|20)\d\d", m.group(0)):
            continue
        near = any(
            (start >= m.end() and joined(line[m.end() : start]))
            or (m.start() >= end and joined(line[end : m.start()]))
            for start, end in nouns
        )
        if near:
            token = m.group(0).lower()
            value = _WORDS[token] if token in _WORDS else int(token)
            out.append(Found(name, value, m.group(0), m.start(), m.end()))
    return out


def _date_spans(line: str) -> list[tuple[int, int]]:
    return [
        (m.start(), m.end()) for pattern in _DATES for m in patterns.finditer(pattern, line, ignore_case=True)
    ]


def _masked(line: str) -> list[tuple[int, int]]:
    """Spans whose digits are no amount: dates, times, percentages, sections, ids (see _NUMBER), counts of things."""
    spans = _date_spans(line)
    spans += [
        (m.start(), m.end())
        for pattern in _NOT_AMOUNT
        for m in patterns.finditer(pattern, line, ignore_case=True)
    ]
    return spans


def _amount(name: str, kind: ClaimKind, line: str, taken: list[tuple[int, int]]) -> list[Found]:
    blocked = taken + _masked(line)
    out = []
    for m in patterns.finditer(_NUMBER, line):
        if not _free(m.start(), m.end(), blocked):
            continue
        text = m.group(0)
        value = parse_number(text)
        if value is None:
            continue
        # A bare four-digit year (1900-2099) is not an amount unless a currency stands next to it.
        if re.fullmatch(r"(?:19|20)\d\d", text):
            around = line[max(0, m.start() - 5) : m.end() + 5]
            if not re.search(_CURRENCY, around, re.IGNORECASE):
                continue
        out.append(Found(name, round(value, 2), text, m.start(), m.end()))
    return out


_EXTRACTORS = {
    "regex": _regex,
    "email": _email,
    "date": _date,
    "duration": _duration,
    "count": _count,
    "amount": _amount,
}


def _rank(kind: ClaimKind) -> int:
    return ORDER.index(kind.source)


def extract_line(kinds: dict[str, ClaimKind], line: str) -> list[Found]:
    """Every value of every kind on one (folded) line; each span feeds one kind, in ORDER."""
    lexicons = [_lexicon_hits(name, kind, line) for name, kind in kinds.items() if kind.source == "values"]
    found = _longest([hit for hits in lexicons for hit in hits], [])
    taken = [(f.start, f.end) for f in found]
    for name, kind in sorted(kinds.items(), key=lambda kv: _rank(kv[1])):
        if kind.source == "values":
            continue  # read above, all lexicons together
        got = _EXTRACTORS[kind.source](name, kind, line, taken)
        found += got
        taken += [(f.start, f.end) for f in got]
    return sorted(found, key=lambda f: f.start)
