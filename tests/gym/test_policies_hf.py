"""The `hf` policy with a tiny transformers model and tokenizer built here (no downloads)."""

from __future__ import annotations

import datetime as dt
import json
import math

import pytest
import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

from core.trajectory import Message
from gym.harness import HarnessConfig, run_episode
from gym.harness.builtin_tools import BUILTIN_TOOLS
from gym.models.engine import Engine
from gym.policies import make_policy
from gym.policies.chat_render import render_prompt_ids
from gym.sandbox import DockerSandbox
from gym.tasks import AgentIdentity, Limits, Task, World

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>"]
# A Qwen-like template: tools in the system turn, calls as <tool_call> JSON, results as `tool` turns.
TEMPLATE = """\
{%- for message in messages -%}
<|im_start|>{{ message.role }}
{%- if message.role == 'system' and tools %}
{{ message.content }}
<tools>
{%- for tool in tools %}
{{ tool.function.name }}: {{ tool.function.description.split('.')[0] }}
{%- endfor %}
</tools>
{%- else %}
{{ message.content }}
{%- endif %}
{%- for call in message.tool_calls or [] %}
<tool_call>{"name": "{{ call.function.name }}", "arguments": {{ call.function.arguments | tojson }}}</tool_call>
{%- endfor %}<|im_end|>
{% endfor -%}
{%- if add_generation_prompt %}<|im_start|>assistant
{% endif -%}"""

WORLD = World(
    name="w",
    company="Acme Corp",
    date=dt.date(2025, 3, 14),
    agent=AgentIdentity(name="Dana Reyes", title="Analyst", email="d@acme.test", chat_username="dana"),
)
TURN_1 = '<tool_call>{"name": "bash", "arguments": {"command": "echo hi from $USER"}}</tool_call><|im_end|>'
TURN_2 = 'Checking.<tool_call>{"name": "todo", "arguments": {"items": [{"content": "report"}]}}</tool_call><|im_end|>'
TURN_3 = "Done.<|im_end|>"


@pytest.fixture(scope="module")
def tiny():
    """A 2-layer Llama with a byte-level BPE tokenizer trained on a few strings."""
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=500,
        special_tokens=SPECIAL,
        show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    bpe.train_from_iterator(
        [TURN_1, TURN_2, TURN_3, "You are Dana Reyes, Analyst at Acme Corp."] * 5, trainer
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=SPECIAL[1:],
    )
    tokenizer.chat_template = TEMPLATE
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=8192,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    model = LlamaForCausalLM(config)
    model.train()  # as the trainer would hand it over
    return model, tokenizer


class Script:
    """Forces the given completions, one per turn, then lets the model sample freely (no tool calls)."""

    def __init__(self, tokenizer, completions):
        self.queue = [tokenizer(c, add_special_tokens=False)["input_ids"] for c in completions]
        self.banned = tokenizer.convert_tokens_to_ids("<tool_call>")
        self.current = None

    def __call__(self, generated, logits):
        if not generated:  # a new turn
            self.current = self.queue.pop(0) if self.queue else None
        position = len(generated)
        if self.current is not None and position < len(self.current):
            forced = torch.full_like(logits, -math.inf)
            forced[self.current[position]] = 0.0
            return forced
        logits = logits.clone()
        logits[self.banned] = -math.inf
        return logits


def recomputed_logprobs(model, prompt_ids, token_ids, temperature):
    ids = torch.tensor([prompt_ids + token_ids])
    with torch.no_grad():
        logits = model(ids).logits[0, len(prompt_ids) - 1 : -1].float() / temperature
    return torch.log_softmax(logits, -1).gather(-1, torch.tensor(token_ids)[:, None]).squeeze(-1).tolist()


@pytest.mark.docker
async def test_a_tiny_model_drives_turns_with_token_ids_and_logprobs(tiny, docker_image, tmp_path):
    model, tokenizer = tiny
    policy = make_policy(
        "hf",
        model=Engine(model, tokenizer),
        temperature=0.8,
        max_new_tokens=48,
        logits_processor=Script(tokenizer, [TURN_1, TURN_2, TURN_3]),
    )
    task = Task(
        id="t", title="t", world="w", prompt="Say hi.", apps=[], limits=Limits(max_turns=4), path=tmp_path
    )
    with DockerSandbox.start(docker_image, run_id="pytest-policies-hf") as sandbox:
        trajectory = await run_episode(sandbox, task, WORLD, policy, HarnessConfig(mcp_servers={}))

    assert trajectory.error is None, trajectory.meta.get("traceback")
    assert trajectory.stop_reason == "answered" and len(trajectory.steps) == 3
    first, second, third = (step.turn for step in trajectory.steps)
    assert [(c.name, json.loads(c.arguments)) for c in first.tool_calls] == [
        ("bash", {"command": "echo hi from $USER"})
    ]
    assert trajectory.steps[0].results[0].output == "hi from agent"
    assert second.content == "Checking." and second.tool_calls[0].name == "todo"
    assert not third.tool_calls and third.finish_reason == "stop" and third.content == "Done."

    # generation stops right after the call (the template writes calls in <tool_call> tags)
    assert (
        first.token_ids == tokenizer(TURN_1.removesuffix("<|im_end|>"), add_special_tokens=False)["input_ids"]
    )
    assert first.finish_reason == "stop" and not first.truncated
    context: list[Message] = trajectory.messages[:2]
    for step in trajectory.steps:
        turn = step.turn
        assert len(turn.token_ids) == len(turn.logprobs) == turn.completion_tokens > 0
        assert all(lp <= 0 and math.isfinite(lp) for lp in turn.logprobs)
        # the prompt ids are the rendered conversation the model saw, tools included
        assert turn.prompt_token_ids == render_prompt_ids(
            tokenizer, context, [s.schema() for s in BUILTIN_TOOLS.values()]
        )
        assert step.context_tokens == len(turn.prompt_token_ids)
        # each logprob is the model's own log-probability of its token at the sampling temperature
        expected = recomputed_logprobs(model, turn.prompt_token_ids, turn.token_ids, 0.8)
        assert turn.logprobs == pytest.approx(expected, abs=1e-4)
        context = (
            context
            + [turn.message()]
            + [
                Message(role="tool", content=r.output, tool_call_id=r.call_id, name=r.name)
                for r in step.results
            ]
        )
    assert model.training, "the engine leaves the model in the mode it got it"


async def test_greedy_decoding_and_token_counting(tiny):
    model, tokenizer = tiny
    policy = make_policy("hf", model=Engine(model, tokenizer), temperature=0, max_new_tokens=5)
    messages = [Message(role="system", content="You are Dana."), Message(role="user", content="hello")]
    first, again = await policy.next(messages, []), await policy.next(messages, [])
    assert first.token_ids == again.token_ids and len(first.token_ids) <= 5
    assert first.logprobs == pytest.approx(
        recomputed_logprobs(model, first.prompt_token_ids, first.token_ids, 1.0), abs=1e-4
    )
    assert policy.count_tokens(messages, []) == len(first.prompt_token_ids)
    assert policy.context_window == 8192


async def test_a_capped_copy_writes_fewer_tokens_and_turns_say_what_the_prefix_cache_gave(tiny):
    model, tokenizer = tiny
    eos = tokenizer.eos_token_id

    def never_end(generated, logits):
        logits = logits.clone()
        logits[eos] = -math.inf
        return logits

    engine = Engine(model, tokenizer)
    policy = make_policy("hf", model=engine, temperature=0, max_new_tokens=8, logits_processor=never_end)
    system = "You are Dana Reyes, Analyst at Acme Corp. " * 4
    messages = [Message(role="system", content=system), Message(role="user", content="hello")]
    first = await policy.next(messages, [])
    short = await policy.capped(3).next(messages, [])
    assert len(first.token_ids) == 8 and len(short.token_ids) == 3 and short.truncated
    assert short.token_ids == first.token_ids[:3]  # the same policy otherwise (greedy here)
    assert len((await policy.capped(50).next(messages, [])).token_ids) == 8  # a cap never raises the limit
    assert policy.sampling.max_new_tokens == 8

    # The first turn read its prompt; the later ones found all of it but the last token in the cache.
    assert first.cached_tokens == 0 and short.cached_tokens == len(short.prompt_token_ids) - 1
    assert engine.stats["cached_tokens"] == 2 * (len(first.prompt_token_ids) - 1)
