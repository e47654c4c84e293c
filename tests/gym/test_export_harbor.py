"""`egym export --format harbor`: the folders, read by Harbor's own loader and linter, and run in Docker.

The Docker tests play a Harbor trial by hand, the way Harbor's docker environment does
(build environment/, start it with no network, wait for the healthcheck, copy solution/
in and run solve.sh as the agent, copy tests/ in as root and run test.sh as root) and
compare the reward file with egym's own oracle grade of the same instance.
"""

from __future__ import annotations

import asyncio
import io
import json
import stat
import subprocess
import tarfile
import time
import tomllib
import uuid
from pathlib import Path

import pytest
import yaml

from core.errors import TaskError
from gym.interop.harbor import ANSWER_FILE, READY_FILE, export_harbor
from gym.task_refs import resolve
from tests.gym.task_fixture import write_mini_world
from tests.interop.side_venv import side_venv

HARBOR = "harbor==0.26.0"
FAMILY = "acme/product-price"


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> dict[str, Path]:
    """product-price level 0 seeds 0-2, a hand-written task of a test world, a task with a judge item and
    one whose rubric names its world's check module."""
    root = tmp_path_factory.mktemp("harbor")
    write_mini_world(root / "mini")
    tasks = [
        *resolve([FAMILY], seeds="0-2", levels="0"),
        *resolve([root / "mini" / "tasks" / "mini" / "ship-order"]),
        *resolve(["tasks/acme/manager-question"]),
        *resolve(["tasks/acme/salary-request-refusal"]),
    ]
    started = time.monotonic()
    folders = export_harbor(tasks, root / "out")
    print(f"export: {(time.monotonic() - started) / len(folders):.2f} s per task")
    return {folder.name: folder for folder in folders}


def test_export_writes_a_harbor_folder_per_task(exported):
    assert sorted(exported) == [
        "acme.manager-question",
        "acme.product-price-l0-s0",
        "acme.product-price-l0-s1",
        "acme.product-price-l0-s2",
        "acme.salary-request-refusal",
        "mini.ship-order",
    ]
    folder = exported["acme.product-price-l0-s0"]
    config = tomllib.loads((folder / "task.toml").read_text())
    assert config["task"]["name"] == "acme/product-price-l0-s0"
    assert config["agent"]["user"] == "agent"
    compose = yaml.safe_load((folder / "environment" / "docker-compose.yaml").read_text())
    assert compose["services"]["main"]["network_mode"] == "none"
    assert config["environment"]["mcp_servers"] == [
        {
            "name": "db",
            "transport": "stdio",
            "command": "/opt/egym/venv/bin/python3",
            "args": ["-I", "-m", "mcp_wrappers.db"],
        }
    ]
    instance = yaml.safe_load(Path(".egym/instances/tasks/acme/product-price-l0-s0/task.yaml").read_text())
    assert instance["prompt"].strip() in (folder / "instruction.md").read_text()
    assert ANSWER_FILE in (folder / "instruction.md").read_text()
    assert "egym-tool db query" in (folder / "solution" / "solve.sh").read_text()
    assert (folder / "environment" / "Dockerfile").read_text().startswith("# egym task")
    # The answer key is root-only: docker cp keeps the modes and makes root the owner.
    tests = folder / "tests"
    rubric = tests / "egym" / "rubrics" / "acme" / "product-price-l0-s0.json"
    assert json.loads(rubric.read_text())["task"] == "acme/product-price-l0-s0"
    assert all(stat.S_IMODE(p.stat().st_mode) & 0o077 == 0 for p in [tests, *tests.rglob("*")])
    assert not list((folder / "environment").rglob("*.json"))  # no rubric in the image's build context
    # A task's own check module travels with its rubric; a hand-written task's `write` step becomes shell.
    assert (
        exported["acme.salary-request-refusal"] / "tests" / "egym" / "rubrics" / "acme" / "checks.py"
    ).is_file()
    assert (
        "printf '%s' 'order 2 shipped today"
        in (exported["mini.ship-order"] / "solution" / "solve.sh").read_text()
    )
    assert (
        tomllib.loads((exported["acme.manager-question"] / "task.toml").read_text())["metadata"][
            "judge_items"
        ]
        == 1
    )


def test_a_solution_step_with_no_shell_equivalent_is_refused(tmp_path):
    write_mini_world(tmp_path)
    task = resolve([tmp_path / "tasks" / "mini" / "ship-order"])[0]
    (task.path / task.solution).write_text(
        yaml.safe_dump([{"tool": "edit", "args": {"path": "a", "old_string": "x", "new_string": "y"}}])
    )
    with pytest.raises(TaskError, match="step 0 uses the built-in tool 'edit'"):
        export_harbor([task], tmp_path / "out")


LOAD = """
import json, sys
from harbor.models.task.task import Task
out = {}
for path in sys.argv[1:]:
    task = Task(path)
    c = task.config
    out[task.name] = {
        "valid": Task.is_valid_dir(path),
        "instruction": task.instruction,
        "agent_user": c.agent.user,
        "agent_timeout": c.agent.timeout_sec,
        "healthcheck": c.environment.healthcheck.command,
        "mcp": [s.name for s in c.environment.mcp_servers],
        "egym_task": c.metadata["egym_task"],
        "solve": str(task.paths.discovered_solve_path),
        "test": str(task.paths.discovered_test_path_for(c.environment.os)),
    }
print(json.dumps(out))
"""


@pytest.mark.slow
def test_harbor_loads_the_exported_folders(exported):
    python = side_venv("harbor", [HARBOR], python="3.12")
    done = subprocess.run(
        [python, "-c", LOAD, *map(str, exported.values())], capture_output=True, text=True, check=True
    )
    loaded = json.loads(done.stdout)
    assert sorted(loaded) == sorted(f"{n.split('.')[0]}/{n.split('.', 1)[1]}" for n in exported)
    s0 = loaded["acme/product-price-l0-s0"]
    folder = exported["acme.product-price-l0-s0"]
    assert s0["valid"] is True
    assert s0["instruction"] == (folder / "instruction.md").read_text()
    assert (s0["agent_user"], s0["agent_timeout"]) == ("agent", 300.0)
    assert s0["healthcheck"] == f"test -f {READY_FILE}"
    assert s0["mcp"] == ["db"] and sorted(loaded["acme/manager-question"]["mcp"]) == ["chat", "db", "office"]
    assert s0["egym_task"] == "acme/product-price-l0-s0"
    assert s0["solve"] == str((folder / "solution" / "solve.sh").resolve())
    assert s0["test"] == str((folder / "tests" / "test.sh").resolve())


def _compose_v2() -> bool:
    return subprocess.run(["docker", "compose", "version"], capture_output=True).returncode == 0


@pytest.mark.slow
def test_harbor_lint_passes_but_for_the_shared_verifier(exported):
    """Harbor's linter (its compose checks need the Compose v2 CLI, not a daemon)."""
    config_help = subprocess.run(["docker", "compose", "config", "--help"], capture_output=True, text=True)
    if "--no-env-resolution" not in config_help.stdout:  # make compose builds 2.40 (images/ensure-compose.sh)
        pytest.fail(
            "harbor lint needs Docker Compose 2.30+ (`config --no-env-resolution`): run `make compose`"
        )
    harbor = str(Path(side_venv("harbor", [HARBOR], python="3.12")).parent / "harbor")
    lint = subprocess.run(
        [harbor, "lint", "--ignore", "shared-verifier", *map(str, exported.values())],
        capture_output=True,
        text=True,
    )
    assert lint.returncode == 0, lint.stdout + lint.stderr


# -- the Docker half: a Harbor trial played by hand ------------------------------------------------------


def _tar(folder: Path) -> bytes:
    """The folder as `docker cp` sends it: modes kept, everything owned by root."""

    def as_root(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid = info.gid = 0
        info.uname = info.gname = "root"
        return info

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path in sorted(folder.iterdir()):
            tar.add(path, arcname=path.name, filter=as_root)
    return buf.getvalue()


class Trial:
    """A container of an exported task, started as Harbor's docker environment starts it."""

    def __init__(self, folder: Path):
        from gym.sandbox.docker_client import client

        self.folder = folder
        self.tag = f"egym-harbor-test/{folder.name}:latest"
        started = time.monotonic()
        client().images.build(path=str(folder / "environment"), tag=self.tag, rm=True, forcerm=True)
        self.build_s = time.monotonic() - started
        self.container = client().containers.run(
            self.tag,
            detach=True,
            network_mode="none",
            labels={"egym.managed": "1", "egym.run": "harbor-test"},
        )
        deadline = time.monotonic() + 90
        while self.exec(f"test -f {READY_FILE}").exit_code != 0:
            assert time.monotonic() < deadline, self.container.logs().decode()[-2000:]
            time.sleep(0.5)

    def exec(self, command: str, user: str = "root"):
        return self.container.exec_run(["bash", "-c", command], user=user, workdir="/workspace")

    def copy_in(self, source: str, target: str) -> None:
        assert self.exec(f"mkdir -p {target}").exit_code == 0
        self.container.put_archive(target, _tar(self.folder / source))

    def solve(self) -> None:
        self.copy_in("solution", "/solution")
        result = self.exec("bash /solution/solve.sh", user="agent")
        assert result.exit_code == 0, result.output.decode()[-2000:]

    def verify(self) -> tuple[int, float | None, dict]:
        """test.sh's exit code, the reward file (None when absent) and grade.json."""
        self.exec("mkdir -p /logs/verifier")
        self.copy_in("tests", "/tests")
        started = time.monotonic()
        result = self.exec("bash /tests/test.sh > /logs/verifier/test-stdout.txt 2>&1")
        self.test_s = time.monotonic() - started
        reward = self.exec("cat /logs/verifier/reward.txt")
        grade = json.loads(self.exec("cat /logs/verifier/grade.json").output)
        return result.exit_code, float(reward.output) if reward.exit_code == 0 else None, grade

    def close(self) -> None:
        from gym.sandbox.docker_client import client

        self.container.remove(force=True, v=True)
        client().images.remove(self.tag, noprune=False)


def egym_oracle_grade(task_path: Path):
    """egym's own oracle rollout of the same task: the grade the Harbor reward must equal."""
    from gym.episode import open_episode
    from gym.policies.oracle import OraclePolicy
    from gym.tasks import load_task

    async def run():
        task = load_task(task_path)
        async with open_episode(task, run_id="harbor-test", rollout_id=uuid.uuid4().hex[:8]) as episode:
            return await episode.grade(await episode.play(OraclePolicy(task)))

    return asyncio.run(run())


def _statuses(items) -> dict[str, str]:
    return {item["id"]: item["status"] for item in items}


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize(
    "name, task_path",
    [
        ("acme.product-price-l0-s0", ".egym/instances/tasks/acme/product-price-l0-s0"),
        ("mini.ship-order", None),
    ],
)
def test_oracle_solution_earns_egyms_oracle_reward(exported, name, task_path, monkeypatch):
    monkeypatch.delenv("EGYM_JUDGE_MODEL", raising=False)
    folder = exported[name]
    task_path = (
        Path(task_path) if task_path else folder.parent.parent / "mini" / "tasks" / "mini" / "ship-order"
    )
    expected = egym_oracle_grade(task_path)
    assert not expected.incomplete
    trial = Trial(folder)
    try:
        trial.solve()
        code, reward, grade = trial.verify()
        print(f"{name}: image build {trial.build_s:.1f} s, test.sh {trial.test_s:.1f} s")
    finally:
        trial.close()
    assert code == 0
    assert reward == expected.normalized
    assert _statuses(grade["items"]) == _statuses(i.model_dump() for i in expected.items)


@pytest.mark.docker
@pytest.mark.slow
def test_a_wrong_answer_earns_less(exported):
    trial = Trial(exported["acme.product-price-l0-s0"])
    try:
        trial.exec(f"echo 'It costs 1.00 EUR.' > {ANSWER_FILE}", user="agent")
        code, reward, grade = trial.verify()
    finally:
        trial.close()
    assert code == 0
    assert reward is not None and reward < 1.0
    assert _statuses(grade["items"])["price"] == "fail"


@pytest.mark.docker
@pytest.mark.slow
def test_an_incomplete_grade_writes_no_reward(exported, monkeypatch):
    """A judge item cannot be graded in the container (no judge, no network): no reward, never a 0."""
    trial = Trial(exported["acme.manager-question"])
    try:
        trial.solve()
        code, reward, grade = trial.verify()
    finally:
        trial.close()
    assert code == 2
    assert reward is None
    assert grade["incomplete"] is True
    assert {i["kind"] for i in grade["items"] if i["status"] == "error"} == {"judge"}
    assert any(i["status"] == "pass" for i in grade["items"] if i["kind"] == "python")


@pytest.mark.docker
@pytest.mark.slow
def test_harbor_run_with_its_oracle_agent(exported, tmp_path, monkeypatch):
    """`harbor run -a oracle` end to end: Harbor builds, starts (docker compose), solves and verifies."""
    if not _compose_v2():  # make compose builds it (images/ensure-compose.sh): missing is a broken setup
        pytest.fail("harbor run needs Docker Compose v2: run `make compose`")
    monkeypatch.delenv("EGYM_JUDGE_MODEL", raising=False)
    expected = egym_oracle_grade(Path(".egym/instances/tasks/acme/product-price-l0-s0"))
    harbor = Path(side_venv("harbor", [HARBOR], python="3.12")).parent / "harbor"
    folder = exported["acme.product-price-l0-s0"]
    jobs = tmp_path / "jobs"
    done = subprocess.run(
        [str(harbor), "run", "-p", str(folder), "-a", "oracle", "-e", "docker", "-o", str(jobs)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (trial,) = jobs.glob(f"*/{folder.name}__*")
    result = json.loads((trial / "result.json").read_text())
    assert result["exception_info"] is None
    assert result["verifier_result"]["rewards"] == {"reward": expected.normalized}
    grade = json.loads((trial / "verifier" / "grade.json").read_text())
    assert _statuses(grade["items"]) == _statuses(i.model_dump() for i in expected.items)
