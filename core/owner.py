"""Who owns a container: host, pid and the pid's start time (so a reused pid is not mistaken for us)."""

from __future__ import annotations

import os
import socket


def process_start_time(pid: int) -> str | None:
    """Start time of a live process in clock ticks since boot, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    # Field 22; the command name (field 2) may contain spaces, so split after ')'.
    return stat.rsplit(")", 1)[1].split()[19]


def owner_label(pid: int | None = None) -> str:
    pid = pid or os.getpid()
    return f"{socket.gethostname()}:{pid}:{process_start_time(pid)}"


def owner_alive(label: str) -> bool:
    """False only when we can tell the owner is gone: same host, and the pid is dead or reused."""
    try:
        host, pid, started = label.rsplit(":", 2)
    except ValueError:
        return False
    if host != socket.gethostname():
        return True  # another machine's container: not ours to judge
    return process_start_time(int(pid)) == started
