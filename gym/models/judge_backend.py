"""Local judge models (`EGYM_JUDGE_MODEL=hf:NAME`): one reply from the shared in-process engine.

The grader's Judge calls this through its `local` hook (grader.judge.LocalGenerate),
so the grader itself never loads a model.
"""

from __future__ import annotations

import asyncio
from typing import Any


async def generate_locally(
    name: str, messages: list[dict[str, Any]], *, temperature: float, max_tokens: int
) -> str:
    """The model's reply to `messages`, special tokens stripped; loads the model on first use."""
    from gym.models.engine import Engine
    from gym.models.sampling import SamplingParams
    from gym.models.store import resolve_model

    engine = await asyncio.to_thread(Engine.shared, str(resolve_model(name)))
    prompt = engine.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    ids = engine.tokenizer(prompt, add_special_tokens=False)["input_ids"]
    params = SamplingParams(temperature=temperature, max_new_tokens=max_tokens)
    generation = await asyncio.wrap_future(engine.submit(ids, params).future)
    return engine.tokenizer.decode(generation.token_ids, skip_special_tokens=True)
