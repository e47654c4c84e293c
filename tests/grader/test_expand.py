"""Parameterised items: one entry, many items, from sources the agent cannot change."""

from __future__ import annotations

import json

import pytest

from core.errors import RubricError
from grader.expand import expand_items
from grader.loader import load_rubric
from tests.grader.conftest import make_rubric, py_item

QUERY = "SELECT status FROM invoices WHERE number = %(n)s"


def test_scalar_values_bind_the_as_name_and_keep_their_json_type():
    rubric = make_rubric(
        [
            py_item(
                "paid-{{inv}}",
                "sql.value_equals",
                args={
                    "query": QUERY,
                    "params": {"n": "{{inv}}"},
                    "expected": "{{amount}}",
                    "tolerance": 0.01,
                },
                foreach={"values": [{"inv": "INV 1", "amount": 12.5}, {"inv": "INV/2", "amount": 7}]},
            )
        ]
    )
    items = expand_items(rubric)
    assert [i.id for i in items] == ["paid-INV-1", "paid-INV-2"]  # ids slugged to the id alphabet
    assert items[0].args == {"query": QUERY, "params": {"n": "INV 1"}, "expected": 12.5, "tolerance": 0.01}
    assert items[1].args["expected"] == 7 and isinstance(items[1].args["expected"], int)
    assert items[0].description == "item paid-{{inv}}".replace("{{inv}}", "INV 1")


def test_scalars_use_as_and_ids_without_placeholders_get_an_index():
    rubric = make_rubric(
        [
            py_item(
                "mention",
                "transcript.final_answer_contains",
                args={"text": "{{name}}"},
                foreach={"values": ["Ann", "Bob", "Cy"], "as": "name"},
            ),
            py_item(
                "v",
                "transcript.final_answer_contains",
                args={"text": "{{value}}"},
                foreach={"values": [1, 2]},
            ),
        ]
    )
    items = expand_items(rubric)
    assert [i.id for i in items] == ["mention.1", "mention.2", "mention.3", "v.1", "v.2"]
    assert [i.args["text"] for i in items] == ["Ann", "Bob", "Cy", 1, 2]


def test_values_file_json_and_csv_next_to_the_rubric(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "rows.csv").write_text("inv,amount\nA-1,10\nA-2,20\n")
    (tmp_path / "data" / "names.json").write_text(json.dumps(["x", "y"]))
    path = tmp_path / "r.json"
    path.write_text(
        json.dumps(
            {
                "task": "acme/t",
                "items": [
                    py_item(
                        "row-{{inv}}",
                        "sql.row_exists",
                        args={"query": "q {{inv}} {{amount}}"},
                        foreach={"values_file": "data/rows.csv"},
                    ),
                    py_item(
                        "n-{{n}}",
                        "transcript.final_answer_contains",
                        args={"text": "{{n}}"},
                        foreach={"values_file": "data/names.json", "as": "n"},
                    ),
                ],
            }
        )
    )
    items = expand_items(load_rubric(path))
    assert [i.id for i in items] == ["row-A-1", "row-A-2", "n-x", "n-y"]
    assert items[1].args["query"] == "q A-2 20"


def test_two_hundred_checks_from_one_entry():
    rubric = make_rubric(
        [py_item("r-{{value}}", "sql.row_exists", args={"query": "q"}, foreach={"values": list(range(200))})]
    )
    items = expand_items(rubric)
    assert len(items) == 200 and len({i.id for i in items}) == 200


def test_unbound_placeholder_and_duplicate_ids_are_rubric_errors():
    unbound = make_rubric(
        [py_item("x-{{a}}", "sql.row_exists", args={"query": "{{b}}"}, foreach={"values": [{"a": 1}]})]
    )
    with pytest.raises(RubricError, match=r"\$.items\[0\]: placeholder \{\{b\}\} is not bound \(bound: a\)"):
        expand_items(unbound)
    dup = make_rubric(
        [
            py_item("x", "sql.row_exists", args={"query": "q"}),
            py_item("{{value}}", "sql.row_exists", args={"query": "q"}, foreach={"values": ["x"]}),
        ]
    )
    with pytest.raises(RubricError, match="'x' appears twice after expansion"):
        expand_items(dup)


def test_seed_query_items_need_rows_from_the_seeded_state():
    rubric = make_rubric(
        [
            py_item(
                "c-{{id}}",
                "sql.row_exists",
                args={"query": "q {{id}}"},
                foreach={"initial_query": "SELECT id FROM claims WHERE status = 'pending'"},
            )
        ]
    )
    with pytest.raises(RubricError, match="initial_query not resolved"):
        expand_items(rubric)
    items = expand_items(rubric, {rubric.initial_queries()[0]: [{"id": 7}, {"id": 9}]})
    assert [i.id for i in items] == ["c-7", "c-9"]
