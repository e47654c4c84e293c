"""Task families: one template, many instances, each (family, level, seed) a task of its own.

A family is a Python file in `tasks/<world>/families/` (`_*.py` are helpers; the facts come from
its generator, e.g. acmegen) that defines:

    TITLE = "The list price of a product"
    LEVELS = (0, 1)
    SPLIT = "train"          # "test": the whole family is held out of training

    def generate(world, rng, level) -> Instance: ...

`world` is what `families/world.py`'s `world_data()` returns (built once per process; the
same file may define `prompt_hint(world, instance, level) -> str`, a line added to every
prompt of that level, e.g. the tables a level-0 task reads);
`rng` is a `random.Random` seeded by the instance. The Instance holds the prompt, the
overlay (rows, chat, files), the reference solution and the rubric, whose expected
values the family computes from the facts: never typed by hand, so every instance
has consistent ground truth. The same (family, level, seed) always gives the same
bytes.

An instance is materialised as an ordinary task folder, `<root>/tasks/<world>/<id>/`
with its rubric at `<root>/rubrics/<world>/<id>.json` (root: `.egym/instances`), so
everything that runs a task runs an instance. Its id is `<family>-l<level>-s<seed>`.

Splits, by family and by instance: a `test` family is test at every seed; a
`train` family's instances are train, except a tenth val and a tenth test, chosen
by a hash of the instance's content (prompt, overlay, rubric) rather than its seed:
two seeds that happen to pick the same facts make the same instance, and it must
not be in train and test at once. Test thus holds whole families never trained on
plus unseen instances of trained ones.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import random
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

from core.errors import TaskError
from grader.claims import CHECK as CLAIM_CHECK
from gym.tasks import (
    Band,
    BandEvidence,
    Split,
    Task,
    band_entry,
    bands_of,
    discover_tasks,
    load_task,
    load_world,
)

INSTANCES = Path(".egym/instances")
CACHE = Path(".egym/cache")
INSTANCE_ID = re.compile(r"^(?P<family>[a-z0-9][a-z0-9-]*)-l(?P<level>\d+)-s(?P<seed>\d+)$")
DEFAULT_SEEDS = 10
BANDS_FILE = "bands.yaml"  # in the families folder: the calibrated band of each family level


@dataclass
class Instance:
    """One generated task: what a family's `generate` returns."""

    prompt: str
    rubric_items: list[dict[str, Any]]
    solution: list[dict[str, Any]]
    title: str = ""
    apps: list[str] | None = None  # default: the world's
    limits: dict[str, Any] = field(default_factory=dict)
    sql: str = ""  # overlay SQL, run as superuser after the world's
    chat: dict[str, Any] | None = None  # an overlay chat file's content
    files: dict[str, bytes] = field(default_factory=dict)  # path under /workspace -> bytes
    damage: dict[str, Any] | None = None  # the rubric's damage section (allowed changes)
    # Kinds of value the claim items name (grader.claims): the family's own; the world's `claims`
    # hook supplies the rest. After generation: the rubric's whole claims section.
    claims: dict[str, Any] = field(default_factory=dict)
    pass_threshold: float = 0.8
    tags: list[str] = field(default_factory=list)

    def digest(self) -> str:
        """What makes the instance what it is (not its seed): the same facts give the same digest."""
        content = [
            self.prompt,
            self.rubric_items,
            self.sql,
            self.chat,
            sorted(self.files.items()),
            self.damage,
            self.claims,
        ]
        return hashlib.sha256(json.dumps(content, sort_keys=True, default=repr).encode()).hexdigest()

    def question_digest(self) -> str:
        """What the agent is given (prompt and initial state), not how it is graded: a rubric fix keeps it."""
        content = [self.prompt, self.sql, self.chat, sorted(self.files.items())]
        return hashlib.sha256(json.dumps(content, sort_keys=True, default=repr).encode()).hexdigest()


@dataclass(frozen=True)
class Family:
    world_dir: Path
    name: str
    title: str
    levels: tuple[int, ...]
    split: Split
    module: ModuleType

    @property
    def world(self) -> str:
        return self.world_dir.name

    def instance_id(self, level: int, seed: int) -> str:
        return f"{self.name}-l{level}-s{seed}"

    def split_of(self, instance: Instance) -> Split:
        if self.split != "train":
            return self.split
        # Keyed by the question, so editing a rubric never moves an instance between train and test.
        return {8: "val", 9: "test"}.get(int(instance.question_digest()[:8], 16) % 10, "train")


def family_level(task_key: str) -> tuple[str, int] | None:
    """`acme/product-price-l0-s3` -> (`acme/product-price`, 0); None for a task that is no instance."""
    world, _, name = task_key.partition("/")
    match = INSTANCE_ID.match(name)
    return (f"{world}/{match['family']}", int(match["level"])) if match else None


def family_bands(world_dir: Path) -> dict[str, dict[int, dict[str, Any]]]:
    """The calibrated bands of a world's families: {family: {level: {model key: {band, calibration}}}}.

    A level written before bands named their model (`{band, calibration}`) reads as model `unknown`'s.
    """
    path = world_dir / "families" / BANDS_FILE
    if not path.is_file():
        return {}
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise TaskError(f"{path}: not valid YAML: {exc}") from None
    return {
        str(name): {
            int(level): bands_of(entry) if "band" in entry else entry for level, entry in levels.items()
        }
        for name, levels in data.items()
    }


def save_family_band(family: Family, level: int, model: str, band: Band, evidence: BandEvidence) -> None:
    """Record `model`'s band of a family level beside other models'; its instances carry them all from
    their next materialisation."""
    path = family.world_dir / "families" / BANDS_FILE
    bands = family_bands(family.world_dir)
    bands.setdefault(family.name, {}).setdefault(level, {})[model] = band_entry(band, evidence)
    text = "# Written by `egym calibrate`: each family level's band per model, measured over its instances.\n"
    text += yaml.safe_dump(
        {
            name: {level: dict(sorted(models.items())) for level, models in sorted(levels.items())}
            for name, levels in sorted(bands.items())
        },
        sort_keys=False,
        default_flow_style=None,
        width=120,
    )
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)


def _import(path: Path, name: str) -> ModuleType:
    world_dir = path.parent.parent
    if str(world_dir) not in sys.path:
        sys.path.insert(0, str(world_dir))  # the world's generator (e.g. acmegen) is importable by name
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise TaskError(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - a broken family file is one line, not a traceback
        sys.modules.pop(name, None)
        raise TaskError(f"{path}: failed to import: {type(exc).__name__}: {exc}") from None
    return module


@functools.cache
def families(world_dir: Path) -> dict[str, Family]:
    """The families of a world folder, by name (`families/<name>.py`, underscores as dashes)."""
    found = {}
    for path in sorted((world_dir / "families").glob("*.py")):
        if path.stem.startswith("_") or path.stem == "world":
            continue
        module = _import(path, f"egym_families.{world_dir.name}.{path.stem}")
        name = path.stem.replace("_", "-")
        missing = [a for a in ("TITLE", "LEVELS", "generate") if not hasattr(module, a)]
        if missing:
            raise TaskError(
                f"{path}: a family defines TITLE, LEVELS and generate(); missing {', '.join(missing)}"
            )
        found[name] = Family(
            world_dir, name, module.TITLE, tuple(module.LEVELS), getattr(module, "SPLIT", "train"), module
        )
    return found


@functools.cache
def _world_module(world_dir: Path) -> ModuleType | None:
    path = world_dir / "families" / "world.py"
    return _import(path, f"egym_families.{world_dir.name}.world") if path.is_file() else None


@functools.cache
def _world_data(world_dir: Path) -> Any:
    module = _world_module(world_dir)
    return module.world_data() if module is not None else None


def _world_hint(world_dir: Path, instance: Instance, level: int) -> str:
    """What the world adds to every prompt of a level (its optional `prompt_hint`), e.g. the tables a
    level-0 task reads: the same for every family, so no family has to repeat it."""
    hint = getattr(_world_module(world_dir), "prompt_hint", None)
    return hint(_world_data(world_dir), instance, level) if hint is not None else ""


def _world_claims(world_dir: Path, instance: Instance) -> dict[str, Any]:
    """The rubric's claims section: every kind the instance's claim items name, the family's own
    kinds first, then the world's (its optional `claims(world)` hook); TaskError for an unknown kind."""
    hook = getattr(_world_module(world_dir), "claims", None)
    world = hook(_world_data(world_dir)) if hook is not None else {}
    known = {**world.get("kinds", {}), **instance.claims}
    used = sorted({i["args"]["kind"] for i in instance.rubric_items if i.get("check") == CLAIM_CHECK})
    unknown = [k for k in used if k not in known]
    if unknown:
        raise TaskError(
            f"claim kind {unknown[0]!r} is neither the family's nor the world's ({', '.join(sorted(known))})"
        )
    if not used:
        return {}
    author = {"author": world["author"]} if world.get("author") else {}
    return {**author, "kinds": {k: known[k] for k in used}}


def generate(family: Family, level: int, seed: int) -> Instance:
    """The family's instance for (level, seed); TaskError naming all three when the generator fails."""
    where = f"family {family.world}/{family.name} level {level} seed {seed}"
    if level not in family.levels:
        raise TaskError(f"{where}: no such level (it has {', '.join(map(str, family.levels))})")
    rng = random.Random(f"{family.world}/{family.name}/{level}/{seed}")
    try:
        instance = family.module.generate(_world_data(family.world_dir), rng, level)
        if hint := _world_hint(family.world_dir, instance, level):
            instance.prompt = f"{instance.prompt.rstrip()}\n\n{hint}"
        instance.claims = _world_claims(family.world_dir, instance)
    except TaskError as exc:
        raise TaskError(f"{where}: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - a generator bug is one line naming the instance
        raise TaskError(f"{where}: the generator failed: {type(exc).__name__}: {exc}") from None
    if not isinstance(instance, Instance) or not instance.prompt.strip() or not instance.rubric_items:
        raise TaskError(f"{where}: the generator returned no prompt or no rubric items")
    return instance


# The library: seeds 0..9 of every family level, what a family ref resolves to. `egym tasks list`
# counts its distinct instances and bench/bench_families.py validates every one; any other seed
# is generated the same way but is not part of the validated library.
COUNT_SEEDS = DEFAULT_SEEDS


def distinct_instances(family: Family, level: int, seeds: range = range(COUNT_SEEDS)) -> dict[str, int]:
    """Each distinct instance of a family level (by content digest) and the first seed that makes it."""
    found: dict[str, int] = {}
    for seed in seeds:
        found.setdefault(generate(family, level, seed).digest(), seed)
    return found


def instance_counts(world_dir: Path, *, progress=None) -> dict[str, dict[int, int]]:
    """Distinct instances per family and level over seeds 0..COUNT_SEEDS-1, cached until a .py file changes.

    The cache key is the hash of every Python file of the world (families, helpers, generator),
    so an edited family or fact generator is recounted; `progress(name)` is called per family counted.
    """
    sources = sorted(p for p in world_dir.rglob("*.py") if "__pycache__" not in p.parts)
    key = hashlib.sha256(b"".join(p.read_bytes() for p in sources) + str(COUNT_SEEDS).encode()).hexdigest()
    cache = CACHE / f"instance-counts-{world_dir.name}.json"
    try:
        stored = json.loads(cache.read_text())
        if stored["key"] == key:
            return {
                name: {int(lv): n for lv, n in levels.items()} for name, levels in stored["counts"].items()
            }
    except (OSError, ValueError, KeyError):
        pass
    counts = {}
    for name, family in families(world_dir).items():
        counts[name] = {level: len(distinct_instances(family, level)) for level in family.levels}
        if progress is not None:
            progress(name)
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps({"key": key, "counts": counts}))
    return counts


def materialize(family: Family, level: int, seed: int, root: Path = INSTANCES) -> Task:
    """Write the instance as a task folder under `root` (unchanged bytes are not rewritten) and load it."""
    instance = generate(family, level, seed)
    task_id = family.instance_id(level, seed)
    world_out = root / "tasks" / family.world
    folder = world_out / task_id
    files: dict[Path, bytes] = {world_out / "world.yaml": _world_yaml(family.world_dir)}
    overlay: dict[str, Any] = {}
    if instance.sql:
        files[folder / "initial_state" / "overlay.sql"] = instance.sql.encode()
        overlay["sql"] = ["initial_state/overlay.sql"]
    if instance.chat is not None:
        files[folder / "initial_state" / "chat.yaml"] = yaml.safe_dump(
            instance.chat, sort_keys=False
        ).encode()
        overlay["chat"] = ["initial_state/chat.yaml"]
    for name, data in sorted(instance.files.items()):
        files[folder / "initial_state" / "workspace" / name] = data
        overlay["workspace"] = "initial_state/workspace"
    task = {
        "id": task_id,
        "title": instance.title or f"{family.title} (level {level}, seed {seed})",
        "world": family.world,
        "prompt": instance.prompt,
        "split": family.split_of(instance),
        "tags": [f"family:{family.name}", f"level:{level}", *instance.tags],
        "pass_threshold": instance.pass_threshold,
        **({"apps": instance.apps} if instance.apps is not None else {}),
        **({"limits": instance.limits} if instance.limits else {}),
        **({"initial_state": overlay} if overlay else {}),
        **(
            {"bands": bands}
            if (bands := family_bands(family.world_dir).get(family.name, {}).get(level))
            else {}
        ),
    }
    files[folder / "task.yaml"] = yaml.safe_dump(task, sort_keys=False, allow_unicode=True).encode()
    files[folder / "solution" / "actions.yaml"] = yaml.safe_dump(
        instance.solution, sort_keys=False, allow_unicode=True
    ).encode()
    rubric = {
        "task": f"{family.world}/{task_id}",
        "title": task["title"],
        **({"damage": instance.damage} if instance.damage is not None else {}),
        **({"claims": instance.claims} if instance.claims else {}),
        "items": instance.rubric_items,
    }
    files[root / "rubrics" / family.world / f"{task_id}.json"] = (
        json.dumps(rubric, indent=1) + "\n"
    ).encode()
    for path, data in files.items():
        if not path.is_file() or path.read_bytes() != data:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(path.name + ".tmp")
            tmp.write_bytes(data)
            tmp.replace(path)
    return load_task(folder)


SCAFFOLD = '''"""{title}. Level 0: one value looked up in one table, answered in one line."""

from __future__ import annotations

from gym.families import Instance

TITLE = "{title}"
LEVELS = (0,)
SPLIT = "train"  # "test" holds the whole family out of training
ITEMS = ("amber", "birch", "cedar", "delta", "ember", "fjord", "garnet", "harbor")


def generate(world, rng, level: int) -> Instance:
    # The facts. This scaffold makes its own small table (the overlay SQL below); a real family
    # picks them from `world` (what families/world.py returns) so the seeded company stays the source.
    stock = {{item: rng.randrange(100, 1000) for item in ITEMS}}
    item = rng.choice(ITEMS)
    rows = ", ".join(f"('{{name}}', {{count}})" for name, count in stock.items())
    return Instance(
        prompt=f"How many units of {{item}} are in stock? The table is stock_levels.",
        sql=(
            "CREATE TABLE stock_levels (item text PRIMARY KEY, units integer NOT NULL);\\n"
            f"INSERT INTO stock_levels VALUES {{rows}};\\n"
            "GRANT SELECT ON stock_levels TO agent;\\n"
        ),
        rubric_items=[
            {{
                "id": "units",
                "description": f"The answer gives {{stock[item]}} units of {{item}}",
                "points": 2,
                "kind": "python",
                # A claim (grader.claims): every other count of units the answer states is charged
                # what this one earns, so an answer listing every count in the table earns nothing.
                "check": "claims.stated",
                "args": {{"kind": "units", "value": stock[item]}},
            }},
        ],
        claims={{"units": {{"extract": "count", "noun": "units?"}}}},
        solution=[
            {{"tool": "db.query", "args": {{"sql": f"SELECT units FROM stock_levels WHERE item = '{{item}}'"}}}},
            {{"answer": f"{{stock[item]}} units of {{item}} are in stock."}},
        ],
        apps=["postgres"],
        limits={{"max_turns": 6, "time_limit_s": 300}},
    )
'''


def write_scaffold(world_dir: Path, name: str) -> Path:
    """A new family file that generates, lints and validates as it is: the starting point to edit."""
    if not re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", name):
        raise TaskError(f"{name!r}: a family name is lowercase words joined by dashes, e.g. order-status")
    if not (world_dir / "world.yaml").is_file():
        raise TaskError(f"{world_dir}: no world.yaml here; give --world a world folder, e.g. tasks/acme")
    path = world_dir / "families" / f"{name.replace('-', '_')}.py"
    if path.exists():
        raise TaskError(f"{path} already exists; pick another name or edit it")
    path.parent.mkdir(parents=True, exist_ok=True)
    title = name.replace("-", " ").capitalize()
    path.write_text(SCAFFOLD.format(title=title))
    families.cache_clear()
    return path


def _world_yaml(world_dir: Path) -> bytes:
    """The world's YAML with its initial-state paths made absolute, so it loads from the instance tree."""
    world = load_world(world_dir)
    data = yaml.safe_load((world_dir / "world.yaml").read_text())
    state = data.get("initial_state") or {}
    for key in ("sql", "chat"):
        if key in state:
            state[key] = [str((world.path / p).resolve()) for p in state[key]]
    if state.get("workspace"):
        state["workspace"] = str((world.path / state["workspace"]).resolve())
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True).encode()


def _parse_levels_seeds(text: str | None, default: list[int]) -> list[int]:
    if not text:
        return default
    out: list[int] = []
    for part in text.split(","):
        low, _, high = part.partition("-")
        try:
            out += list(range(int(low), int(high or low) + 1))
        except ValueError:
            raise TaskError(f"{text!r}: expected numbers and ranges like 0-9,12") from None
    return out


def resolve(refs: list[str | Path], *, seeds: str | None = None, levels: str | None = None) -> list[Task]:
    """Tasks from task folders, families (`tasks/acme/families/x.py` or `acme/x`) and instance ids (`acme/x-l0-s3`).

    A family gives its instances at `levels` (default: all) and `seeds` (default 0-9;
    `acme/x@0-199` gives a family its own).
    """
    tasks: dict[str, Task] = {}
    for ref in refs:
        for task in _resolve_one(str(ref), seeds, levels):
            tasks[task.key] = task
    if not tasks:
        raise TaskError(f"no tasks in {', '.join(map(str, refs))}")
    return [tasks[k] for k in sorted(tasks)]


def _resolve_one(ref: str, seeds: str | None, levels: str | None) -> list[Task]:
    ref, _, own_seeds = ref.partition("@")  # acme/product-price@0-199
    seeds = own_seeds or seeds
    path = Path(ref)
    if path.suffix == ".py" and path.parent.name == "families":
        family = families(path.parent.parent.resolve())[path.stem.replace("_", "-")]
        return _instances(family, seeds, levels)
    if path.exists():
        return discover_tasks(path)
    world, _, name = ref.partition("/")
    world_dir = (Path("tasks") / world).resolve()
    if not name or not (world_dir / "world.yaml").is_file():
        raise TaskError(f"{ref}: no such task folder, family or instance")
    known = families(world_dir)
    match = INSTANCE_ID.match(name)
    if match and match["family"] in known:
        return [materialize(known[match["family"]], int(match["level"]), int(match["seed"]))]
    if name in known:
        return _instances(known[name], seeds, levels)
    from core.validation import closest

    raise TaskError(f"{ref}: no family or instance {name!r} in tasks/{world}{closest(name, known)}")


def _instances(family: Family, seeds: str | None, levels: str | None) -> list[Task]:
    chosen_levels = _parse_levels_seeds(levels, list(family.levels))
    chosen_seeds = _parse_levels_seeds(seeds, list(range(DEFAULT_SEEDS)))
    return [
        materialize(family, level, seed)
        for level in chosen_levels
        if level in family.levels
        for seed in chosen_seeds
    ]
