"""A gym Trajectory -> training samples, with every non-model token masked.

Choice: each assistant turn is taken exactly as the sampler saw and wrote it
(`prompt_token_ids` + `token_ids`, with the sampler's logprobs). Re-rendering
the transcript with the chat template would not reproduce those tokens when
the harness compacted the context or the template rewrites earlier turns
(reasoning stripped, tool calls re-serialised), and the policy gradient must
score the exact tokens that were sampled. Every turn of a trajectory shares
the trajectory's advantage.

As an exact optimisation, when a turn's prompt starts with the previous
turn's whole sequence (the common case: nothing was compacted), the two turns
are merged into one sequence: the tokens between them (tool results,
template glue) are masked out. With causal attention this gives the same
logprobs as two separate samples, but shares the prefix's compute.
"""

from __future__ import annotations

from core.errors import PolicyError
from core.trajectory import AssistantTurn, Trajectory
from trainer.samples import Sample


def _check_turn(
    traj: Trajectory, index: int, turn: AssistantTurn
) -> tuple[list[int], list[int], list[float]]:
    if turn.prompt_token_ids is None or turn.token_ids is None or turn.logprobs is None:
        raise PolicyError(
            f"trajectory of {traj.task} (policy {traj.policy}), turn {index}: no token ids/logprobs; "
            "train with a policy that returns them (hf, vllm)"
        )
    if len(turn.token_ids) != len(turn.logprobs):
        raise PolicyError(
            f"trajectory of {traj.task}, turn {index}: {len(turn.token_ids)} tokens but {len(turn.logprobs)} logprobs"
        )
    return turn.prompt_token_ids, turn.token_ids, turn.logprobs


def trajectory_samples(traj: Trajectory, *, merge: bool = True) -> list[Sample]:
    """One sample per assistant turn, merged where one turn's prompt extends the previous sequence."""
    samples: list[Sample] = []
    for step in traj.steps:
        prompt, completion, logprobs = _check_turn(traj, step.index, step.turn)
        if not completion:
            continue
        last = samples[-1] if samples else None
        if merge and last is not None and _extends(prompt, last.token_ids):
            glue = prompt[len(last.token_ids) :]
            last.token_ids += glue + completion
            last.mask += [0] * len(glue) + [1] * len(completion)
            last.logprobs += [0.0] * len(glue) + list(logprobs)
        else:
            samples.append(Sample.from_turn(prompt, completion, logprobs))
    return samples


def _extends(prompt: list[int], prefix: list[int]) -> bool:
    return len(prompt) >= len(prefix) and prompt[: len(prefix)] == prefix
