"""File operations run *inside* the sandbox as the agent user (so file permissions apply).

The harness starts this file's source with `python3 -c` once per episode and
keeps it running (see fileops.py): one JSON request per line on stdin, one
JSON reply per line on stdout, {"ok": true, "output": ...} or {"ok": false,
"error": ...}. Standard library only: it runs on the container's Python.
"""

import fnmatch
import glob as globlib
import json
import os
import re
import sys

MAX_LINE = 2000
SKIP_DIRS = {".git", "node_modules", "__pycache__", ".venv"}


class Fail(Exception):
    pass


def _path(path):
    return os.path.normpath(os.path.join(os.getcwd(), os.path.expanduser(path)))


def _read_text(path):
    if os.path.isdir(path):
        raise Fail(f"{path} is a directory; use glob or bash `ls` to list it")
    with open(path, "rb") as handle:
        data = handle.read()
    if b"\0" in data[:8192]:
        raise Fail(f"{path} is a binary file ({len(data):,} bytes); inspect it with bash tools instead")
    return data.decode("utf-8", errors="replace")


def read(path, offset=1, limit=2000):
    path = _path(path)
    lines = _read_text(path).splitlines()
    if not lines:
        return f"({path} is empty)"
    start = max(offset, 1)
    if start > len(lines):
        raise Fail(f"offset {offset} is past the end of {path} ({len(lines)} lines)")
    shown = lines[start - 1 : start - 1 + limit]
    out = []
    for number, line in enumerate(shown, start):
        if len(line) > MAX_LINE:
            line = line[:MAX_LINE] + f" [... {len(line) - MAX_LINE} more characters]"
        out.append(f"{number:>6}\t{line}")
    end = start + len(shown) - 1
    if start > 1 or end < len(lines):
        out.append(f"(lines {start}-{end} of {len(lines)}; use offset/limit to see more)")
    return "\n".join(out)


def write(path, content):
    path = _path(path)
    if os.path.isdir(path):
        raise Fail(f"{path} is a directory")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(content)
    return f"Wrote {len(content.encode()):,} bytes ({len(content.splitlines())} lines) to {path}"


def edit(path, old_string, new_string, replace_all=False):
    path = _path(path)
    if old_string == new_string:
        raise Fail("old_string and new_string are identical; nothing to change")
    if not old_string:
        raise Fail("old_string is empty; use write to create or overwrite a file")
    text = _read_text(path)
    count = text.count(old_string)
    if count == 0:
        hint = (
            " (it does match if whitespace is ignored: check indentation and line breaks)"
            if _squash(old_string) in _squash(text)
            else ""
        )
        raise Fail(f"old_string not found in {path}{hint}")
    if count > 1 and not replace_all:
        lines = _match_lines(text, old_string)
        raise Fail(
            f"old_string occurs {count} times in {path} (at lines {', '.join(map(str, lines))}); "
            "include more surrounding text to make it unique, or set replace_all to true"
        )
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text.replace(old_string, new_string))
    return f"Edited {path}: replaced {count if replace_all else 1} occurrence{'s' if count > 1 and replace_all else ''}"


def _squash(text):
    return re.sub(r"\s+", " ", text).strip()


def _match_lines(text, needle, limit=10):
    lines, start = [], 0
    while len(lines) < limit:
        index = text.find(needle, start)
        if index < 0:
            break
        lines.append(text.count("\n", 0, index) + 1)
        start = index + 1
    return lines


def glob(pattern, path=".", limit=200):
    root = _path(path)
    if not os.path.isdir(root):
        raise Fail(f"{root} is not a directory")
    full = pattern if os.path.isabs(pattern) else os.path.join(root, pattern)
    found = [p for p in globlib.glob(full, recursive=True) if not set(p.split(os.sep)) & SKIP_DIRS]
    found.sort(key=lambda p: (-os.path.getmtime(p) if os.path.exists(p) else 0, p))
    if not found:
        return f"No files match {pattern} under {root}"
    more = f"\n({len(found) - limit} more not shown; narrow the pattern)" if len(found) > limit else ""
    return "\n".join(found[:limit]) + more


def _files(root, include):
    if os.path.isfile(root):
        yield root
        return
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for name in sorted(names):
            if include is None or fnmatch.fnmatch(name, include):
                yield os.path.join(folder, name)


def grep(pattern, path=".", include=None, ignore_case=False, limit=200):
    try:
        regex = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        raise Fail(f"invalid regular expression {pattern!r}: {exc}") from None
    root = _path(path)
    if not os.path.exists(root):
        raise Fail(f"{root} does not exist")
    hits, total = [], 0
    for file in _files(root, include):
        try:
            with open(file, "rb") as handle:
                data = handle.read(5_000_000)
        except OSError:
            continue
        if b"\0" in data[:8192]:
            continue
        for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
            if regex.search(line):
                total += 1
                if len(hits) < limit:
                    hits.append(f"{file}:{number}:{line[:400]}")
    if not hits:
        return f"No matches for {pattern!r} under {root}"
    more = f"\n({total - limit} more matches not shown; narrow the search)" if total > limit else ""
    return "\n".join(hits) + more


OPS = {"read": read, "write": write, "edit": edit, "glob": glob, "grep": grep}


def handle(op, args):
    try:
        return {"ok": True, "output": OPS[op](**args)}
    except Fail as exc:
        return {"ok": False, "error": str(exc)}
    except OSError as exc:
        return {"ok": False, "error": f"{exc.strerror or exc}: {exc.filename or ''}".rstrip(": ")}


def serve():
    """One request per stdin line: {"id", "op", "args", "cwd"}; one reply per stdout line, same id."""
    sys.stdout.write(json.dumps({"pid": os.getpid()}) + "\n")
    sys.stdout.flush()
    for line in sys.stdin:
        request = json.loads(line)
        try:
            os.chdir(request.get("cwd") or "/workspace")
        except OSError:
            os.chdir("/workspace")
        reply = handle(request["op"], request["args"])
        reply["id"] = request["id"]
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    serve()
