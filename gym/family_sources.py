"""Where in a family's file each part of a generated instance was made: the lines `egym lint` names.

A problem in an instance's generated files (its rubric, task.yaml, solution under .egym/instances)
is the family's to fix, so lint shows it at the family's source. While the generator runs, a
profile hook (`sys.setprofile`) sees every function return: a rubric item is a dict with an "id"
returned by a helper (`stated(...)`), made at the line of the family's file that called it; the
Instance at the line that constructed it. An item written inline as a dict is shown at the Instance.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from grader.loader import Problem
from gym.families import Family, Instance, generate, shown

_ITEM = re.compile(r"^\$\.items\[(\d+)\]")


@dataclass(frozen=True)
class Sources:
    """Lines of a family's file: where the Instance and each of its rubric items were made."""

    file: Path
    instance: int | None  # None: neither the Instance nor `generate` is in the family's file
    items: tuple[int | None, ...]

    def locate(self, problem: Problem, rubric: Path, key: str) -> Problem:
        """A problem of instance `key`'s generated files, at the family's line that made what it is about."""
        item = _ITEM.match(problem.path) if problem.file == str(rubric) else None
        line = self.items[int(item[1])] if item and int(item[1]) < len(self.items) else self.instance
        generated = str(shown(Path(problem.file))) + (f":{problem.line}" if problem.line else "")
        return dataclasses.replace(
            problem,
            file=str(shown(self.file)),
            line=line,
            path=f"{key} {problem.path}",
            message=f"{problem.message} (in {generated})",
        )


def traced_generate(family: Family, level: int, seed: int) -> tuple[Instance, Sources]:
    """The instance of (family, level, seed), as `generate` makes it, and where its parts were made."""
    file = str(family.path)
    made: dict[int, int] = {}  # id(object) -> line of the family's file
    alive: list[object] = []  # keeps every located object alive, so no other one takes its id

    def hook(frame, event, arg) -> None:
        is_instance = frame.f_code is Instance.__init__.__code__
        if event != "return" or not (is_instance or (isinstance(arg, dict) and "id" in arg)):
            return
        made_here = frame.f_locals["self"] if is_instance else arg
        caller = frame.f_back
        while caller is not None and caller.f_code.co_filename != file:
            caller = caller.f_back
        if caller is not None and id(made_here) not in made:  # the innermost call in the family's file
            made[id(made_here)] = caller.f_lineno
            alive.append(made_here)

    previous = sys.getprofile()
    sys.setprofile(hook)
    try:
        instance = generate(family, level, seed)
    finally:
        sys.setprofile(previous)
    code = family.module.generate.__code__
    at_instance = made.get(id(instance), code.co_firstlineno if code.co_filename == file else None)
    items = tuple(made.get(id(item), at_instance) for item in instance.rubric_items)
    return instance, Sources(family.path, at_instance, items)
