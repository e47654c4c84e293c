"""Text the agent chose (file names above all) as people see it and as JSON stores it.

A file name is bytes. The container's listing decodes it with `surrogateescape`, so
a byte that is not UTF-8 arrives as a lone surrogate (U+DC80..U+DCFF): lossless,
but a JSON encoder or an HTTP response refuses it. A name may also hold a newline
or a terminal escape, which forges lines in a diff people read. So:

- `shown(text)`: one unambiguous line for people: control, format and separator
  characters and undecodable bytes become `\\xNN` / `\\uNNNN` escapes, a backslash
  is doubled; printable text (accents, CJK, emoji) is kept.
- `json_safe(text)`: only the lone surrogates escaped, everything else kept: what
  must hold for any string put in a Grade, a page or a JSON file.
"""

from __future__ import annotations

import re

_SURROGATE = re.compile("[\ud800-\udfff]")

__all__ = ["json_safe", "shown"]


def _escape(ch: str) -> str:
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:  # surrogateescape: the undecodable byte itself
        return f"\\x{code - 0xDC00:02x}"
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def shown(text: str) -> str:
    """`text` as one unambiguous, printable line (see the module docstring)."""
    if text.isprintable() and "\\" not in text:
        return text
    return "".join(
        "\\\\" if ch == "\\" else ch if ch.isprintable() or ch == " " else _escape(ch) for ch in text
    )


def json_safe(text: str) -> str:
    """`text` with lone surrogates escaped, so encoding it as UTF-8 (a JSON dump, a page) cannot fail."""
    if text.isascii():  # nearly always: no regex run per string of every grade
        return text
    return _SURROGATE.sub(lambda m: _escape(m.group(0)), text)
