"""The task library as the Tasks pages show it: each family level and each hand-written task, with
its bands per model (task.yaml, families/bands.yaml) and its pass counts per policy (the store).

Listing the library generates no instance: a family's title, split and levels are its module's
constants and its instance counts come from `instance_counts`' cache. Only one family's page
generates that family's library seeds, to tell each instance's split.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import get_args

from pydantic import ValidationError

from core.errors import TaskError
from gym.dashboard.queries import PassCounts
from gym.families import COUNT_SEEDS, Family, families, family_bands, family_level, generate, instance_counts
from gym.tasks import Band, ModelBand, Task, load_task
from gym.worlds import world_dirs, worlds_in

UNBANDED = "unbanded"
BANDS = (*get_args(Band), UNBANDED)
Figures = dict[str, PassCounts]  # policy label -> its counts
Counts = list[tuple[str, str, PassCounts]]  # what queries.pass_counts returns


@dataclass(frozen=True)
class Row:
    """A line of the Tasks page: one family level (`level` set) or one task of its own."""

    key: str  # the task's key, or the family's (`world/name`) for a family level
    level: int | None
    title: str = ""
    split: str | None = None  # a family's SPLIT: its instances' own splits are on the family's page
    instances: int | None = None  # distinct instances among the library seeds
    bands: dict[str, ModelBand] = field(default_factory=dict)
    figures: Figures = field(default_factory=dict)

    @property
    def is_family(self) -> bool:
        return self.level is not None


@dataclass(frozen=True)
class Instance:
    """One instance of a family on the family's page."""

    key: str
    level: int
    seed: int
    split: str | None = None  # None: a seed outside the library, or its generator failed (`error`)
    same_as: int | None = None  # the lower library seed that makes the same instance
    error: str | None = None
    figures: Figures = field(default_factory=dict)

    @property
    def rollouts(self) -> int:
        return sum(n.rollouts for n in self.figures.values())


def world_folders(tasks_dir: Path | None) -> dict[str, Path]:
    """The worlds the library shows by name: those under `tasks_dir`, or every world (gym.worlds) when
    None; none where a world's name is defined twice or its entry point is broken (`egym tasks list`
    says which)."""
    try:
        return worlds_in(tasks_dir) if tasks_dir is not None else world_dirs()
    except TaskError:
        return {}


def folder_tasks(tasks_dir: Path | None) -> dict[str, Task]:
    """Every valid hand-written task of the worlds (a broken task.yaml is `egym lint`'s business, not the
    dashboard's)."""
    found = {}
    for world_dir in world_folders(tasks_dir).values():
        for file in sorted(world_dir.glob("*/task.yaml")):
            try:
                task = load_task(file.parent)
            except TaskError:
                continue
            found[task.key] = task
    return found


def library_families(tasks_dir: Path | None) -> dict[str, Family]:
    """Every family of the worlds by `world/name`; a world whose families fail to import is left out."""
    found = {}
    for world_dir in world_folders(tasks_dir).values():
        try:
            found |= {f"{world_dir.name}/{name}": f for name, f in families(world_dir).items()}
        except TaskError:
            continue
    return found


def _world_facts(world_dir: Path) -> tuple[dict, dict]:
    """(bands as {family: {level: {model: ModelBand}}}, instance counts by family and level); empty where
    they cannot be read (a broken bands.yaml or generator is `egym lint`'s business, not the dashboard's)."""
    try:
        bands = {
            name: {
                level: {model: ModelBand.model_validate(entry) for model, entry in sorted(models.items())}
                for level, models in levels.items()
            }
            for name, levels in family_bands(world_dir).items()
        }
    except (TaskError, ValidationError, AttributeError):
        bands = {}
    try:
        counts = instance_counts(world_dir)
    except (TaskError, OSError):  # a generator failing, or a cache folder it cannot write
        counts = {}
    return bands, counts


def rows(tasks_dir: Path | None, counts: Counts) -> list[Row]:
    """The library's family levels and tasks, with those in the store but not in its worlds, by key."""
    tasks = folder_tasks(tasks_dir)
    found = library_families(tasks_dir)
    figures: dict[tuple[str, int | None], Figures] = defaultdict(dict)
    for task, label, n in counts:
        at = (task, None) if task in tasks else family_level(task) or (task, None)
        figures[at][label] = figures[at].get(label, PassCounts()) + n
    out = {}
    facts = {}
    for key, family in found.items():
        if family.world_dir not in facts:
            facts[family.world_dir] = _world_facts(family.world_dir)
        bands, instances = facts[family.world_dir]
        for level in family.levels:
            out[key, level] = Row(
                key,
                level,
                family.title,
                family.split,
                instances.get(family.name, {}).get(level),
                bands.get(family.name, {}).get(level, {}),
                figures.get((key, level), {}),
            )
    for key, task in tasks.items():
        out[key, None] = Row(
            key, None, task.title, task.split, None, dict(task.bands), figures.get((key, None), {})
        )
    for at, figs in figures.items():
        out.setdefault(at, Row(*at, figures=figs))  # in the store only
    return [out[at] for at in sorted(out, key=lambda at: (at[0], -1 if at[1] is None else at[1]))]


def policies(shown: list[Row] | list[Instance]) -> list[str]:
    """The policy labels with figures in these rows: one column each."""
    return sorted({label for row in shown for label in row.figures})


@dataclass(frozen=True)
class Filters:
    """The Tasks page's query parameters: `split`, `level`, `band` (or `unbanded`) and `model` (a band's key).

    `model` shows that model's bands only and keeps the rows it has one for (or, with
    `band=unbanded`, those it has none for); without it `band` matches any model's band.
    """

    split: str | None = None
    level: int | None = None
    band: str | None = None
    model: str | None = None

    @classmethod
    def of(cls, params: Mapping[str, str]) -> Filters:
        level = params.get("level", "")
        band = params.get("band") or None
        return cls(
            params.get("split") or None,
            int(level) if level.isdigit() else None,
            band if band in BANDS else None,
            params.get("model") or None,
        )

    def bands(self, row: Row) -> dict[str, ModelBand]:
        return {model: b for model, b in row.bands.items() if self.model in (None, model)}

    def keeps(self, row: Row) -> bool:
        shown = self.bands(row)
        if self.band == UNBANDED:
            banded = not shown
        elif self.band:
            banded = any(b.band == self.band for b in shown.values())
        else:
            banded = self.model is None or bool(shown)
        return banded and self.split in (None, row.split) and self.level in (None, row.level)


@dataclass(frozen=True)
class Options:
    """What the filters offer: the values the library holds."""

    splits: list[str]
    levels: list[int]
    models: list[str]

    @classmethod
    def of(cls, all_rows: list[Row]) -> Options:
        return cls(
            sorted({r.split for r in all_rows if r.split}),
            sorted({r.level for r in all_rows if r.level is not None}),
            sorted({model for r in all_rows for model in r.bands}),
        )


def instances(family: Family | None, key: str, counts: Counts) -> dict[int, list[Instance]]:
    """A family's instances by level: its library seeds (generated, for their split) and any other
    seed the store holds rollouts of, each with its figures per policy (`counts`: the family's)."""
    figures: dict[str, Figures] = {}
    for task, label, n in counts:
        figures.setdefault(task, {})[label] = n
    out: dict[tuple[int, int], Instance] = {}
    for level in family.levels if family else ():
        first_seed: dict[str, int] = {}  # digest -> the first seed that makes it
        for seed in range(COUNT_SEEDS):
            task = f"{key}-l{level}-s{seed}"
            figs = figures.get(task, {})
            try:
                made = generate(family, level, seed)
            except TaskError as exc:
                out[level, seed] = Instance(task, level, seed, error=str(exc), figures=figs)
                continue
            first = first_seed.setdefault(made.digest(), seed)
            same_as = first if first != seed else None
            out[level, seed] = Instance(task, level, seed, family.split_of(made), same_as, figures=figs)
    for task, figs in figures.items():
        parsed = family_level(task)
        if parsed is not None:
            seed = int(task.rsplit("-s", 1)[1])
            out.setdefault((parsed[1], seed), Instance(task, parsed[1], seed, figures=figs))
    by_level: dict[int, list[Instance]] = defaultdict(list)
    for level, seed in sorted(out):
        by_level[level].append(out[level, seed])
    return dict(by_level)
