"""Task families: deterministic instances, splits by family and seed, one-line errors, clean lint."""

from __future__ import annotations

import filecmp
from pathlib import Path
from types import SimpleNamespace

import pytest

from core.errors import TaskError
from gym.authoring import write_scaffold
from gym.batch.report import family_scores
from gym.calibrate import calibration_units
from gym.families import families, family_bands, family_level, generate, materialize, save_family_band
from gym.lint import LintReport, lint, lint_families
from gym.task_refs import resolve
from gym.tasks import BandEvidence

ACME = Path("tasks/acme").resolve()


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_the_same_triple_gives_byte_identical_instances(tmp_path):
    family = families(ACME)["product-price"]
    materialize(family, 1, 7, tmp_path / "a")
    materialize(family, 1, 7, tmp_path / "b")
    assert _files(tmp_path / "a") == _files(tmp_path / "b")
    materialize(family, 1, 8, tmp_path / "c")  # another seed picks another product here
    assert not filecmp.cmp(
        tmp_path / "a/rubrics/acme/product-price-l1-s7.json",
        tmp_path / "c/rubrics/acme/product-price-l1-s8.json",
    )


def test_splits_hold_out_whole_families_and_unseen_instances(tmp_path):
    found = families(ACME)
    held_out = [materialize(found["customer-country"], 0, s, tmp_path) for s in range(20)]
    assert {t.split for t in held_out} == {"test"}
    tasks = [materialize(found["invoice-status"], 0, s, tmp_path) for s in range(200)]
    assert {t.split for t in tasks} == {"train", "val", "test"}
    # Two seeds that pick the same invoice are one instance, in one split: no test instance is trained on.
    by_prompt: dict[str, set[str]] = {}
    for task in tasks:
        by_prompt.setdefault(task.prompt, set()).add(task.split)
    assert all(len(s) == 1 for s in by_prompt.values())
    assert len(by_prompt) < len(tasks)  # duplicates happen, so this is a real check


def test_level_0_prompts_name_the_tables_the_solution_reads_and_higher_levels_do_not():
    found = families(ACME)
    level0 = generate(found["ticket-backlog"], 0, 3)
    hint = level0.prompt.splitlines()[-1]
    assert hint.startswith("Database tables: support_tickets(id, customer_id,")
    assert "customers(id, name, industry, country," in hint
    assert "Database tables" not in generate(found["ticket-backlog"], 1, 3).prompt
    assert "Database tables" not in generate(found["channel-post"], 0, 3).prompt  # no SQL, no hint


def test_family_refs_and_instance_ids_resolve_to_task_folders():
    tasks = resolve(["acme/invoice-status"], seeds="0-2", levels="0")
    assert [t.key for t in tasks] == [f"acme/invoice-status-l0-s{s}" for s in range(3)]
    assert len(resolve(["acme/ticket-resolve@10-14"])) == 5
    (one,) = resolve(["acme/invoice-status-l1-s4"])
    assert one.key == "acme/invoice-status-l1-s4" and "family:invoice-status" in one.tags
    assert resolve(["tasks/acme/march-sla-breaches"])[0].key == "acme/march-sla-breaches"


@pytest.mark.parametrize(
    "ref, message",
    [
        (
            "acme/invoice-staus",
            "acme/invoice-staus: no family, instance or task 'invoice-staus' in tasks/acme; did you mean "
            "'invoice-status'?",
        ),
        ("acme/ticket-resolve-l3-s0", "family acme/ticket-resolve level 3 seed 0: no such level (it has 0)"),
        ("acmee/x", "acmee/x: no such task folder, and no world 'acmee'; did you mean 'acme'?"),
    ],
)
def test_bad_references_are_one_line(ref, message):
    with pytest.raises(TaskError) as caught:
        resolve([ref])
    assert str(caught.value) == message


def test_a_generator_that_fails_names_the_family_level_and_seed(tmp_path):
    world = tmp_path / "w"
    (world / "families").mkdir(parents=True)
    (world / "world.yaml").write_text((ACME / "world.yaml").read_text())
    (world / "families" / "broken.py").write_text(
        "TITLE = 'x'\nLEVELS = (0,)\ndef generate(world, rng, level):\n    return {}['missing']\n"
    )
    with pytest.raises(
        TaskError,
        match=rf"^{world.resolve()}/families/broken.py:4: family w/broken level 0 seed 5: "
        r"the generator failed: KeyError: 'missing'$",
    ):
        materialize(families(world.resolve())["broken"], 0, 5, tmp_path / "out")


def test_every_family_instance_lints_clean(tmp_path):
    tasks = [
        materialize(family, level, seed, tmp_path)
        for family in families(ACME).values()
        for level in family.levels
        for seed in range(3)
    ]
    report = lint([tmp_path])
    assert report.tasks == len(tasks) and not report.problems and not report.warnings, (
        report.problems + report.warnings
    )


def _world(tmp_path: Path) -> Path:
    world = tmp_path / "w"
    world.mkdir()
    (world / "world.yaml").write_text((ACME / "world.yaml").read_text())
    return world


def test_a_new_family_scaffold_generates_and_lints_clean(tmp_path):
    world = _world(tmp_path)
    path = write_scaffold(world, "stock-check")
    assert path == world / "families" / "stock_check.py"
    report = LintReport()
    lint_families(world, report)
    assert report.tasks == 3 and not report.problems and not report.warnings, (
        report.problems + report.warnings
    )
    with pytest.raises(TaskError, match="already exists"):
        write_scaffold(world, "stock-check")
    with pytest.raises(TaskError, match="lowercase words joined by dashes"):
        write_scaffold(world, "Stock Check")


def test_the_authoring_doc_shows_the_scaffold_and_the_current_world_object(tmp_path):
    from gym.authoring import DOC, updated_doc
    from gym.families import world_object

    text = DOC.read_text()
    assert updated_doc(text) == text, "docs/authoring.md is stale: run `.venv/bin/python -m gym.authoring`"
    stale = text.replace("| `customers` | id, name,", "| `clients` | id, name,")
    assert stale != text and updated_doc(stale) == text
    written = write_scaffold(_world(tmp_path), "stock-check").read_text()
    assert f"```python\n{written}```" in text  # the very file `egym new family stock-check` writes
    for name, table in world_object(ACME).tables.items():
        assert f"| `{name}` | {', '.join(table.columns)} | {len(table.rows)} rows |" in text
    assert "- `stated(item_id, description, kind, value, points=2, *, where='answer', about=None" in text


def test_a_family_levels_bands_are_stored_once_per_model_and_carried_by_its_instances(tmp_path, monkeypatch):
    world = _world(tmp_path)
    write_scaffold(world, "stock-check")
    family = families(world.resolve())["stock-check"]
    tasks = [materialize(family, 0, s, tmp_path / "out") for s in range(3)]
    assert all(not t.bands for t in tasks)
    assert list(calibration_units(tasks)) == ["w/stock-check L0"]
    small = BandEvidence(pass_rate=0.25, interval=(0.1, 0.5), samples=12, policy="hf smollm2")
    large = BandEvidence(pass_rate=0.9, interval=(0.7, 0.97), samples=20, policy="openai big")
    save_family_band(family, 0, "hf:smollm2@0123456789ab", "target", small)
    save_family_band(family, 0, "openai:big@gpu:8000/v1", "too-easy", large)
    again = materialize(family, 0, 7, tmp_path / "out")
    assert {key: b.band for key, b in again.bands.items()} == {
        "hf:smollm2@0123456789ab": "target",
        "openai:big@gpu:8000/v1": "too-easy",
    }
    assert again.bands["hf:smollm2@0123456789ab"].calibration == small


def test_an_old_bands_file_reads_as_model_unknown(tmp_path):
    world = _world(tmp_path)
    write_scaffold(world, "stock-check")
    (world / "families" / "bands.yaml").write_text(
        "stock-check:\n  0: {band: hard, calibration: {pass_rate: 0.1, interval: [0.02, 0.4], samples: 10}}\n"
    )
    assert family_bands(world) == {
        "stock-check": {
            0: {
                "unknown": {
                    "band": "hard",
                    "calibration": {"pass_rate": 0.1, "interval": [0.02, 0.4], "samples": 10},
                }
            }
        }
    }
    family = families(world.resolve())["stock-check"]
    save_family_band(
        family, 0, "oracle", "too-easy", BandEvidence(pass_rate=1.0, interval=(0.7, 1.0), samples=8)
    )
    instance = materialize(family, 0, 0, tmp_path / "out")
    assert {key: b.band for key, b in instance.bands.items()} == {"oracle": "too-easy", "unknown": "hard"}


def test_bands_are_read_again_after_a_rewrite_and_a_callers_edit_does_not_leak(tmp_path):
    # family_bands caches its parse (materialize calls it once per instance)
    world = _world(tmp_path)
    write_scaffold(world, "stock-check")
    path = world / "families" / "bands.yaml"
    path.write_text("stock-check:\n  0: {band: hard, calibration: {pass_rate: 0.1}}\n")
    first = family_bands(world)
    first["stock-check"][0]["unknown"]["band"] = "edited by a caller"
    assert family_bands(world)["stock-check"][0]["unknown"]["band"] == "hard"
    path.write_text("stock-check:\n  0: {band: too-easy, calibration: {pass_rate: 1.0}}\n")
    assert family_bands(world)["stock-check"][0]["unknown"]["band"] == "too-easy"


def test_consistency_counts_a_family_level_only_when_every_sampled_seed_is_solved():
    def row(task, passed):
        return SimpleNamespace(task=task, status="done", reward=1.0 if passed else 0.0, passed=passed)

    rows = [
        row("acme/price-l0-s0", True),
        row("acme/price-l0-s0", True),
        row("acme/price-l0-s1", True),
        row("acme/price-l1-s0", True),
        row("acme/price-l1-s1", False),  # one failure: seed 1 of level 1 is not solved
        row("acme/price-l1-s1", True),
        row("acme/q1-close", True),  # a hand-written task: no family
    ]
    scores = {(s.family, s.level): s for s in family_scores(rows)}
    assert set(scores) == {("acme/price", 0), ("acme/price", 1)}
    assert scores["acme/price", 0].consistent and scores["acme/price", 0].solved == 2
    assert not scores["acme/price", 1].consistent and scores["acme/price", 1].solved == 1
    assert scores["acme/price", 1].pass_rate == pytest.approx(2 / 3)
    assert family_level("acme/price-l1-s12") == ("acme/price", 1) and family_level("acme/q1-close") is None


def test_tasks_list_counts_distinct_instances_per_family_level():
    from typer.testing import CliRunner

    from gym.cli import app
    from gym.families import COUNT_SEEDS, instance_counts

    counts = instance_counts(ACME)
    result = CliRunner().invoke(app, ["tasks", "list", str(ACME)])
    assert result.exit_code == 0, result.output
    total = sum(sum(levels.values()) for levels in counts.values())
    assert (
        f"{len(counts)} families, {total} distinct instances over seeds 0-{COUNT_SEEDS - 1}" in result.output
    )
    assert 0 < counts["invoice-status"][0] <= 136  # at most one instance per invoice


def test_the_acme_library_has_the_breadth_training_needs():
    from gym.families import instance_counts

    found = families(ACME)
    counts = instance_counts(ACME)
    assert len(found) >= 30
    assert sum(sum(levels.values()) for levels in counts.values()) >= 1000
    assert sum(len(f.levels) >= 3 for f in found.values()) >= 10
    assert sum(0 in f.levels for f in found.values()) >= 10
    held_out = [name for name, f in found.items() if f.split == "test"]
    assert 2 <= len(held_out) < len(found) // 2, held_out


def test_commands_take_seeds_levels_and_a_split():
    from gym.cli.options import select_tasks

    val = select_tasks(["acme/invoice-status"], seeds="0-59", levels="0", split="val")
    assert val and {t.split for t in val} == {"val"} and all("-l0-" in t.key for t in val)
    with pytest.raises(
        TaskError, match="^none of the 20 task\\(s\\) in acme/customer-country is in the train split$"
    ):
        select_tasks(["acme/customer-country"], split="train")


def test_an_instance_with_mail_writes_its_mail_file_and_the_task_loads_it(tmp_path):
    from gym.families import Instance

    family = families(ACME)["product-price"]
    mail = {"accounts": [{"address": "jordan.lee@acme.example", "agent": True}]}
    plain = generate(family, 0, 3)
    with_mail = Instance(**{**plain.__dict__, "mail": mail})
    assert plain.digest() != with_mail.digest()
    task = materialize(family, 0, 3, tmp_path, instance=with_mail)
    assert task.initial_state.mail == ["initial_state/mail.yaml"]
    assert (task.path / "initial_state" / "mail.yaml").read_text().startswith("accounts:")
    assert materialize(family, 0, 3, tmp_path / "plain").initial_state.mail == []
