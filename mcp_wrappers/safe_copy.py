"""The grader's file reader: `python3 -I -m mcp_wrappers.safe_copy MAX_BYTES SRC DEST [SRC DEST ...]`.

Copies each file SRC of the agent's tree to DEST in the grader's own folder, and
prints ONE JSON object mapping each SRC to one of:

  {"copied": size}          DEST now holds SRC's bytes
  {"absent": why}           no regular file there: missing, a folder or other special
                            file, or reached through a symlink (any part of the path)
  {"refused": why}          there, but the agent made it unreadable: over MAX_BYTES,
                            a mode the grader cannot read, or a hard link to a file of
                            another owner

Run by the grader (grader/probe.py) as OS user `grader`, after the episode. No
symlink is ever followed: every part of SRC is opened relative to its parent folder
with O_NOFOLLOW (openat), so a folder the agent linked to /egym or /etc cannot lead
the reader there, and there is no check-then-open window to race. As `grader`, a
reader that is fooled anyway still cannot read what root alone may (/etc/shadow).

Paths are container paths; EGYM_SANDBOX_ROOT (set by the test-only LocalSandbox)
names the folder that stands for `/`. Exit status 0 whenever the JSON was printed;
2 on bad usage.
"""

from __future__ import annotations

import errno
import json
import os
import posixpath
import stat
import sys

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # NONBLOCK: a FIFO must not hang the open


class Absent(Exception):
    pass


class Refused(Exception):
    pass


def _parts(path: str) -> list[str]:
    if not path.startswith("/"):
        raise Absent(f"{path}: not an absolute path")
    return [p for p in posixpath.normpath(path).split("/") if p and p != "."]


def _open_parent(root: int, parts: list[str], shown: str) -> int:
    """The folder holding the last part, opened one part at a time without following symlinks."""
    fd = os.dup(root)
    try:
        for part in parts[:-1]:
            try:
                nxt = os.open(part, _DIR, dir_fd=fd)
            except OSError as exc:
                raise _classify(exc, shown, folder=part) from None
            os.close(fd)
            fd = nxt
        return fd
    except BaseException:
        os.close(fd)
        raise


def _classify(exc: OSError, shown: str, folder: str | None = None) -> Exception:
    what = f"the folder {folder!r} on its path" if folder else "it"
    if exc.errno == errno.ELOOP or (folder and exc.errno == errno.ENOTDIR):
        # O_NOFOLLOW on a symlink: ELOOP (O_DIRECTORY on a link or a file: ENOTDIR).
        return Absent(f"{shown}: {what} is a symlink or not a folder; the grader follows no symlinks")
    if exc.errno in (errno.EACCES, errno.EPERM):
        return Refused(f"{shown}: {what} is not readable by the grader (permission denied)")
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        return Absent(f"{shown}: no such file")
    return Refused(f"{shown}: cannot be read ({os.strerror(exc.errno or 0)})")


def read(root: int, src: str, max_bytes: int) -> bytes:
    """SRC's bytes (Absent / Refused as above)."""
    parts = _parts(src)
    if not parts:
        raise Absent(f"{src}: not a file")
    parent = _open_parent(root, parts, src)
    try:
        owner = os.fstat(parent).st_uid
        try:
            fd = os.open(parts[-1], _FILE, dir_fd=parent)
        except OSError as exc:
            raise _classify(exc, src) from None
    finally:
        os.close(parent)
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise Absent(f"{src}: not a regular file")
    with os.fdopen(fd, "rb") as f:
        if st.st_nlink > 1 and st.st_uid != owner:
            raise Refused(f"{src}: a hard link to a file its folder's owner does not own")
        if st.st_size > max_bytes:
            raise Refused(f"{src} has {st.st_size:,} bytes, over the grader's {max_bytes:,}-byte limit")
        data = f.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise Refused(f"{src} is over the grader's {max_bytes:,}-byte limit")
    return data


def write(root_path: str, dest: str, data: bytes) -> None:
    """DEST in the grader's own folder (made if needed), readable by the grader alone."""
    target = os.path.join(root_path, *_parts(dest))
    os.makedirs(os.path.dirname(target), mode=0o700, exist_ok=True)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def copy_all(pairs: list[tuple[str, str]], max_bytes: int, root_path: str = "/") -> dict[str, dict]:
    out: dict[str, dict] = {}
    root = os.open(root_path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for src, dest in pairs:
            try:
                data = read(root, src, max_bytes)
            except Absent as exc:
                out[src] = {"absent": str(exc)}
                continue
            except Refused as exc:
                out[src] = {"refused": str(exc)}
                continue
            write(root_path, dest, data)
            out[src] = {"copied": len(data)}
    finally:
        os.close(root)
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) < 3 or len(args) % 2 != 1 or not args[0].isdigit():
        print(__doc__, file=sys.stderr)
        return 2
    pairs = list(zip(args[1::2], args[2::2], strict=True))
    root = os.environ.get("EGYM_SANDBOX_ROOT") or "/"
    json.dump(copy_all(pairs, int(args[0]), root), sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
