"""SFT data and fine-tuning: turns rendered as the hf policy renders them, nothing held out leaks, a real model learns."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from core.errors import ConfigError
from core.trajectory import Message, ToolCall, Trajectory
from gym.policies.chat_render import render_prompt_ids
from gym.sft import Collected, collect, examples_from, format_id, read_dataset, train_only, write_dataset
from gym.store import Store
from gym.task_refs import resolve

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "db.query",
            "description": "Run a read-only SQL query.",
            "parameters": {"type": "object", "properties": {"sql": {"type": "string"}}, "required": ["sql"]},
        },
    }
]


def trajectory() -> Trajectory:
    call = ToolCall(id="c1", name="db.query", arguments='{"sql": "SELECT 1"}')
    return Trajectory(
        task="acme/product-price-l0-s1",
        policy="oracle",
        messages=[
            Message(role="system", content="You are Jordan."),
            Message(role="user", content="What is the price?"),
            Message(role="assistant", content="", tool_calls=[call]),
            Message(role="tool", content="price | 3200", tool_call_id="c1", name="db.query"),
            Message(role="assistant", content="It costs 3200.00 EUR."),
        ],
        meta={"tool_schemas": TOOLS},
    )


@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    from gym.models.store import resolve_model

    return AutoTokenizer.from_pretrained(str(resolve_model("smollm2")))


@pytest.mark.model
def test_each_assistant_turn_is_the_hf_policys_prompt_and_what_it_should_write(tokenizer):
    call, answer = examples_from(trajectory(), tokenizer, source="oracle", score=1.0)
    messages = trajectory().messages
    # The prompt ids are exactly the policy's (same renderer), and the text is what they decode to.
    assert call.prompt_ids == render_prompt_ids(tokenizer, messages[:2], TOOLS)
    assert answer.prompt_ids == render_prompt_ids(tokenizer, messages[:4], TOOLS)
    assert tokenizer.decode(call.prompt_ids) == call.prompt and call.prompt.endswith(
        "<|im_start|>assistant\n"
    )
    # A call ends where the policy stops (the stop string); an answer with the end-of-turn token.
    assert (
        call.completion == '<tool_call>[{"name": "db.query", "arguments": {"sql": "SELECT 1"}}]</tool_call>'
    )
    assert answer.completion == "It costs 3200.00 EUR.<|im_end|>"
    assert answer.completion_ids[-1] == tokenizer.eos_token_id
    assert (
        "<tool_response" in answer.prompt and "db.query(sql: string)" in call.prompt
    )  # tools in the system prompt


@pytest.mark.model
def test_a_dataset_for_another_template_or_with_held_out_tasks_is_refused(tmp_path, tokenizer):
    collected = Collected(examples=examples_from(trajectory(), tokenizer, source="oracle", score=1.0))
    write_dataset(tmp_path / "ok", collected, {"format": format_id(tokenizer), "splits": {"acme/x": "train"}})
    rows = read_dataset(tmp_path / "ok", tokenizer)
    assert [r["turn"] for r in rows] == [0, 1] and rows[0]["task"] == "acme/product-price-l0-s1"
    import pyarrow.parquet as pq

    assert pq.read_table(tmp_path / "ok" / "data.parquet").column_names[:2] == ["task", "source"]
    write_dataset(
        tmp_path / "other", collected, {"format": "0123456789abcdef", "tokenizer": "qwen", "splits": {}}
    )
    with pytest.raises(ConfigError, match="rendered for 'qwen' .* make the data again with --model"):
        read_dataset(tmp_path / "other", tokenizer)
    write_dataset(
        tmp_path / "leak", collected, {"format": format_id(tokenizer), "splits": {"acme/y": "test"}}
    )
    with pytest.raises(ConfigError, match="holds non-train tasks"):
        read_dataset(tmp_path / "leak", tokenizer)


def test_only_train_split_instances_are_kept():
    tasks = resolve(["acme/invoice-status", "acme/customer-country"], seeds="0-99", levels="0")
    train, held_out = train_only(tasks)
    assert train and all(t.split == "train" for t in train)
    assert {t.split for t in held_out} == {"val", "test"}
    assert not any(t.key.startswith("acme/customer-country") for t in train)  # a held-out family, every seed


@pytest.mark.docker
@pytest.mark.model
def test_sft_data_replays_the_oracle_and_records_where_each_example_came_from(tmp_path, tokenizer):
    tasks = resolve(["acme/product-price", "acme/customer-country"], seeds="0-2", levels="0")
    collected = asyncio.run(collect(Store(str(tmp_path / "runs.db")), tasks, tokenizer, concurrency=2))
    train = {t.key for t in tasks if t.split == "train"}
    assert collected.examples and {e.task for e in collected.examples} <= train
    assert all(e.source == "oracle" and e.score == 1.0 for e in collected.examples)
    assert {k for k, why in collected.skipped.items() if "never trained on" in why} == {
        t.key for t in tasks if t.split != "train"
    }
    # Each instance: one call, then the answer (the oracle's two turns).
    assert sorted({e.turn for e in collected.examples}) == [0, 1]


@pytest.mark.model
@pytest.mark.slow
def test_fine_tuning_lowers_the_loss_and_writes_a_model_every_policy_loads(tmp_path, tokenizer):
    from transformers import AutoModelForCausalLM

    from trainer.sft import load_sft_config, run_sft

    collected = Collected(examples=examples_from(trajectory(), tokenizer, source="oracle", score=1.0))
    write_dataset(tmp_path / "data", collected, {"format": format_id(tokenizer), "splits": {}})
    config = tmp_path / "sft.yaml"
    config.write_text(Path("trainer/configs/sft-smollm2.yaml").read_text())
    cfg = load_sft_config(
        config,
        [f"data={tmp_path / 'data'}", f"output_dir={tmp_path / 'run'}", "epochs=6", "lr=1e-4", "warmup=0"],
    )
    records = run_sft(cfg)
    assert len(records) == 6 and records[-1]["loss"] < records[0]["loss"] / 2
    lines = (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(line)["step"] for line in lines] == list(range(1, 7))
    model = AutoModelForCausalLM.from_pretrained(tmp_path / "run" / "model")
    assert model.num_parameters() > 100_000_000  # the whole model, not an adapter


@pytest.mark.model
def test_stored_rollouts_are_kept_by_score_and_split_and_old_ones_are_named(tmp_path, tokenizer):
    from grader.grade import Grade, ItemResult

    store = Store(str(tmp_path / "runs.db"))
    # Three train-split instances (a split follows an instance's content, so they are looked up, not named).
    tasks = [t for t in resolve(["acme/product-price@0-19"], levels="0") if t.split == "train"][:4]
    kept, failed, old, compact = (t.key for t in tasks)
    keys = [kept, failed, old, compact, "acme/q1-close"]
    store.create_run("model-run", policy="hf", tasks=keys, samples=1)
    for row in store.add_rollouts("model-run", [(key, 0) for key in keys]):
        store.claim(row.id, "test")
        good = row.task != failed
        traj = trajectory().model_copy(update={"task": row.task})
        if row.task == old:
            traj.meta = {}  # stored before tool schemas were recorded
        if row.task == compact:
            traj.meta = {**traj.meta, "prompt": "compact"}  # played with `-H prompt=compact`
        item = ItemResult(id="a", points=2, status="pass" if good else "fail", earned=2 if good else 0)
        grade = Grade(task=row.task, earned=item.earned, possible=2, normalized=item.earned / 2, items=[item])
        store.record(row.id, trajectory=traj, grade=grade, passed=good, seconds=1.0)
    collected = asyncio.run(collect(store, tasks, tokenizer, oracle=False, runs=["model-run"], min_score=0.8))
    assert {e.task for e in collected.examples} == {kept}
    assert all(e.source == "run:model-run" for e in collected.examples)
    reasons = " | ".join(collected.skipped.values())
    assert "scored 0% < 80%" in reasons and "stored before rollouts kept their tool schemas" in reasons
    assert "acme/q1-close is not a train-split task of the given tasks" in reasons
    assert collected.skipped[f"run:model-run/{compact}"] == "played with the compact prompt, not full"


@pytest.mark.model
def test_data_made_with_another_prompt_setting_is_refused_by_egym_sft(tmp_path, tokenizer):
    from trainer.sft import load_sft_config, run_sft

    collected = Collected(examples=examples_from(trajectory(), tokenizer, source="oracle", score=1.0))
    assert format_id(tokenizer, "compact") != format_id(tokenizer)
    manifest = {"format": format_id(tokenizer, "compact"), "prompt": "compact", "splits": {}}
    write_dataset(tmp_path / "compact", collected, manifest)
    assert len(read_dataset(tmp_path / "compact", tokenizer, "compact")) == 2
    with pytest.raises(
        ConfigError, match="made with the compact prompt .* set prompt: compact in the SFT config"
    ):
        read_dataset(tmp_path / "compact", tokenizer)
    # data made before the setting existed has no `prompt` in its manifest: it is the full prompt's
    write_dataset(tmp_path / "full", collected, {"format": format_id(tokenizer), "splits": {}})
    assert len(read_dataset(tmp_path / "full", tokenizer)) == 2
    with pytest.raises(ConfigError, match="made with the full prompt .* again with -H prompt=compact"):
        read_dataset(tmp_path / "full", tokenizer, "compact")
    # and `egym sft` reads with its own setting (full unless its config says otherwise)
    config = load_sft_config(
        "trainer/configs/sft-smollm2.yaml", [f"data={tmp_path / 'compact'}", f"output_dir={tmp_path / 'run'}"]
    )
    with pytest.raises(ConfigError, match="made with the compact prompt"):
        run_sft(config)
