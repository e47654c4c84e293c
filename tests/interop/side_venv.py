"""Virtualenvs of their own for the official clients of other ecosystems.

Their pins clash with egym's (verifiers pins mcp==2.0.0 and openai<3; Harbor and
NeMo Gym need Python 3.12), and a conformance test should see egym the way their
users do: over the wire, from their process. So each client gets a venv of its own, made
once per requirement set (the folder name carries its hash) from the package registries, by uv
(pip took 100-130 s a venv on a busy 2-core machine, uv 9-15 s; the venv keeps pip for the tests
that install a package of their own into it), and reused by later runs on the same machine:
they live in the user's cache (`$XDG_CACHE_HOME/egym/venvs`, else `~/.cache/egym/venvs`), not in
the checkout, so a CI run on a clean checkout does not install them again.

    python = side_venv("harbor", ["harbor==0.26.0"], python="3.12")
    subprocess.run([python, "-c", "import harbor"], check=True)
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from uv import find_uv_bin

VENVS = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "egym" / "venvs"


def find_python(version: str) -> str | None:
    """An interpreter for `version` ("3.12"): on PATH, or one of pyenv's versions."""
    if sys.version.startswith(version + "."):
        return sys.executable
    found = shutil.which(f"python{version}")
    if found and subprocess.run([found, "-V"], capture_output=True).returncode == 0:
        return found  # pyenv's shim exits non-zero for a version it does not select
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    for candidate in sorted(pyenv.glob(f"{version}.*"), reverse=True):
        if (candidate / "bin" / "python").exists():
            return str(candidate / "bin" / "python")
    return None


def side_venv(name: str, requirements: list[str], *, python: str | None = None) -> str:
    """The python of a venv holding `requirements`; made on first use (fails the test if pip fails)."""
    interpreter = find_python(python) if python else sys.executable
    if interpreter is None:
        pytest.fail(f"{name}'s client needs Python {python}: install it (pyenv install {python})")
    key = hashlib.sha256("\n".join([interpreter, *requirements]).encode()).hexdigest()[:12]
    venv = (VENVS / f"{name}-{key}").resolve()
    bin_python = venv / "bin" / "python"
    VENVS.mkdir(parents=True, exist_ok=True)
    with open(VENVS / f"{name}.lock", "w") as lock:  # pytest-xdist or two runs: one builder
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (venv / ".complete").exists():
            return str(bin_python)
        shutil.rmtree(venv, ignore_errors=True)  # a half-made one from a crashed run
        subprocess.run([interpreter, "-m", "venv", str(venv)], check=True)
        done = subprocess.run(
            [find_uv_bin(), "pip", "install", "-q", "--python", str(bin_python), *requirements],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            pytest.fail(f"uv pip install {' '.join(requirements)} for {name}: {done.stderr.strip()[-2000:]}")
        (venv / ".complete").touch()
    return str(bin_python)
