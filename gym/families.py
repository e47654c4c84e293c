"""Task families: one template, many instances, each (family, level, seed) a task of its own.

A family is a Python file in `tasks/<world>/families/` (`_*.py` are helpers; the facts come from
its generator, e.g. acmegen) that defines:

    TITLE = "The list price of a product"
    LEVELS = (0, 1)
    SPLIT = "train"          # "test": the whole family is held out of training

    def generate(world, rng, level) -> Instance: ...

`world` is what `families/world.py`'s `world_data()` returns (built once per process;
docs/authoring.md lists its tables and the families' helpers, written by gym.authoring; the
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

import copy
import functools
import hashlib
import importlib.util
import json
import random
import re
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

from core.errors import TaskError
from grader.claims import CHECK as CLAIM_CHECK
from grader.loader import world_rubrics
from gym.tasks import (
    Band,
    BandEvidence,
    Split,
    Task,
    band_entry,
    bands_of,
    load_task,
    load_world,
    overlay_keys,
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
    mail: dict[str, Any] | None = None  # an overlay mail file's content (mcp_wrappers/mail/mailfile.py)
    files: dict[str, bytes] = field(default_factory=dict)  # path under /workspace -> bytes
    # People who answer in chat (gym.tasks.Coworker as dicts); their rules stay out of the sandbox.
    coworkers: list[dict[str, Any]] = field(default_factory=list)
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
            *([self.mail] if self.mail is not None else []),  # absent: the digests from before mail
            *([self.coworkers] if self.coworkers else []),
        ]
        return hashlib.sha256(json.dumps(content, sort_keys=True, default=repr).encode()).hexdigest()

    def question_digest(self) -> str:
        """What the agent is given (prompt and initial state), not how it is graded: a rubric fix keeps it."""
        content = [self.prompt, self.sql, self.chat, sorted(self.files.items())]
        content += [self.mail] if self.mail is not None else []
        content += [self.coworkers] if self.coworkers else []  # what they know is part of the question
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

    @property
    def path(self) -> Path:
        """The family's file."""
        return Path(self.module.__file__ or "")

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
        return copy.deepcopy(_parse_bands(path.read_text()))
    except yaml.YAMLError as exc:
        raise TaskError(f"{path}: not valid YAML: {exc}") from None


@functools.lru_cache(maxsize=8)
def _parse_bands(text: str) -> dict[str, dict[int, dict[str, Any]]]:
    # Keyed on the text, so a rewritten file is parsed again: materializing a training run's
    # instances read the same 30 KB file once each, 15 minutes for 2,500 instances.
    data = yaml.safe_load(text) or {}
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


class FamilyError(TaskError):
    """A family file that fails to load or to generate, located at the line of the file that failed."""

    def __init__(self, file: Path, line: int | None, where: str, reason: str):
        self.file, self.line, self.where, self.reason = file, line, where, reason
        super().__init__(f"{shown(file)}{f':{line}' if line else ''}: {where}: {reason}")


def shown(path: Path) -> Path:
    """A path as a user gave it: relative to the working directory when it is under it."""
    return path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path


def _failed_line(exc: BaseException, file: Path) -> int | None:
    """The line of `file` where `exc` was raised (the innermost frame there; a SyntaxError's own line)."""
    if isinstance(exc, SyntaxError) and exc.filename and Path(exc.filename) == file:
        return exc.lineno
    lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename) == file]
    return lines[-1] if lines else None


def _import(path: Path, name: str, where: str) -> ModuleType:
    world = path.parent.parent
    if str(world) not in sys.path:
        sys.path.insert(0, str(world))  # the world's generator (e.g. acmegen) is importable by name
    # The root holding rubrics/<world>/: the world's checks import as rubrics.<world>.checks from any instance.
    root = world.parent.parent
    if world_rubrics(world).is_dir() and str(root) not in sys.path:
        sys.path.append(str(root))
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise TaskError(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - a broken family file is one line, not a traceback
        sys.modules.pop(name, None)
        raise FamilyError(
            path, _failed_line(exc, path), where, f"failed to import: {type(exc).__name__}: {exc}"
        ) from None
    return module


def _load_family(world_dir: Path, path: Path) -> Family:
    name = path.stem.replace("_", "-")
    module = _import(path, f"egym_families.{world_dir.name}.{path.stem}", f"family {world_dir.name}/{name}")
    missing = [a for a in ("TITLE", "LEVELS", "generate") if not hasattr(module, a)]
    if missing:
        raise FamilyError(
            path,
            None,
            f"family {world_dir.name}/{name}",
            f"a family defines TITLE, LEVELS and generate(); missing {', '.join(missing)}",
        )
    return Family(
        world_dir, name, module.TITLE, tuple(module.LEVELS), getattr(module, "SPLIT", "train"), module
    )


def is_family_file(path: Path) -> bool:
    """`families/<name>.py`; `_*.py` are the families' helpers and `world.py` the world's facts."""
    return (
        path.suffix == ".py"
        and path.parent.name == "families"
        and not (path.stem.startswith("_") or path.stem == "world")
    )


@functools.cache
def load_families(world_dir: Path) -> tuple[dict[str, Family], dict[str, FamilyError]]:
    """The families of a world folder by name (`families/<name>.py`, underscores as dashes), and
    those that fail to load by name with their error: one broken family leaves the others usable."""
    found, broken = {}, {}
    for path in sorted((world_dir / "families").glob("*.py")):
        if is_family_file(path):
            try:
                found[path.stem.replace("_", "-")] = _load_family(world_dir, path)
            except FamilyError as exc:
                broken[path.stem.replace("_", "-")] = exc
    return found, broken


def families(world_dir: Path) -> dict[str, Family]:
    """The families of a world folder by name; the first broken one's FamilyError when any fails to load."""
    found, broken = load_families(world_dir)
    if broken:
        raise next(iter(broken.values()))
    return found


def clashing_tasks(world_dir: Path, family: str) -> list[str]:
    """The hand-written tasks of a world whose ref a family named `family` takes: `acme/x` names the
    family x before the task folder x, and `acme/x-l0-s3` an instance of x."""
    found = []
    for file in sorted(world_dir.glob("*/task.yaml")):
        match = INSTANCE_ID.match(task_id := file.parent.name)
        if task_id == family or (match and match["family"] == family):
            found.append(task_id)
    return found


@functools.cache
def world_module(world_dir: Path) -> ModuleType | None:
    """The world's `families/world.py` (its `world_data`, `prompt_hint` and `claims` hooks), if any."""
    path = world_dir / "families" / "world.py"
    return (
        _import(path, f"egym_families.{world_dir.name}.world", f"world {world_dir.name}")
        if path.is_file()
        else None
    )


@functools.cache
def world_object(world_dir: Path) -> Any:
    """The `world` every family's `generate` reads: what world.py's `world_data()` returns (None without it)."""
    module = world_module(world_dir)
    return module.world_data() if module is not None else None


def _world_hint(world_dir: Path, instance: Instance, level: int) -> str:
    """What the world adds to every prompt of a level (its optional `prompt_hint`), e.g. the tables a
    level-0 task reads: the same for every family, so no family has to repeat it."""
    hint = getattr(world_module(world_dir), "prompt_hint", None)
    return hint(world_object(world_dir), instance, level) if hint is not None else ""


def _world_claims(world_dir: Path, instance: Instance) -> dict[str, Any]:
    """The rubric's claims section: every kind the instance's claim items name, the family's own
    kinds first, then the world's (its optional `claims(world)` hook); TaskError for an unknown kind."""
    hook = getattr(world_module(world_dir), "claims", None)
    world = hook(world_object(world_dir)) if hook is not None else {}
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
    """The family's instance for (level, seed); TaskError naming all three when the generator fails
    (a FamilyError with the line of the family's file that raised)."""
    where = f"family {family.world}/{family.name} level {level} seed {seed}"
    if level not in family.levels:
        raise TaskError(f"{where}: no such level (it has {', '.join(map(str, family.levels))})")
    rng = random.Random(f"{family.world}/{family.name}/{level}/{seed}")
    try:
        instance = family.module.generate(world_object(family.world_dir), rng, level)
        if hint := _world_hint(family.world_dir, instance, level):
            instance.prompt = f"{instance.prompt.rstrip()}\n\n{hint}"
        instance.claims = _world_claims(family.world_dir, instance)
    except TaskError as exc:
        raise TaskError(f"{where}: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - a generator bug is one line naming the instance and its line
        reason = f"the generator failed: {type(exc).__name__}: {exc}"
        raise FamilyError(family.path, _failed_line(exc, family.path), where, reason) from None
    if not isinstance(instance, Instance) or not instance.prompt.strip() or not instance.rubric_items:
        line = family.module.generate.__code__.co_firstlineno
        raise FamilyError(family.path, line, where, "the generator returned no prompt or no rubric items")
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


def materialize(
    family: Family, level: int, seed: int, root: Path = INSTANCES, *, instance: Instance | None = None
) -> Task:
    """Write the instance as a task folder under `root` (unchanged bytes are not rewritten) and load it.

    `instance`: the triple's instance when the caller generated it already (lint, to trace it).
    """
    instance = instance or generate(family, level, seed)
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
    if instance.mail is not None:
        files[folder / "initial_state" / "mail.yaml"] = yaml.safe_dump(
            instance.mail, sort_keys=False, allow_unicode=True
        ).encode()
        overlay["mail"] = ["initial_state/mail.yaml"]
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
        **({"coworkers": instance.coworkers} if instance.coworkers else {}),
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


def _world_yaml(world_dir: Path) -> bytes:
    """The world's YAML with its initial-state paths made absolute, so it loads from the instance tree."""
    world = load_world(world_dir)
    data = yaml.safe_load((world_dir / "world.yaml").read_text())
    state = data.get("initial_state") or {}
    for key in overlay_keys():
        if key in state:
            state[key] = [str((world.path / p).resolve()) for p in state[key]]
    if state.get("workspace"):
        state["workspace"] = str((world.path / state["workspace"]).resolve())
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True).encode()
