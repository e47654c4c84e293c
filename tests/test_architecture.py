"""docs/architecture.md draws the same layers that import-linter enforces, the code keeps them, and the code
is formatted and linted (CI runs only `make test`, so `make lint`'s checks live here too)."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _contracts() -> dict[str, list[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    return {
        ("gym" if c.get("containers") == ["gym"] else "packages"): c["layers"] for c in config["contracts"]
    }


def _drawn(name: str) -> list[str]:
    """The layer names of the doc's block after `<!-- layers: NAME -->`, first word(s) of each line."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    block = re.search(rf"<!-- layers: {name} -->\n```\n(.*?)```", text, re.S).group(1)
    layers = []
    for line in block.splitlines():
        if line and not line.startswith(" "):
            layers.append(re.split(r"\s{2,}", line.strip())[0])
    return layers


def test_the_doc_draws_the_contracts_layers():
    contracts = _contracts()
    assert _drawn("packages") == contracts["packages"]
    assert _drawn("gym") == contracts["gym"]


def test_the_code_keeps_the_layering():
    lint = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:]
    assert "0 broken" in result.stdout


def test_the_code_is_formatted_and_lint_free():
    ruff = Path(sys.executable).with_name("ruff")
    dirs = re.search(r"^PYTHON_DIRS := (.+)$", (ROOT / "Makefile").read_text(), re.M).group(1).split()
    for args in (["check", *dirs], ["format", "--check", *dirs]):
        result = subprocess.run([str(ruff), *args], cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, f"`ruff {args[0]}` (run `make fmt`):\n{result.stdout[-3000:]}"
