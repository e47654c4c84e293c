"""What a family's author starts from: the file `egym new family` writes, and the reference of the
`world` object a family's `generate` reads (its attributes, tables, claim kinds and the families'
helpers), both written into docs/authoring.md from this code:

    .venv/bin/python -m gym.authoring     # rewrites the generated sections of docs/authoring.md

A test compares the doc with this output, so the doc shows the scaffold's own code and the world's
current tables and helpers.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import re
from pathlib import Path
from string import Template
from typing import Any

from core.errors import TaskError
from gym.families import clashing_tasks, load_families, world_module, world_object

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "authoring.md"
DOC_WORLD = REPO / "tasks" / "acme"  # the world docs/authoring.md is written about
DOC_FAMILY = "stock-check"  # the family name the doc's scaffold is shown with

SCAFFOLD = Template('''"""$title. Level 0: one value looked up in one table, answered in one line."""

from __future__ import annotations

from gym.families import Instance

TITLE = "$title"
LEVELS = (0,)  # 0: one or two tool calls and a one-line answer; add levels as the work grows
SPLIT = "train"  # "test" holds the whole family out of training
ITEMS = ("amber", "birch", "cedar", "delta", "ember", "fjord", "garnet", "harbor")


def generate(world, rng, level: int) -> Instance:
    # 1. The facts, picked with `rng` only: the same (level, seed) always gives the same bytes.
    #    What the world holds comes from `world` (docs/authoring.md lists its tables); this family
    #    plants its own table with `sql`, so it runs in any world.
    stock = {item: rng.randrange(100, 1000) for item in ITEMS}
    item = rng.choice(ITEMS)
    rows = ", ".join(f"('{name}', {count})" for name, count in stock.items())
    # 2. The expected values, computed from the facts: never typed by hand.
    units = stock[item]
    return Instance(
        prompt=f"How many units of {item} are in stock? The table is stock_levels.",
        sql=(
            "CREATE TABLE stock_levels (item text PRIMARY KEY, units integer NOT NULL);\\n"
            f"INSERT INTO stock_levels VALUES {rows};\\n"
            "GRANT SELECT ON stock_levels TO agent;\\n"
        ),
        # 3. The rubric. An answer is a claim (grader.claims): every other count of units the
        #    answer states costs what this one earns, so listing the whole table earns nothing.
        rubric_items=[
            {
                "id": "units",
                "description": f"The answer gives {units} units of {item}",
                "points": 2,
                "kind": "python",
                "check": "claims.stated",
                "args": {"kind": "units", "value": units},
            },
        ],
        claims={"units": {"extract": "count", "noun": "units?"}},
        # 4. The reference solution the oracle replays, one tool call a turn, ending with the answer.
        solution=[
            {"tool": "db.query", "args": {"sql": f"SELECT units FROM stock_levels WHERE item = '{item}'"}},
            {"answer": f"{units} units of {item} are in stock."},
        ],
        apps=["db"],
        limits={"max_turns": 6, "time_limit_s": 300},
    )
''')


def scaffold(name: str) -> str:
    """The scaffold's text for a family named `name`."""
    return SCAFFOLD.substitute(title=name.replace("-", " ").capitalize())


def write_scaffold(world_dir: Path, name: str) -> Path:
    """A new family file that generates, lints and validates as it is: the starting point to edit."""
    if not re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", name):
        raise TaskError(f"{name!r}: a family name is lowercase words joined by dashes, e.g. order-status")
    if not (world_dir / "world.yaml").is_file():
        raise TaskError(f"{world_dir}: no world.yaml here; give --world a world folder, e.g. tasks/acme")
    path = world_dir / "families" / f"{name.replace('-', '_')}.py"
    if path.exists():
        raise TaskError(f"{path} already exists; pick another name or edit it")
    if taken := clashing_tasks(world_dir, name):
        raise TaskError(
            f"{name!r}: the hand-written task {world_dir / taken[0]} has that name, and "
            f"{world_dir.name}/{taken[0]} would name the family instead; pick another name"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(scaffold(name))
    load_families.cache_clear()
    return path


def _signature(fn, *, method: bool = False) -> str:
    """`name(a, b=1, *, c=None)`: the parameters without their annotations (nor a method's self)."""
    signature = inspect.signature(fn)
    bare = [p.replace(annotation=p.empty) for p in signature.parameters.values()][int(method) :]
    return f"{fn.__name__}{signature.replace(parameters=bare, return_annotation=signature.empty)}"


def _summary(obj) -> str:
    """The first paragraph of an object's own docstring, on one line (a dataclass's made-up one is none)."""
    doc = inspect.getdoc(obj) or ""
    if isinstance(obj, type) and doc.startswith(f"{obj.__name__}("):
        return ""
    return " ".join(doc.split("\n\n")[0].split())


def _entry(code: str, obj) -> str:
    return f"- `{code}`" + (f": {doc}" if (doc := _summary(obj)) else "")


def _methods(cls: type, shown_as: str) -> list[str]:
    lines = []
    for name, fn in inspect.getmembers(cls, inspect.isfunction):
        if name == "__getitem__":
            lines.append(_entry(f"{shown_as}[{list(inspect.signature(fn).parameters)[1]}]", fn))
        elif not name.startswith("_"):
            lines.append(_entry(f"{shown_as}.{_signature(fn, method=True)}", fn))
    return lines


def _cell(value: Any) -> str:
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return ", ".join(value)
    return f"{len(value)} rows" if isinstance(value, list | tuple) else str(value)


def _mapping(name: str, value: dict) -> list[str]:
    """A dict attribute: a table of its entries when they are records, else its keys."""
    records = list(value.values())
    if records and all(dataclasses.is_dataclass(r) for r in records):
        fields = [f.name for f in dataclasses.fields(records[0]) if f.name != "name"]  # the key is its name
        cls = type(records[0])
        out = [f"`world.{name}`, by name: each a `{cls.__name__}`. {_summary(cls)}".rstrip(), ""]
        out += _methods(cls, f"world.{name}[name]") + [""]
        out += [f"| {name} | {' | '.join(fields)} |", "| --- |" + " --- |" * len(fields)]
        out += [
            f"| `{key}` | " + " | ".join(_cell(getattr(r, f)) for f in fields) + " |"
            for key, r in value.items()
        ]
        return [*out, ""]
    keys = list(value)
    if keys and all(isinstance(k, str) for k in keys) and len(keys) <= 30:
        return [f"`world.{name}` holds: {', '.join(f'`{k}`' for k in keys)}.", ""]
    return [f"`world.{name}`: {len(keys)} entries.", ""]


def world_reference(world_dir: Path) -> str:
    """The `world` object a family's `generate` reads, and the families' helpers, as markdown."""
    world_dir = world_dir.resolve()
    load_families(world_dir)  # puts the world's folder on sys.path, where families import helpers from
    module, world = world_module(world_dir), world_object(world_dir)
    if module is None:
        return "This world has no `families/world.py`: `world` is None.\n"
    cls = type(world)
    out = [
        f"`generate(world, rng, level)` reads what `world_data()` in `families/world.py` returns: "
        f"`{cls.__module__}.{cls.__name__}`. {_summary(cls)}".rstrip(),
        "",
        "| attribute | type |",
        "| --- | --- |",
    ]
    fields = dataclasses.fields(world) if dataclasses.is_dataclass(world) else []
    out += [f"| `world.{f.name}` | `{f.type}` |" for f in fields] + [""]
    out += _methods(cls, "world") + [""]
    for field in fields:
        if isinstance(value := getattr(world, field.name), dict):
            out += _mapping(field.name, value)
    hooks = [
        f"`{_signature(getattr(module, h))}`"
        for h in ("world_data", "prompt_hint", "claims")
        if hasattr(module, h)
    ]
    out += [f"`families/world.py` defines {', '.join(hooks)}.", ""]
    if hasattr(module, "claims"):
        kinds = module.claims(world).get("kinds", {})
        out += [
            f"Kinds of value a claim item can name (`claims(world)`): {', '.join(f'`{k}`' for k in kinds)}.",
            "",
        ]
    out += _helpers(world_dir)
    return "\n".join(out).rstrip("\n") + "\n"


def _helpers(world_dir: Path) -> list[str]:
    """The families' shared helpers (`families/_*.py`), imported as the families import them."""
    out = []
    for path in sorted((world_dir / "families").glob("_*.py")):
        if path.stem == "__init__":
            continue
        helper = importlib.import_module(f"families.{path.stem}")
        out += [f"`from families.{path.stem} import ...`: {_summary(helper)}".rstrip(), ""]
        out += [
            _entry(_signature(fn), fn)
            for name, fn in inspect.getmembers(helper, inspect.isfunction)
            if not name.startswith("_") and fn.__module__ == helper.__name__
        ]
        if constants := [n for n in vars(helper) if n.isupper() and not n.startswith("_")]:
            out.append(f"- constants: {', '.join(f'`{n}`' for n in constants)}")
        out.append("")
    return out


# A generated section of a doc: `<!-- generated:NAME ... -->`, its text, `<!-- /generated:NAME -->`.
_SECTION = re.compile(r"(<!-- generated:(\w+) .*?-->\n)(.*?)(<!-- /generated:\2 -->)", re.DOTALL)


def _sections(world_dir: Path) -> dict[str, str]:
    return {
        "scaffold": f"```python\n{scaffold(DOC_FAMILY)}```\n",
        "world": world_reference(world_dir),
    }


def updated_doc(text: str, world_dir: Path = DOC_WORLD) -> str:
    """The doc's text with every generated section rewritten from the code."""
    sections = _sections(world_dir)
    return _SECTION.sub(lambda m: m[1] + sections[m[2]] + m[4], text)


if __name__ == "__main__":
    DOC.write_text(updated_doc(DOC.read_text()))
