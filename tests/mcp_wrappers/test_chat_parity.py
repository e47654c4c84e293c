"""Same tasks, same grades: a chat task's oracle scores the same on real Mattermost and on our service.

A sample of chat tasks and chat family instances is run with the `oracle` policy in sandboxes
of both images (`--chat real` = egym/world:mattermost, `--chat compat` = egym/world:latest),
through `gym.rollout.run_rollout` as `egym rollout`/`validate` run them, and every rubric item
must get the same status and points on both. Picked for what differed before: onboard-engineer
adds people to a public channel (only its members may, in Mattermost), and every join or add
writes a system post on the real server only (the snapshot leaves those out).
Needs both images (`bash images/build.sh && bash images/mattermost/build.sh`).
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest

pytestmark = [pytest.mark.docker, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
TASKS = ["tasks/acme/onboard-engineer", "tasks/acme/manager-question"]
# (family, level, seed): seed 9 of onboard-new-hire level 2 is a hire into #engineering, which the
# agent is not in (it has to join before adding); coworker-question ends in a direct message.
INSTANCES = [("onboard-new-hire", 2, 9), ("coworker-question", 2, 0)]
SAMPLE = [Path(t).name for t in TASKS] + [f"{f}-l{lv}-s{s}" for f, lv, s in INSTANCES]


def _tasks() -> dict:
    from gym.families import families, materialize
    from gym.tasks import load_task

    world = ROOT / "tasks" / "acme"
    found = {Path(t).name: load_task(ROOT / t) for t in TASKS}
    family_of = families(world)
    for (name, level, seed), label in zip(INSTANCES, SAMPLE[len(TASKS) :], strict=True):
        found[label] = materialize(family_of[name], level, seed)
    return found


def _oracle(task, image: str):
    from gym.rollout import RolloutSpec, run_rollout

    spec = RolloutSpec(
        run_id="pytest-chat-parity",
        rollout_id=uuid.uuid4().hex[:12],
        task=task.key,
        task_path=str(task.path.absolute()),
        policy="oracle",
    )
    with pytest.MonkeyPatch.context() as env:
        env.setenv("EGYM_IMAGE", image)  # what `--chat` sets (gym.sandbox.docker_client.select_chat)
        outcome = asyncio.run(run_rollout(spec))
    assert outcome.grade is not None, f"{task.key} on {image}: {outcome.error}"
    return outcome.grade


@pytest.fixture(scope="module")
def grades() -> dict[str, dict]:
    from gym.sandbox.docker_client import CHAT_IMAGES, require_image

    for image in CHAT_IMAGES.values():
        require_image(image)
    return {
        label: {chat: _oracle(task, image) for chat, image in CHAT_IMAGES.items()}
        for label, task in _tasks().items()
    }


@pytest.mark.parametrize("label", SAMPLE)
def test_the_oracle_gets_the_same_grade_item_by_item_on_both_servers(grades, label):
    by_server = {
        chat: {i.id: (i.status, i.earned) for i in grade.items} for chat, grade in grades[label].items()
    }
    errors = {  # why a check could not run (e.g. the chat snapshot failed): shown with the difference
        chat: next((i.error for i in grade.items if i.status == "error" and i.kind != "judge"), None)
        for chat, grade in grades[label].items()
    }
    assert by_server["real"] == by_server["compat"], (
        errors,
        {
            item: {chat: items.get(item) for chat, items in by_server.items()}
            for item in set(by_server["real"]) | set(by_server["compat"])
            if by_server["real"].get(item) != by_server["compat"].get(item)
        },
    )
    real, compat = grades[label]["real"], grades[label]["compat"]
    assert (real.earned, real.possible) == (compat.earned, compat.possible)
    # Not a vacuous match: the oracle earns every point a check can give (judge items error without a judge).
    checked = [i for i in real.items if i.status != "error" and i.points > 0]
    assert checked and all(i.status == "pass" for i in checked), [
        (i.id, i.evidence) for i in checked if i.status != "pass"
    ]
