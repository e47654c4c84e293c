"""`egym lint`: every task, world, rubric and family checked without starting anything.

Tasks and worlds: the task/world YAML models, initial-state files present, the reference
solution present, a rubric for every task, a prompt of at most 64 KB (MAX_PROMPT_BYTES),
and a warning (with the line) where YAML cuts a text at ` #`. Rubrics: grader.lint.

A folder is searched for `task.yaml`/`world.yaml` files and for rubric `*.json`
files; JSON inside task/world folders (chat files), `*.schema.json` and files
under a `data/` folder (values files) are not rubrics.

Families: each one loads, generates a few seeds per level whose instances lint like tasks (each
problem shown at the family's source line, gym.family_sources), and has no hand-written task's name.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from core.errors import EgymError, RubricError, TaskError
from grader.lint import LintReport, lint_rubric
from grader.lint_holes import prompt_states, reference_misses
from grader.loader import Problem, load_rubric, rubric_for_task, world_rubrics
from gym.families import Family, FamilyError, clashing_tasks, load_families, materialize, shown
from gym.family_sources import traced_generate
from gym.sandbox.overlay import overlay_tar
from gym.task_refs import Selection, select_family, task_folder
from gym.tasks import load_task, load_world


def _is_task_tree(path: Path, root: Path) -> bool:
    return any(
        (p / "task.yaml").is_file() or (p / "world.yaml").is_file()
        for p in [path.parent, *path.parent.parents]
        if p.is_relative_to(root)
    )


def discover(paths: list[Path]) -> tuple[list[Path], list[Path], list[Path]]:
    """(task.yaml files, world.yaml files, rubric files) under the given paths."""
    tasks, worlds, rubrics = [], [], []
    for root in paths:
        if root.is_file():
            {"task.yaml": tasks, "world.yaml": worlds}.get(root.name, rubrics).append(root)
            continue
        tasks += sorted(root.rglob("task.yaml"))
        worlds += sorted(root.rglob("world.yaml"))
        rubrics += sorted(
            p
            for p in root.rglob("*.json")
            if not p.name.endswith(".schema.json")
            and "data" not in p.relative_to(root).parts[:-1]
            and not _is_task_tree(p, root)
        )
    return tasks, worlds, rubrics


_WHERE = re.compile(r"^([A-Za-z_]\w*(?:\.\w+)*): (.+)$")


def task_problem(file: Path, exc: EgymError) -> Problem:
    """A TaskError ('path: where: msg') as a Problem with a JSON-path-like location."""
    text = str(exc)
    for prefix in (f"{file}: ", f"{file.parent}: "):
        text = text.removeprefix(prefix)
    match = _WHERE.match(text)
    return (
        Problem(str(file), f"$.{match.group(1)}", match.group(2)) if match else Problem(str(file), "$", text)
    )


_STR = "tag:yaml.org,2002:str"


def _shortened(text: str, keep: int, *, tail: bool = False) -> str:
    if len(text) <= keep:
        return text
    return "..." + text[-keep:] if tail else text[:keep] + "..."


def _looks_cut(value: str, rest: str) -> bool:
    """Whether the ` #...` after a plain text is more likely part of it than a comment.

    A text with a space (a sentence) or a `#word` right after (a channel, a ticket number) is
    flagged; `split: test  # held out` is a comment on purpose and is not.
    """
    return bool(re.match(r"\s+#", rest)) and (" " in value or bool(re.match(r"\s+#\S", rest)))


def _comment_cut(file: Path, node: yaml.ScalarNode, path: str, lines: list[str]) -> Problem | None:
    end = node.end_mark
    rest = lines[end.line][end.column :] if end.line < len(lines) else ""
    if node.style is not None or node.tag != _STR or not _looks_cut(node.value, rest):
        return None
    comment = _shortened(rest.strip(), 40)
    value = _shortened(node.value, 40, tail=True)
    return Problem(
        str(file),
        path,
        f"the text is cut at ' #': YAML reads {comment!r} as a comment, so the value is {value!r}; "
        "quote the value or use a block scalar (|)",
        line=end.line + 1,
        severity="warning",
    )


def comment_cuts(file: Path) -> list[Problem]:
    """Plain (unquoted) texts that YAML ends at ` #`: `prompt: Post it in #sales` is 'Post it in'."""
    try:
        text = file.read_text()
        root = yaml.compose(text)
    except (OSError, UnicodeDecodeError, RecursionError, yaml.YAMLError):
        return []  # the model check reports unreadable YAML
    lines = text.splitlines()
    found = []
    seen: set[int] = set()  # an alias repeats a node (or loops back to it): each node is looked at once

    def walk(node: yaml.Node, path: str) -> None:
        if id(node) in seen:
            return
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                walk(value, f"{path}.{key.value}" if isinstance(key, yaml.ScalarNode) else path)
        elif isinstance(node, yaml.SequenceNode):
            for index, value in enumerate(node.value):
                walk(value, f"{path}[{index}]")
        elif isinstance(node, yaml.ScalarNode) and (problem := _comment_cut(file, node, path, lines)):
            found.append(problem)

    if root is not None:
        walk(root, "$")
    return found


# The prompt is the first user message of every episode: 64 KB is about 16k tokens, twice the
# whole context window of the small models egym trains (SmolLM2: 8k) and some 80 times the longest
# prompt in tasks/ (under 1 KB). Larger is a generator's slip (a data file pasted in), not a task.
MAX_PROMPT_BYTES = 64 << 10


def prompt_too_large(file: Path, prompt: str) -> list[Problem]:
    """An error when the task's prompt is over MAX_PROMPT_BYTES (UTF-8), located at its `prompt:` key."""
    size = len(prompt.encode("utf-8", "surrogatepass"))
    if size <= MAX_PROMPT_BYTES:
        return []
    try:
        found = re.search(r"^prompt\s*:", file.read_text(errors="replace"), re.MULTILINE)
    except OSError:
        found = None
    line = found.string.count("\n", 0, found.start()) + 1 if found else None
    return [
        Problem(
            str(file),
            "$.prompt",
            f"the prompt has {size:,} bytes, over the most a prompt may have ({MAX_PROMPT_BYTES >> 10} KB): "
            "give the agent the data as files in its workspace instead",
            line=line,
        )
    ]


def lint_task(file: Path, report: LintReport) -> None:
    report.tasks += 1
    report.warnings += comment_cuts(file)
    try:
        task = load_task(file.parent)
        overlay_tar((task.initial_state, task.path))
    except TaskError as exc:
        report.problems.append(task_problem(file, exc))
        return
    report.problems += prompt_too_large(file, task.prompt)
    if not (task.path / task.solution).exists():
        report.problems.append(
            Problem(str(file), "$.solution", f"reference solution '{task.solution}' not found")
        )
    rubric = rubric_for_task(task)
    if rubric.parent.parent.is_dir() and not rubric.is_file():
        report.problems.append(Problem(str(file), "$.id", f"no rubric for this task (expected {rubric})"))
    elif rubric.is_file():
        report.warnings += prompt_passes(file, task.prompt, rubric)
        report.problems += answer_fails(file, task.path / task.solution, rubric)


def _answer_items(rubric_file: Path):
    """(item, compiled pattern) of the plain answer checks: contains (points > 0) and absent (penalties)."""
    try:
        rubric = load_rubric(rubric_file)
    except RubricError:
        return  # lint_rubric reports it
    for item in rubric.items:
        check = getattr(item, "check", None)
        wanted = check == "transcript.final_answer_contains" and item.points > 0
        penalty = check == "transcript.final_answer_absent" and item.points < 0
        if item.foreach is not None or not (wanted or penalty):
            continue
        pattern = item.args.get("regex") or (
            re.escape(item.args["text"]) if isinstance(item.args.get("text"), str) else None
        )
        try:
            compiled = re.compile(pattern, 0 if item.args.get("case_sensitive") else re.IGNORECASE)
        except (re.error, TypeError):
            continue  # lint_rubric warns about the pattern
        yield item, compiled


def answer_fails(file: Path, solution: Path, rubric_file: Path) -> list[Problem]:
    """The reference solution's final answer against the answer items: the oracle would lose these points."""
    try:
        steps = yaml.safe_load(solution.read_text()) or []
    except (OSError, yaml.YAMLError):
        return []
    answers = [s["answer"] for s in steps if isinstance(s, dict) and isinstance(s.get("answer"), str)]
    if not answers:
        return []
    found = []
    for item, pattern in _answer_items(rubric_file):
        hit = pattern.search(answers[-1])
        if (item.points > 0) != bool(hit):
            why = (
                f"misses item {item.id!r}"
                if item.points > 0
                else f"trips penalty {item.id!r} ({hit.group(0)!r})"
            )
            found.append(Problem(str(solution), "$.answer", f"the reference answer {why}"))
    rubric = _rubric(rubric_file)
    if rubric is not None:
        prompt = load_task(file.parent).prompt
        found += [
            Problem(str(solution), "$.answer", f"the reference answer {why}")
            for why in reference_misses(rubric, prompt, answers[-1])
        ]
    return found


def _rubric(rubric_file: Path):
    try:
        return load_rubric(rubric_file)
    except RubricError:
        return None  # lint_rubric reports it


def prompt_passes(file: Path, prompt: str, rubric_file: Path) -> list[Problem]:
    """Answer items the prompt itself passes: a policy that repeats the question earns them (cheat-claim)."""
    found = []
    for item, pattern in _answer_items(rubric_file):
        if item.points > 0 and (hit := pattern.search(prompt)):
            found.append(
                Problem(
                    str(file),
                    "$.prompt",
                    f"the prompt itself passes answer item {item.id!r} (it contains {hit.group(0)!r}): an answer "
                    "that repeats the question earns it; label the value or reword the prompt",
                    severity="warning",
                )
            )
    rubric = _rubric(rubric_file)
    for item_id, text in prompt_states(rubric, prompt) if rubric is not None else []:
        found.append(
            Problem(
                str(file),
                "$.prompt",
                f"the prompt itself states the value of claim item {item_id!r} ({text!r}): an answer that "
                "repeats the question earns it; ask for what the prompt does not say",
                severity="warning",
            )
        )
    return found


def lint_world(file: Path, report: LintReport) -> None:
    report.warnings += comment_cuts(file)
    try:
        world = load_world(file.parent)
        overlay_tar((world.initial_state, world.path))
    except TaskError as exc:
        report.problems.append(task_problem(file, exc))


def _folders(ref: str) -> list[Path]:
    """What a ref that is no family lints: the path as given, a world by name (`acme`) with its rubrics,
    or a hand-written task (`acme/q1-close`) with its rubric, shown relative to here when under it."""
    if Path(ref).exists():
        return [Path(ref)]
    folder = task_folder(ref)
    world = folder if (folder / "world.yaml").is_file() else folder.parent
    rubric = world_rubrics(world) if folder == world else world_rubrics(world) / f"{folder.name}.json"
    return [shown(p) for p in (folder, rubric) if p.exists()]


def lint(paths: list[str | Path]) -> LintReport:
    """Check every task, world, rubric and family under `paths`, which may also name a world (`acme`),
    a hand-written task (`acme/q1-close`), one family (`acme/x`, `tasks/acme/families/x.py`), one
    instance (`acme/x-l0-s3`) or a world's families (`tasks/acme/families`); never raises for bad
    files, TaskError when they select nothing."""
    report = LintReport()
    roots: list[Path] = []
    family_worlds: list[Path] = []
    selections: list[Selection] = []
    for ref in map(str, paths):
        path = Path(ref)
        if path.name == "families" and (path.parent / "world.yaml").is_file():
            family_worlds.append(path.parent)
            continue
        try:
            selected = select_family(ref, default_seeds=len(LINT_SEEDS))
        except FamilyError as exc:
            report.problems.append(_family_problem(exc))
            continue
        except TaskError as exc:
            report.problems.append(Problem(ref, "$", str(exc).removeprefix(f"{ref}: ")))
            continue
        if selected is None:
            roots += _folders(ref)
        else:
            selections.append(selected)
    tasks, worlds, rubrics = discover(roots)
    for file in worlds:
        lint_world(file, report)
    for file in tasks:
        lint_task(file, report)
    for file in rubrics:
        lint_rubric(file, report)
    for world_dir in [*family_worlds, *(file.parent for file in worlds)]:
        lint_families(world_dir, report)
    for selection in selections:
        lint_family(selection.family, selection.instances, report)
    if not (report.tasks or report.rubrics or worlds or report.problems or report.warnings):
        raise TaskError(
            f"nothing to lint in {', '.join(map(str, paths))}: no task, world, rubric or family there"
        )
    return report


LINT_SEEDS = range(3)  # instances generated per family level: enough to catch a generator's slips


def lint_families(world_dir: Path, report: LintReport) -> None:
    """Every family of the world at each level for a few seeds: it loads, it generates, its instances
    lint, and no hand-written task has its name. A family that fails to load is one problem; the
    others are still linted."""
    found, broken = load_families(world_dir.resolve())
    for name, exc in broken.items():
        report.problems += [_family_problem(exc), *_clashes(world_dir.resolve(), name, exc.file)]
    for family in found.values():
        lint_family(family, [(level, seed) for level in family.levels for seed in LINT_SEEDS], report)


def lint_family(family: Family, instances: list[tuple[int, int]], report: LintReport) -> None:
    """The family's instances lint, each problem shown at the family's line that made what it is
    about (gym.family_sources); a level whose generator fails is one problem at the line that raised."""
    report.problems += _clashes(family.world_dir, family.name, family.path)
    failed: set[int] = set()
    for level, seed in instances:
        if level in failed:
            continue
        try:
            instance, sources = traced_generate(family, level, seed)
            task = materialize(family, level, seed, instance=instance)
        except FamilyError as exc:
            report.problems.append(_family_problem(exc))
            failed.add(level)
            continue
        except TaskError as exc:
            report.problems.append(Problem(str(shown(family.path)), f"level {level} seed {seed}", str(exc)))
            failed.add(level)
            continue
        rubric = rubric_for_task(task)
        problems, warnings = len(report.problems), len(report.warnings)
        lint_task(task.path / "task.yaml", report)
        lint_rubric(rubric, report)
        report.problems[problems:] = [sources.locate(p, rubric, task.key) for p in report.problems[problems:]]
        report.warnings[warnings:] = [sources.locate(w, rubric, task.key) for w in report.warnings[warnings:]]


def _family_problem(exc: FamilyError) -> Problem:
    return Problem(str(shown(exc.file)), exc.where, exc.reason, line=exc.line)


def _clashes(world_dir: Path, name: str, file: Path) -> list[Problem]:
    """A hand-written task whose ref names the family (or one of its instances) is an error."""
    found = []
    for task_id in clashing_tasks(world_dir, name):
        what = "this family" if task_id == name else "an instance of this family"
        found.append(
            Problem(
                str(shown(file)),
                f"family {world_dir.name}/{name}",
                f"{world_dir.name}/{task_id} names {what}, not the hand-written task "
                f"{shown(world_dir / task_id)}: rename one of them",
            )
        )
    return found
