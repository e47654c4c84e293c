"""Shared helpers for the task library tests: the Acme world's folders and its generator, imported by path."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ACME = ROOT / "tasks" / "acme"
RUBRICS = ROOT / "rubrics" / "acme"


@pytest.fixture(scope="session")
def acme_generator():
    """tasks/acme/generate.py as a module (it is a script, not an installed package)."""
    if str(ACME) not in sys.path:
        sys.path.insert(0, str(ACME))
    spec = importlib.util.spec_from_file_location("acme_generate", ACME / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
