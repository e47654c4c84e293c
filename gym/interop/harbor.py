"""`egym export --format harbor`: task instances as Harbor task folders (`harbor run -p FOLDER`).

    <out>/<world>.<task-id>/
      instruction.md          who the agent is, the apps, the task's prompt, where to write the final answer
      task.toml               limits, agent as OS user `agent`, readiness check, the MCP servers
      environment/Dockerfile  FROM egym/world:latest; bakes the world's then the task's initial state
      environment/{world,task}/  the two overlays, as egym-init reads them; egym-start; egym-tool;
                              docker-compose.yaml (no network, an init)
      solution/solve.sh       the reference solution (solution/actions.yaml) as shell commands
      tests/test.sh           end the agent's episode, grade in the container, write the reward
      tests/verify.py         gym/interop/harbor_verify.py; tests/egym/: core, grader, the rubric, its checks

No second grader and no second lifecycle: the image is built the way egym builds a
world image (`egym-init bake` of overlay_tar), the grade is `grade_async` with
`SandboxProbe` (harbor_verify.py), and the answer key reaches the container only in
`tests/`, which Harbor copies in after the agent. The world's layers are the same
bytes in every instance of a world, so Docker's build cache shares them.
"""

from __future__ import annotations

import io
import json
import shlex
import shutil
import sys
import tarfile
from pathlib import Path
from typing import Any

from core.errors import TaskError
from grader.checks import resolve as resolve_check
from grader.loader import load_rubric, rubric_for_task
from grader.rubric import PythonItem, Rubric
from gym.harness.prompt import app_line
from gym.mcp_client import server_command
from gym.policies.oracle import AnswerStep, load_solution
from gym.sandbox.docker_client import default_image
from gym.sandbox.overlay import overlay_tar
from gym.tasks import Task, World, world_of
from mcp_wrappers.apps import apps as all_apps

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
ANSWER_FILE = "/home/agent/answer.txt"  # harbor_verify.ANSWER_FILE reads it
READY_FILE = "/run/egym-ready"
GRADE_MARGIN_S = 60  # the verifier's timeout over the rubric's own grading budget

DOCKERFILE = """\
# egym task {key}: the world image with this task's initial state baked in.
FROM {base}
# The world's initial state (the same bytes for every task of the world: a cached layer).
COPY world/ /egym/overlay/
RUN EGYM_APPS={world_apps} /opt/egym/bin/egym-init bake
# This task's own overlay.
COPY task/ /egym/overlay/
RUN EGYM_APPS={apps} /opt/egym/bin/egym-init bake
COPY egym-start /opt/egym/harbor/start
COPY egym-tool /usr/local/bin/egym-tool
RUN chmod 0755 /opt/egym/harbor/start /usr/local/bin/egym-tool
ENV EGYM_APPS={apps}
# Harbor replaces the command with `sleep infinity`; the entrypoint starts the apps first.
ENTRYPOINT ["/opt/egym/harbor/start"]
CMD ["sleep", "infinity"]
"""

# Harbor enforces `network_mode = "no-network"` with an egress sidecar built from a registry
# image; the task's own compose file takes the network away on any Docker host (Harbor keeps
# task-authored networking), and adds the init egym's sandboxes run under.
COMPOSE = """\
services:
  main:
    build:
      context: .
    network_mode: none
    init: true
"""

START = f"""\
#!/bin/bash
# Start the apps and mark the baseline as an egym sandbox does (egym-init serve), in the
# background; {READY_FILE} appears once they answer (task.toml's healthcheck waits for it).
/opt/egym/bin/egym-init serve 2>&1 | while IFS= read -r line; do
  echo "$line" >> /var/log/egym/init.log
  case "$line" in "EGYM READY"*) touch {READY_FILE} ;; esac
done &
exec "$@"
"""

TEST_SH = """\
#!/bin/bash
# Grade this egym task: end the agent's episode, then egym's grader, in the container, as root.
set -u
mkdir -p /logs/verifier
# Nothing the agent left running may change the state (or plant a reward) from here on.
/opt/egym/bin/end-episode || {{ echo "egym: could not end the agent's episode"; exit 1; }}
rm -f /logs/verifier/reward.json /logs/verifier/reward.txt
exec /opt/egym/venv/bin/python3 -I /tests/verify.py {rubric}
"""


def export_harbor(tasks: list[Task], out: str | Path) -> list[Path]:
    """Write each task as a Harbor task folder under `out`; returns the folders."""
    return [write_task(task, Path(out)) for task in tasks]


def write_task(task: Task, out: Path) -> Path:
    world = world_of(task)
    rubric = load_rubric(rubric_for_task(task))
    folder = out / f"{task.world}.{task.id}"
    shutil.rmtree(folder, ignore_errors=True)  # a re-export replaces the folder whole
    folder.mkdir(parents=True)
    (folder / "instruction.md").write_text(instruction(task, world))
    (folder / "task.toml").write_text(task_toml(task, rubric))
    _environment(task, world, folder / "environment")
    _write(folder / "solution" / "solve.sh", solve_script(task), 0o755)
    _tests(task, rubric, folder / "tests")
    return folder


def instruction(task: Task, world: World) -> str:
    agent = world.agent
    apps = "\n".join(
        app_line(app, agent.chat_username, "full").replace(f"the `{app}.*` tools", f"`egym-tool {app} ...`")
        for app in task.apps
    )
    intro = task.system_prompt or (
        f"You are {agent.name}, {agent.title} at {world.company}. Your e-mail is {agent.email}.\n"
        f"{world.description.strip()}\n"
        f"Today is {world.date.strftime('%A, %d %B %Y')}. You work on your company workstation as the "
        "Linux user `agent`. Your working files are in /workspace."
    )
    return f"""{intro}

## Apps
{apps or "- (none for this task: use the files in /workspace)"}

`egym-tool SERVER --list` lists a server's tools and their arguments; call one with
`egym-tool SERVER TOOL '{{"argument": "value"}}'`. Agents that speak MCP also get them
as the MCP servers {", ".join(f"`{a}`" for a in task.apps) or "(none)"}.

## Your task
{task.prompt.strip()}

## When you are done
Write your final message (what you did, and any answer you were asked for) to
`{ANSWER_FILE}`: it is your reply, and it is read when your work is checked.
"""


def task_toml(task: Task, rubric: Rubric) -> str:
    judged = sum(item.kind == "judge" for item in rubric.items)
    sections: list[tuple[str, dict[str, Any]]] = [
        ("", {"schema_version": "1.4", "source": f"egym:{task.key}"}),
        (
            "task",
            {
                "name": f"{task.world}/{task.id}",
                "description": task.title,
                "keywords": ["egym", task.world, *task.tags],
            },
        ),
        (
            "metadata",
            {
                "egym_task": task.key,
                "split": task.split,
                "pass_threshold": task.pass_threshold,
                "judge_items": judged,  # graded as errors in the container: such a grade gives no reward
                **({"bands": {key: entry.band for key, entry in task.bands.items()}} if task.bands else {}),
            },
        ),
        ("agent", {"timeout_sec": task.limits.time_limit_s, "user": "agent"}),
        ("verifier", {"timeout_sec": rubric.limits.grade_timeout_s + GRADE_MARGIN_S}),
        (
            "environment",
            {
                "cpus": 1,
                "memory_mb": 2048,
                "build_timeout_sec": 900,
                "workdir": "/workspace",
            },
        ),
        (
            "environment.healthcheck",
            {
                "command": f"test -f {READY_FILE}",
                "interval_sec": 1,
                "start_interval_sec": 1,
                "start_period_sec": 90,
                "timeout_sec": 10,
                "retries": 3,
            },
        ),
    ]
    text = "".join(_toml_table(name, values) for name, values in sections)
    for app in task.apps:
        command, *args = server_command(app)
        text += _toml_table(
            "[environment.mcp_servers]",
            {"name": app, "transport": "stdio", "command": command, "args": args},
        )
    return text


def _toml_table(name: str, values: dict[str, Any]) -> str:
    """A TOML table (`[[x]]` when the name comes bracketed); strings and lists are JSON, which TOML reads."""
    head = f"[{name}]\n" if name else ""
    body = "".join(f"{key} = {_toml_value(value)}\n" for key, value in values.items())
    return f"{head}{body}\n"


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, dict):  # an inline table: TOML's `key = value`, not JSON's `key: value`
        return "{" + ", ".join(f"{_toml_value(str(k))} = {_toml_value(v)}" for k, v in value.items()) + "}"
    return json.dumps(value, ensure_ascii=False)


def _environment(task: Task, world: World, folder: Path) -> None:
    _extract(overlay_tar((world.initial_state, world.path)), folder / "world")
    _extract(overlay_tar((task.initial_state, task.path)), folder / "task")
    dockerfile = DOCKERFILE.format(
        key=task.key,
        base=default_image(),
        world_apps=",".join(sorted(world.apps)),
        apps=",".join(task.apps),
    )
    _write(folder / "Dockerfile", dockerfile)
    _write(folder / "docker-compose.yaml", COMPOSE)
    _write(folder / "egym-start", START, 0o755)
    tool = (HERE / "harbor_tool.py").read_text()
    _write(folder / "egym-tool", "#!/opt/egym/venv/bin/python3 -I\n" + tool, 0o755)


def _extract(archive: bytes, folder: Path) -> None:
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")


# The harness's built-in tools an oracle step may use, as shell (run as the agent, in the solution's one shell).
BUILTIN_STEPS = {
    "bash": lambda args: str(args.get("command", "")) + " </dev/null",
    "read": lambda args: f"cat -- {shlex.quote(str(args['path']))}",
    "write": lambda args: (
        f'mkdir -p -- "$(dirname -- {shlex.quote(str(args["path"]))})" && '
        f"printf '%s' {shlex.quote(str(args['content']))} > {shlex.quote(str(args['path']))}"
    ),
}


def solve_script(task: Task) -> str:
    """The oracle's steps as one bash script run as the agent: one shell, as the harness's bash tool keeps."""
    lines = [
        "#!/bin/bash",
        f"# Reference solution of egym task {task.key} ({task.solution}), step by step.",
        "cd /workspace",
    ]
    for index, step in enumerate(load_solution(task.path / task.solution)):
        if isinstance(step, AnswerStep):
            lines += [
                f"# step {index}: the final answer",
                f"printf '%s\\n' {shlex.quote(step.answer)} > {ANSWER_FILE}",
            ]
        elif step.tool in BUILTIN_STEPS:
            lines += [f"# step {index}: {step.tool}", BUILTIN_STEPS[step.tool](step.args)]
        elif "." in step.tool and step.tool.partition(".")[0] in all_apps():
            server, _, name = step.tool.partition(".")
            args = shlex.quote(json.dumps(step.args, ensure_ascii=False))
            lines += [f"# step {index}: {step.tool}", f"egym-tool {server} {name} {args}"]
        else:
            raise TaskError(
                f"{task.path / task.solution}: step {index} uses the built-in tool {step.tool!r}, "
                f"which the Harbor export cannot replay as a shell command ({', '.join(BUILTIN_STEPS)} can)"
            )
    return "\n".join(lines) + "\n"


def _tests(task: Task, rubric: Rubric, folder: Path) -> None:
    """test.sh, verify.py and tests/egym/ (core, grader, the rubric and its check modules), root-only."""
    lib = folder / "egym"
    for package in ("core", "grader"):
        shutil.copytree(REPO / package, lib / package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    assert rubric.path is not None
    rubric_rel = Path("rubrics") / task.world / f"{task.id}.json"
    _write(lib / rubric_rel, rubric.path.read_bytes())
    for item in rubric.items:
        if item.foreach is not None and item.foreach.values_file:
            _write(
                lib / rubric_rel.parent / item.foreach.values_file,
                (rubric.path.parent / item.foreach.values_file).read_bytes(),
            )
    for module in _check_modules(rubric):
        _copy_module(module, lib)
    rows = _initial_rows(task, rubric)
    if rows is not None:
        _write(folder / "initial_rows.json", json.dumps(rows, default=str))
    _write(folder / "verify.py", (HERE / "harbor_verify.py").read_text())
    _write(folder / "test.sh", TEST_SH.format(rubric=shlex.quote(rubric_rel.as_posix())), 0o700)
    _private(folder)


def _check_modules(rubric: Rubric) -> set[str]:
    """The modules of the rubric's own checks (`rubrics.acme.checks:posted`); built-ins ship with grader."""
    modules = set()
    for item in rubric.items:
        if isinstance(item, PythonItem) and not resolve_check(
            item.check, near=rubric.path
        ).__module__.startswith("grader."):
            modules.add(resolve_check(item.check, near=rubric.path).__module__)
    return modules


def _copy_module(module: str, lib: Path) -> None:
    """A check module's file, with each of its packages' __init__.py."""
    parts = module.split(".")
    for depth in range(1, len(parts) + 1):
        name = ".".join(parts[:depth])
        source = sys.modules[name].__file__
        if source is None:
            continue
        rel = Path(*parts[:depth]) / "__init__.py" if depth < len(parts) else Path(*parts).with_suffix(".py")
        _write(lib / rel, Path(source).read_bytes())


def _initial_rows(task: Task, rubric: Rubric) -> dict[str, Any] | None:
    """Rows of the rubric's initial queries, from egym's cache or an untouched sandbox (needs Docker once)."""
    if not rubric.initial_queries():
        return None
    from grader.initial_state import initial_rows
    from gym.episode import TaskInitialState

    return initial_rows(rubric, TaskInitialState(task))


def _private(folder: Path) -> None:
    """Root-only modes: `docker cp` keeps them and makes root the owner, so the agent cannot read the key."""
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o700 if path.is_dir() or path.suffix == ".sh" else 0o600)


def _write(path: Path, data: str | bytes, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    path.chmod(mode)
