"""A tiny world and task for rollout-level tests: a pre-filled table, a file to write, a rubric, a solution.

Layout written under `root` (the same as the repository's):
    root/tasks/mini/world.yaml, initial_state/01-orders.sql
    root/tasks/mini/<task>/task.yaml, solution/actions.yaml
    root/rubrics/mini/<task>.json

Planted flaws (rubric() / write_mini_world options):
`hole`: an item that passes on the untouched initial state; `excused`: the same, marked baseline_ok;
`impossible`: an item no one can pass; `weak`: an item a bare claim in the answer earns;
`leak`: the reference solution is left in the task's /workspace (the peek cheat finds it);
`fires`: a penalty that already fires on the untouched initial state (doing nothing is charged).
Every rubric allows the one change the task asks for (order 2's status), so the damage
section charges anything else.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

INITIAL_SQL = """\
CREATE TABLE orders (id int PRIMARY KEY, customer text NOT NULL, status text NOT NULL);
INSERT INTO orders VALUES (1, 'Ada Lovelace', 'open'), (2, 'Bob Byte', 'open'), (3, 'Cy Coder', 'shipped');
GRANT SELECT, UPDATE ON orders TO agent;
"""

PROMPT = (
    "Order 2 has left the warehouse. Mark it as shipped in the orders table, write a short note "
    "to /workspace/shipping.txt saying which order shipped, and tell me when you are done."
)

SOLUTION = [
    {"tool": "bash", "args": {"command": "psql -c \"UPDATE orders SET status = 'shipped' WHERE id = 2\""}},
    {"tool": "write", "args": {"path": "/workspace/shipping.txt", "content": "order 2 shipped today\n"}},
    {"answer": "Order 2 is marked as shipped, and the note is in /workspace/shipping.txt."},
]


def _item(id_: str, points: int, check: str, section: str, **args) -> dict:
    return {
        "id": id_,
        "description": id_.replace("-", " "),
        "points": points,
        "kind": "python",
        "section": section,
        "check": check,
        "args": args,
    }


def rubric(
    task_id: str,
    *,
    hole: bool = False,
    excused: bool = False,
    impossible: bool = False,
    weak: bool = False,
    fires: bool = False,
    **_,
) -> dict:
    items = [
        _item(
            "order-2-shipped",
            5,
            "sql.value_equals",
            "database",
            query="SELECT status FROM orders WHERE id = 2",
            expected="shipped",
        ),
        _item(
            "note-written",
            3,
            "files.file_contains",
            "files",
            path="/workspace/shipping.txt",
            regex=r"order\s*2",
        ),
        _item(
            "order-1-untouched",
            -3,
            "sql.row_exists",
            "database",
            query="SELECT 1 FROM orders WHERE id = 1 AND status = 'open'",
        ),
        _item(
            "order-3-untouched",
            -3,
            "sql.row_exists",
            "database",
            query="SELECT 1 FROM orders WHERE id = 3 AND status = 'shipped'",
        ),
    ]
    if hole:
        items.append(
            _item("orders-table-exists", 2, "sql.row_exists", "database", query="SELECT 1 FROM orders")
        )
    if excused:
        ok = _item("orders-table-exists", 2, "sql.row_exists", "database", query="SELECT 1 FROM orders")
        items.append(
            {**ok, "baseline_ok": True, "baseline_reason": "a sanity check that the initial state loaded"}
        )
    if weak:
        items.append(
            _item("answer-mentions-order", 2, "transcript.final_answer_contains", "answer", text="order 2")
        )
    if impossible:
        items.append(
            _item(
                "order-99-shipped",
                2,
                "sql.row_exists",
                "database",
                query="SELECT 1 FROM orders WHERE id = 99 AND status = 'shipped'",
            )
        )
    if fires:
        items.append(
            _item(
                "nothing-shipped",
                -2,
                "sql.row_absent",
                "database",
                query="SELECT 1 FROM orders WHERE status = 'shipped'",
            )
        )
    return {
        "task": f"mini/{task_id}",
        "title": "Ship order 2",
        "damage": {"allow": [{"table": "orders", "columns": ["status"], "at_most": 1}]},
        "items": items,
    }


def write_mini_world(root: Path, tasks: dict[str, dict] | None = None) -> Path:
    """Write the world and tasks (id -> rubric() options); returns root/tasks/mini."""
    tasks = tasks if tasks is not None else {"ship-order": {}}
    wdir = root / "tasks" / "mini"
    (wdir / "initial_state").mkdir(parents=True, exist_ok=True)
    (wdir / "initial_state" / "01-orders.sql").write_text(INITIAL_SQL)
    (wdir / "world.yaml").write_text(
        yaml.safe_dump(
            {
                "name": "mini",
                "company": "Mini Mart",
                "date": "2025-03-14",
                "apps": ["db"],
                "agent": {
                    "name": "Ann Agent",
                    "title": "Clerk",
                    "email": "ann@mini.test",
                    "chat_username": "ann",
                },
                "initial_state": {"sql": ["initial_state/01-orders.sql"]},
            }
        )
    )
    (root / "rubrics" / "mini").mkdir(parents=True, exist_ok=True)
    for task_id, options in tasks.items():
        tdir = wdir / task_id
        (tdir / "solution").mkdir(parents=True, exist_ok=True)
        (tdir / "task.yaml").write_text(
            yaml.safe_dump(
                {
                    "id": task_id,
                    "title": "Ship order 2",
                    "world": "mini",
                    "prompt": PROMPT,
                    "apps": ["db"],
                    "limits": {"max_turns": 8, "time_limit_s": 120},
                    "pass_threshold": 0.8,
                }
            )
        )
        (tdir / "solution" / "actions.yaml").write_text(yaml.safe_dump(SOLUTION))
        task_yaml = yaml.safe_load((tdir / "task.yaml").read_text())
        if options.get("leak"):
            (tdir / "files" / "old").mkdir(parents=True, exist_ok=True)
            (tdir / "files" / "old" / "actions.yaml").write_text(yaml.safe_dump(SOLUTION))
            task_yaml["initial_state"] = {"workspace": "files"}
        (tdir / "task.yaml").write_text(yaml.safe_dump(task_yaml))
        (root / "rubrics" / "mini" / f"{task_id}.json").write_text(
            json.dumps(rubric(task_id, **options), indent=1)
        )
    return wdir
