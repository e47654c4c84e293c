"""Initial-state overlays as deterministic tar archives laid out for the container's egym-init.

Layout inside the archive (extracted to /egym/overlay):
  <key>/NN-<name>         each app's files, under its overlay key (mcp_wrappers/<app>/app.toml), in order:
                          sql/ run as superuser in the `company` database, chat/ loaded through the chat API
  workspace/...           copied into /workspace, owned by agent
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from core.errors import TaskError
from gym.tasks import Overlay, overlay_keys


def _add_bytes(tar: tarfile.TarFile, name: str, data: bytes, mode: int = 0o644) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = len(data), mode, 0
    tar.addfile(info, io.BytesIO(data))


def _add_dir(tar: tarfile.TarFile, name: str) -> None:
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, 0
    tar.addfile(info)


def overlay_tar(
    *layers: tuple[Overlay, Path], extra: dict[str, bytes] | None = None, prefix: str = ""
) -> bytes:
    """One archive from several overlays (world first, then task); byte-identical for identical input.

    `extra` adds files by archive name; `prefix` puts everything under a folder (for build contexts).
    """
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as raw:
        tar = _Prefixed(raw, prefix)
        for folder in [*overlay_keys(), "workspace"]:
            _add_dir(tar, folder)
        counter = 0
        for overlay, base in layers:
            for kind, files in overlay.app_files().items():
                for rel in files:
                    src = base / rel
                    if not src.is_file():
                        raise TaskError(f"{base}: initial_state.{kind}: file '{rel}' not found")
                    counter += 1
                    _add_bytes(tar, f"{kind}/{counter:03d}-{src.name}", src.read_bytes())
            if overlay.workspace:
                root = base / overlay.workspace
                if not root.is_dir():
                    raise TaskError(
                        f"{base}: initial_state.workspace: folder '{overlay.workspace}' not found"
                    )
                for src in sorted(root.rglob("*")):
                    rel = src.relative_to(root).as_posix()
                    if src.is_dir():
                        _add_dir(tar, f"workspace/{rel}")
                    else:
                        _add_bytes(tar, f"workspace/{rel}", src.read_bytes())
        for name, data in sorted((extra or {}).items()):
            _add_bytes(raw, name, data)
    return buf.getvalue()


class _Prefixed:
    """A TarFile whose member names all start with `prefix`."""

    def __init__(self, tar: tarfile.TarFile, prefix: str):
        self.tar, self.prefix = tar, prefix

    def addfile(self, info: tarfile.TarInfo, fileobj=None) -> None:
        info.name = self.prefix + info.name
        self.tar.addfile(info, fileobj)
