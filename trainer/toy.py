"""A verifiable in-process task, a tiny tokenizer and a tiny model: the trainer's CPU test bed.

Task: the prompt `<bos> repeat <word> :` asks for `<word> <word> <word> <eos>`.
A rubric-style grader awards points per check (first word right: 2, second: 1,
third: 1, stops right after: 2) and normalises by the 6 possible, like the
gym's rubric scores. A randomly initialised model starts near 0.1; never
stopping caps the score at 4/6, so reaching 0.8 means learning to stop.

Nothing here downloads anything: the tokenizer is a word-level `tokenizers`
model built from the vocabulary below, the model a small Llama built from a
config. `egym train trainer/configs/toy.yaml` runs it end to end on a laptop.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import Field, ValidationError

from core.errors import ConfigError
from core.strict import StrictModel
from core.validation import describe_validation_error
from trainer.samples import Group, Rollout, Sample

SPECIALS = ["<pad>", "<bos>", "<eos>", "repeat", ":"]
WORDS = ["red", "green", "blue", "gold", "gray", "pink"]


def build_toy_tokenizer(words: Sequence[str] = WORDS) -> Any:
    """A word-level PreTrainedTokenizerFast over SPECIALS + words."""
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import WhitespaceSplit
    from transformers import PreTrainedTokenizerFast

    vocab = {token: i for i, token in enumerate([*SPECIALS, *words, "<unk>"])}
    core = Tokenizer(WordLevel(vocab=vocab, unk_token="<unk>"))
    core.pre_tokenizer = WhitespaceSplit()
    return PreTrainedTokenizerFast(
        tokenizer_object=core, bos_token="<bos>", eos_token="<eos>", pad_token="<pad>", unk_token="<unk>"
    )


def build_toy_model(seed: int, *, hidden: int = 32, layers: int = 2) -> tuple[Any, Any]:
    """A tiny randomly initialised Llama and its tokenizer, identical for the same seed."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = build_toy_tokenizer()
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=hidden * 2,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=64,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=False,
    )
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        model = LlamaForCausalLM(config)
    return model, tokenizer


@dataclass(frozen=True)
class ToyTask:
    """One prompt of the toy task."""

    key: str
    word: str

    @property
    def bands(self) -> dict[str, Any]:
        return {}  # never calibrated: sampled as unbanded


class ToyOptions(StrictModel):
    """`rollout.options` for the toy source."""

    words: list[str] = Field(default_factory=lambda: list(WORDS), description="One task per word.")
    repeats: int = Field(3, ge=1, description="How many times the word must be repeated.")


@dataclass(frozen=True)
class RubricItem:
    id: str
    points: int


def grade(word: str, completion: list[str], repeats: int) -> tuple[float, list[tuple[RubricItem, bool]]]:
    """Normalised score and per-item results, like a rubric: checks worth points, summed, / possible."""
    items = [RubricItem("word-1", 2)] + [RubricItem(f"word-{i + 1}", 1) for i in range(1, repeats)]
    results = [(item, len(completion) > i and completion[i] == word) for i, item in enumerate(items)]
    stop = RubricItem("stops", 2)
    results.append((stop, completion[repeats : repeats + 1] == ["<eos>"]))
    possible = sum(item.points for item, _ in results)
    earned = sum(item.points for item, ok in results if ok)
    return earned / possible, results


class ToyRolloutSource:
    """Groups of single-turn rollouts sampled in process and graded by `grade`."""

    def __init__(self, config: Any, tokenizer: Any) -> None:
        try:
            self.options = ToyOptions.model_validate(config.rollout.options)
        except ValidationError as exc:
            raise ConfigError(
                describe_validation_error(exc, where="rollout.options", model=ToyOptions)
            ) from None
        self.tokenizer = tokenizer
        self.sampling = config.sampling

    def tasks(self, split: str) -> list[ToyTask]:
        return [ToyTask(key=f"toy/repeat-{word}", word=word) for word in sorted(self.options.words)]

    def prompt_ids(self, task: ToyTask) -> list[int]:
        return self.tokenizer.convert_tokens_to_ids(["<bos>", "repeat", task.word, ":"])

    def collect(
        self,
        sampler: Any,
        tasks: Sequence[ToyTask],
        *,
        group_size: int,
        seeds: Sequence[int],
        step: int = 0,
        phase: str = "train",
        on_rollout: Callable[[Rollout], None] | None = None,
    ) -> list[Group]:
        from trainer.samplers.base import Request

        prompts = [self.prompt_ids(task) for task in tasks]
        requests = [Request(prompt, group_size, seed) for prompt, seed in zip(prompts, seeds, strict=True)]
        groups = []
        for task, prompt, completions in zip(
            tasks, prompts, sampler.generate(requests, self.sampling), strict=True
        ):
            rollouts = []
            for completion in completions:
                words = self.tokenizer.convert_ids_to_tokens(completion.token_ids)
                score, _ = grade(task.word, words, self.options.repeats)
                sample = Sample.from_turn(prompt, completion.token_ids, completion.logprobs)
                rollouts.append(Rollout(samples=[sample], reward=score, passed=score >= 0.8))
                if on_rollout is not None:
                    on_rollout(rollouts[-1])
            groups.append(Group(task=task.key, rollouts=rollouts))
        return groups
