"""A tiny chat model for end-to-end tests through real sandboxes: built, not downloaded.

- Tokenizer: byte-level BPE trained here on the task's own texts (system
  prompt, task prompt, replies), with a Hermes-style chat template that
  lists tool names only (a tiny model has no use for the schemas), so the
  rendered prompt is short; any text still encodes.
- Model: a 2-layer Llama, fine-tuned for a few seconds on the task's exact
  first prompt to answer either with a `write` tool call that earns the
  rubric's note points, or with a bare "done." (no points). Sampling at
  temperature 1 then gives a group with mixed rewards: a GRPO signal.
"""

from __future__ import annotations

from typing import Any

import torch

WRITE_NOTE = (
    '<tool_call>{"name": "write", "arguments": {"path": "/workspace/shipping.txt", '
    '"content": "order 2 shipped"}}</tool_call>'
)
GIVE_UP = "done."
TEMPLATE = (
    "{%- for m in messages %}<|im_start|>{{ m.role }}\n"
    "{%- if m.role == 'system' and tools %}tools:{% for t in tools %} {{ t.function.name }}{% endfor %}\n{% endif %}"
    "{{ m.content }}"
    '{%- for c in m.tool_calls or [] %}<tool_call>{"name": "{{ c.function.name }}", "arguments": '
    "{{ c.function.arguments | tojson }}}</tool_call>{% endfor %}<|im_end|>\n"
    "{% endfor %}{%- if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def prompt_messages(task: Any, world: Any) -> tuple[list[Any], list[dict[str, Any]]]:
    """The first prompt the harness sends for `task` when no MCP server runs (built-in tools only)."""
    from core.trajectory import Message
    from gym.harness.builtin_tools import BUILTIN_TOOLS
    from gym.harness.prompt import system_prompt

    messages = [
        Message(role="system", content=system_prompt(task, world)),
        Message(role="user", content=task.prompt),
    ]
    return messages, [spec.schema() for spec in BUILTIN_TOOLS.values()]


def build_tokenizer(corpus: list[str]) -> Any:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=1200,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    core.train_from_iterator(corpus, trainer=trainer)
    tok = PreTrainedTokenizerFast(
        tokenizer_object=core, eos_token="<|im_end|>", pad_token="<|endoftext|>", bos_token="<|im_start|>"
    )
    tok.chat_template = TEMPLATE
    return tok


def build_model(task: Any, world: Any, seed: int = 0, sft_steps: int = 60) -> tuple[Any, Any]:
    """(model, tokenizer): the tiny model taught to answer the task's first prompt either way, ~50/50."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from gym.policies.chat_render import render_prompt_ids, template_messages

    messages, tools = prompt_messages(task, world)
    corpus = [m.content for m in messages] + [WRITE_NOTE, GIVE_UP] * 3
    tok = build_tokenizer(corpus)
    prompt = render_prompt_ids(tok, messages, tools)
    assert template_messages(messages)  # the harness's own rendering path is used
    config = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=8192,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
        tie_word_embeddings=False,
    )
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        model = LlamaForCausalLM(config)
        _finetune(model, tok, prompt, sft_steps)
    return model, tok


def _finetune(model: Any, tok: Any, prompt: list[int], steps: int) -> None:
    """Teach both answers after the exact prompt (loss on the answer tokens only)."""
    answers = [
        tok(text + "<|im_end|>", add_special_tokens=False)["input_ids"] for text in (WRITE_NOTE, GIVE_UP)
    ]
    width = len(prompt) + max(map(len, answers))
    ids = torch.full((2, width), tok.pad_token_id)
    labels = torch.full((2, width), -100)
    for row, answer in enumerate(answers):
        seq = prompt + answer
        ids[row, : len(seq)] = torch.tensor(seq)
        labels[row, len(prompt) : len(seq)] = torch.tensor(answer)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    for _ in range(steps):
        optimizer.zero_grad()
        model(input_ids=ids, attention_mask=(ids != tok.pad_token_id).long(), labels=labels).loss.backward()
        optimizer.step()
    model.eval()
