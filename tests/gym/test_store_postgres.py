"""The run store on PostgreSQL (the team setup): the same guarantees as on SQLite.

The server is the PostgreSQL 15 of the egym/world image, started in a container
of its own that listens on a loopback port of the host (this fixture only; rollout
containers never have a network).
"""

from __future__ import annotations

import contextlib
import time

import docker.errors
import pytest

from core.owner import owner_label
from grader.grade import Grade, ItemResult
from gym.sandbox.docker_client import LABEL, client
from gym.store import ItemResultRow, Store
from tests.gym.test_store import TASK, make_grade, make_trajectory

pytestmark = pytest.mark.docker
SERVE = """
set -e
printf 'local all all peer\nhost all all 0.0.0.0/0 trust\n' > /tmp/hba.conf
runuser -u postgres -- /usr/lib/postgresql/15/bin/pg_ctl -D /var/lib/postgresql/15/main \
  -o "-c config_file=/etc/postgresql/15/main/postgresql.conf -c listen_addresses=* -c hba_file=/tmp/hba.conf" \
  -l /tmp/pg.log -w start
runuser -u postgres -- createdb egym_runs
echo READY
exec sleep infinity
"""


@pytest.fixture(scope="module")
def pg_url(docker_image):
    container = client().containers.run(
        docker_image,
        entrypoint=["bash", "-c", SERVE],
        detach=True,
        ports={"5432/tcp": ("127.0.0.1", None)},
        labels={LABEL: "1", "egym.run": "pytest-store-pg", "egym.owner": owner_label()},
    )
    try:
        deadline = time.monotonic() + 60
        while b"READY" not in container.logs():
            container.reload()
            assert container.status != "exited" and time.monotonic() < deadline, container.logs().decode()[
                -500:
            ]
            time.sleep(0.2)
        container.reload()
        port = container.ports["5432/tcp"][0]["HostPort"]
        yield f"postgresql://postgres@127.0.0.1:{port}/egym_runs"
    finally:
        with contextlib.suppress(docker.errors.NotFound):
            container.remove(force=True)


@pytest.fixture
def store(pg_url):
    s = Store(pg_url)
    yield s
    with s.engine.begin() as conn:
        conn.exec_driver_sql("TRUNCATE runs, rollouts, item_results CASCADE")
    s.close()


def test_postgres_store_plans_claims_and_records_once(store):
    assert store.engine.dialect.name == "postgresql" and "+psycopg" in store.url
    store.create_run("pg", policy="oracle", tasks=[TASK], samples=2)
    rows = store.add_rollouts("pg", [(TASK, 0), (TASK, 1)])
    assert [r.id for r in store.add_rollouts("pg", [(TASK, 0), (TASK, 1)])] == [r.id for r in rows]
    assert store.claim(rows[0].id, owner_label()) and not store.claim(rows[0].id, "otherhost:1:1")
    for _ in range(2):
        store.record(rows[0].id, trajectory=make_trajectory(), grade=make_grade(3), passed=True, seconds=2.0)
    assert not store.claim(rows[0].id, "me")
    row = store.get_rollout(rows[0].id[:5])
    assert (str(row.grade_model()), len(row.items), row.trajectory_model().final_answer) == ("3/3", 3, "done")
    stats = store.run_stats("pg")
    assert (stats["done"], stats["pending"], stats["pass_rate"], stats["mean_reward"]) == (1, 1, 1.0, 1.0)


def test_postgres_write_interrupted_midway_leaves_previous_state(store, monkeypatch):
    store.create_run("pg", policy="oracle", tasks=[TASK])
    (row,) = store.add_rollouts("pg", [(TASK, 0)])
    store.claim(row.id, "me")
    store.record(row.id, trajectory=make_trajectory("first"), grade=make_grade(1), passed=False)
    original = ItemResultRow.from_model.__func__

    def crash(cls, position, item):
        if position == 2:
            raise RuntimeError("injected crash")
        return original(cls, position, item)

    monkeypatch.setattr(ItemResultRow, "from_model", classmethod(crash))
    grade = Grade(
        task=TASK,
        earned=3,
        possible=3,
        normalized=1.0,
        items=[ItemResult(id=f"n{i}", points=1, status="pass", earned=1.0) for i in range(3)],
    )
    with pytest.raises(RuntimeError):
        store.record(row.id, trajectory=make_trajectory("second"), grade=grade, passed=True)
    again = store.get_rollout(row.id)
    assert (again.earned, [i.item_id for i in again.items]) == (1, ["item-0", "item-1", "item-2"])
    assert again.trajectory_model().final_answer == "first"
