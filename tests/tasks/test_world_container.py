"""The Acme initial state in a real container: it loads, stays consistent, grants what the job allows, and the
reference solutions of two short tasks reach full score through the real harness and grader."""

from __future__ import annotations

import asyncio

import pytest

from gym.tasks import load_task, load_world
from tests.tasks.conftest import ACME, RUBRICS

pytestmark = [pytest.mark.docker, pytest.mark.slow]


@pytest.fixture(scope="module")
def world_sandbox(docker_image):
    from gym.sandbox import DockerSandbox
    from gym.sandbox.launch import world_image

    world = load_world(ACME)
    sb = DockerSandbox.start(world_image(world, docker_image), apps=tuple(world.apps), run_id="pytest-acme")
    yield sb
    sb.close()


def psql(sb, sql: str, user: str = "agent"):
    return sb.exec(
        ["/usr/lib/postgresql/15/bin/psql", "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql], user=user
    )


def test_seed_loaded_with_expected_sizes(world_sandbox, acme_generator):
    w = acme_generator.build_world()
    for table in (
        "employees",
        "customers",
        "deals",
        "invoices",
        "payments",
        "support_tickets",
        "expense_claims",
    ):
        out = psql(world_sandbox, f"SELECT count(*) FROM {table}")
        assert out.exit_code == 0 and int(out.output) == len(w[table].rows), (table, out.output)


def test_data_is_consistent(world_sandbox):
    checks = {
        "invoice totals equal their lines": "SELECT count(*) FROM invoices i WHERE total <> "
        "(SELECT coalesce(sum(line_total), 0) FROM invoice_lines l WHERE l.invoice_id = i.id)",
        "every department has a head in it": "SELECT count(*) FROM departments d JOIN employees e ON e.id = d.head_id "
        "WHERE e.department_id <> d.id AND d.code <> 'EXEC'",
        "deals of active customers only after churn": "SELECT count(*) FROM deals d JOIN customers c ON c.id = d.customer_id "
        "WHERE c.status = 'churned' AND d.created_on > DATE '2024-12-31'",
        "current account managers are active": "SELECT count(*) FROM customers c JOIN employees e ON e.id = c.account_manager_id "
        "WHERE e.status <> 'active'",
        "paid invoices are fully paid": "SELECT count(*) FROM invoices i WHERE status = 'paid' AND "
        "(SELECT sum(amount) FROM payments p WHERE p.invoice_id = i.id) < total",
    }
    for what, sql in checks.items():
        out = psql(world_sandbox, sql, user="postgres")
        assert out.exit_code == 0 and out.output.strip() == "0", what


def test_agent_role_has_the_jobs_rights_only(world_sandbox):
    denied = psql(world_sandbox, "SELECT annual_salary FROM salaries LIMIT 1")
    assert denied.exit_code != 0 and "permission denied" in denied.output
    assert psql(world_sandbox, "DELETE FROM invoices WHERE false").exit_code != 0
    assert psql(world_sandbox, "UPDATE expense_claims SET amount = 1 WHERE false").exit_code != 0
    ok = psql(world_sandbox, "BEGIN; UPDATE expense_claims SET review_note = 'x' WHERE id = 1; ROLLBACK;")
    assert ok.exit_code == 0, ok.output
    assert psql(world_sandbox, "SELECT count(*) FROM salaries", user="postgres").output.strip() == "41"


def test_chat_and_documents_are_seeded(world_sandbox):
    from grader.probe import SandboxProbe

    with SandboxProbe(world_sandbox) as probe:
        snap = probe.chat()
    assert len(snap.posts) >= 771
    assert snap.user("lucas.ferreira") is not None
    assert "lucas.ferreira" not in snap.channel("engineering").members
    assert "jordan.lee" not in snap.channel("leadership").members
    assert any("Weekend phone queue" in p.message for p in snap.posts_in("support"))
    out = world_sandbox.exec(
        "stat -c '%U %n' /workspace/finance/budget_2025.xlsx /workspace/policies/expense_policy.docx"
    )
    assert out.exit_code == 0 and out.output.count("agent ") == 2, out.output


@pytest.mark.parametrize("task_id", ["collections-list", "easter-coverage"])
def test_reference_solution_scores_full_marks(task_id, docker_image, tmp_path):
    from grader.initial_state import initial_rows
    from grader.loader import load_rubric
    from grader.probe import SandboxProbe
    from grader.score import grade
    from gym.episode import TaskInitialState
    from gym.harness.config import HarnessConfig
    from gym.harness.loop import run_episode
    from gym.mcp_client import server_command
    from gym.policies.oracle import OraclePolicy, ToolStep, load_solution
    from gym.sandbox.launch import task_sandbox
    from gym.tasks import world_of

    task = load_task(ACME / task_id)
    rubric = load_rubric(RUBRICS / f"{task_id}.json")
    # Start only the MCP servers the solution calls (it reaches the database through psql).
    used = {s.tool.split(".")[0] for s in load_solution(task.path / task.solution) if isinstance(s, ToolStep)}
    servers = {a: server_command(a) for a in task.apps if a in used}
    with task_sandbox(task, run_id="pytest-acme") as sb:
        rows = initial_rows(rubric, TaskInitialState(task), probe=SandboxProbe(sb), cache_dir=tmp_path)
        with SandboxProbe(sb) as probe:
            before = grade(rubric, probe, None, initial_rows=rows)
        trajectory = asyncio.run(
            run_episode(
                sb, task, world_of(task), OraclePolicy(task, strict=True), HarnessConfig(mcp_servers=servers)
            )
        )
        assert trajectory.stop_reason == "answered", trajectory.error
        with SandboxProbe(sb) as probe:
            after = grade(rubric, probe, trajectory, initial_rows=rows)
    assert before.earned == 0
    assert after.earned == after.possible and not after.incomplete, [
        (i.id, i.status, i.evidence) for i in after.items if i.status != "pass"
    ]
