"""The measurements of bench/bench_gpu.py. Each fills the dict it is given as it goes, so a part that
fails halfway still reports what it finished; everything runs on whatever device load_policy picks.
"""

from __future__ import annotations

import gc
import resource
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

from bench import gpu_models
from bench.gpu_models import Peak, builder

TOY_CONFIG = Path(__file__).resolve().parent.parent / "trainer" / "configs" / "toy.yaml"
TIMED_KEYS = ("time_rollout", "time_update", "time_sync", "time_step", "tokens_model", "tokens_total")


# -- device helpers ----------------------------------------------------------


def synchronize() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def reset_peak_memory() -> None:
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()


def peak_memory() -> dict[str, Any]:
    """Peak allocated since reset_peak_memory on CUDA; on the CPU only the process's peak RSS so far."""
    if torch.cuda.is_available():
        return {"peak_memory_gb": round(torch.cuda.max_memory_allocated() / 2**30, 2), "memory": "cuda"}
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB on Linux
    return {"peak_memory_gb": round(peak, 2), "memory": "process peak RSS so far"}


def _model(name: str) -> gpu_models.QwenShape:
    return getattr(gpu_models, name)


# -- toy GRPO ----------------------------------------------------------------


def toy(out: dict[str, Any], steps: int) -> None:
    """trainer/configs/toy.yaml through build_trainer, as `egym train` runs it: reward at the start and end."""
    from trainer.config import load_config
    from trainer.local import build_trainer

    with tempfile.TemporaryDirectory() as tmp:
        config = load_config(
            TOY_CONFIG,
            [f"output_dir={tmp}", f"steps={steps}", "checkpoint.interval=0", "checkpoint.resume=never"],
        )
        trainer = build_trainer(config)
        out["device"] = str(trainer.learner.learner.device)
        started = time.perf_counter()
        records = trainer.run()
        out["seconds"] = round(time.perf_counter() - started, 2)
    rewards = [r["reward_mean"] for r in records]
    out.update(
        steps=len(records),
        reward_first_10=round(statistics.mean(rewards[:10]), 4),
        reward_last_10=round(statistics.mean(rewards[-10:]), 4),
        step_seconds_median=round(statistics.median(r["time_step"] for r in records), 4),
        rewards=[round(r, 3) for r in rewards],
    )
    print(
        f"toy: reward {out['reward_first_10']:.2f} (first 10) -> {out['reward_last_10']:.2f} (last 10) "
        f"over {len(records)} steps on {out['device']} in {out['seconds']:.1f} s",
        flush=True,
    )


# -- the engine next to model.generate ---------------------------------------


def engine(
    out: dict[str, Any], model_name: str, requests: int, prompt: int, new: int, peak: Peak | None
) -> None:
    """The same random prompts through plain `generate`, then through the Engine; both forced to `new` tokens."""
    shape = _model(model_name)
    model = shape(0)[0].to(torch.bfloat16).eval()
    weight_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    vocab = model.config.vocab_size
    prompts = torch.randint(0, vocab, (requests, prompt), generator=torch.Generator().manual_seed(0))
    # Every step reads the weights once for the whole batch, so the best possible is requests tokens per read.
    bound = requests * peak.bandwidth / weight_bytes if peak else None
    out.update(
        model=shape.name,
        dtype="bfloat16",
        requests=requests,
        prompt_tokens=prompt,
        new_tokens=new,
        weight_bytes=weight_bytes,
        bandwidth_bound_tokens_per_s=round(bound, 1) if bound else None,
        bandwidth_bound_counts="weights read once per decoding step; KV-cache reads not counted",
    )
    out["generate"] = _timed(_generate(model, prompts, new), bound)
    print(f"engine: model.generate {out['generate']['tokens_per_s']:.0f} tokens/s", flush=True)
    from gym.models.engine import Engine

    # No tokenizer: nothing ends a completion before max_new_tokens (the model's config has no end token).
    eng = Engine(model, None, max_batch=requests)
    try:
        out["engine"] = _timed(_engine(eng, prompts, new), bound)
    finally:
        eng.close()
    out["engine_over_generate"] = round(out["engine"]["tokens_per_s"] / out["generate"]["tokens_per_s"], 3)
    print(
        f"engine: Engine {out['engine']['tokens_per_s']:.0f} tokens/s, "
        f"{out['engine_over_generate']:.2f}x generate",
        flush=True,
    )


def _timed(run: Any, bound: float | None) -> dict[str, Any]:
    """`run(warmup=True)` untimed, then `run(warmup=False)` timed; its dict gains the rate."""
    run(warmup=True)
    synchronize()
    started = time.perf_counter()
    result = run(warmup=False)
    synchronize()
    seconds = time.perf_counter() - started
    rate = result["tokens"] / seconds
    share = round(rate / bound, 4) if bound else None
    return {
        **result,
        "seconds": round(seconds, 3),
        "tokens_per_s": round(rate, 1),
        "share_of_bandwidth_bound": share,
    }


def _generate(model: Any, prompts: torch.Tensor, new: int) -> Any:
    def run(*, warmup: bool) -> dict[str, Any]:
        ids = (prompts[:2, :16] if warmup else prompts).to(model.device)
        output = model.generate(
            input_ids=ids,
            attention_mask=torch.ones_like(ids),
            do_sample=True,
            temperature=1.0,
            top_k=0,
            top_p=1.0,
            max_new_tokens=4 if warmup else new,
            pad_token_id=0,
        )
        return {"tokens": int(output[:, ids.shape[1] :].numel())}

    return run


def _engine(eng: Any, prompts: torch.Tensor, new: int) -> Any:
    from gym.models.sampling import SamplingParams

    params = SamplingParams(temperature=1.0, top_p=1.0, top_k=0, max_new_tokens=new)

    def run(*, warmup: bool) -> dict[str, Any]:
        if warmup:  # a prompt of its own: the timed ones must not find it in the prefix cache
            eng.generate(list(range(1, 17)), params.model_copy(update={"max_new_tokens": 4}), seed=0)
            return {}
        steps = eng.stats["steps"]
        pending = [eng.submit(row.tolist(), params, seed=i) for i, row in enumerate(prompts)]
        lengths = [len(r.future.result().token_ids) for r in pending]
        return {
            "tokens": sum(lengths),
            "decoding_steps": eng.stats["steps"] - steps,
            "shortest": min(lengths),
        }

    return run


# -- one decoding step, taken apart -------------------------------------------


def decode_step(out: dict[str, Any], model_name: str, requests: int, prompt: int, steps: int) -> None:
    """Where a decoding step's time goes: the host issuing it, against the GPU's kernels.

    A step whose wall time is about its issue time and far above its kernel time is bound by the host
    (Python and one launch per operation). The same step replayed as a CUDA graph over a static KV
    cache shows what removing that would give. Greedy, one token per row per step, as in the engine.
    """
    from transformers import DynamicCache

    shape = _model(model_name)
    model = shape(0)[0].to(torch.bfloat16).eval()
    device = next(model.parameters()).device
    prompts = torch.randint(
        0, model.config.vocab_size, (requests, prompt), generator=torch.Generator().manual_seed(0)
    ).to(device)
    out.update(model=shape.name, dtype="bfloat16", requests=requests, prompt_tokens=prompt, steps=steps)
    with torch.no_grad():
        cache = DynamicCache()
        token = _greedy(model(input_ids=prompts, past_key_values=cache, use_cache=True, logits_to_keep=1))
        synchronize()
        issued, walls = [], []
        for _ in range(steps):
            began = time.perf_counter()
            token = _greedy(model(input_ids=token, past_key_values=cache, use_cache=True, logits_to_keep=1))
            issued.append(time.perf_counter() - began)
            synchronize()
            walls.append(time.perf_counter() - began)
        out["eager"] = {
            "issue_ms": round(statistics.median(issued) * 1e3, 3),
            "wall_ms": round(statistics.median(walls) * 1e3, 3),
        }
        print(
            f"decode step: eager {out['eager']['wall_ms']:.1f} ms, issued in {out['eager']['issue_ms']:.1f} ms",
            flush=True,
        )
        if not torch.cuda.is_available():
            return
        out["eager"].update(
            _kernel_time(lambda: model(input_ids=token, past_key_values=cache, logits_to_keep=1), steps)
        )
        print(
            f"decode step: kernels {out['eager']['kernel_ms']:.2f} ms ({out['eager']['kernels']:.0f} launches)",
            flush=True,
        )
        out["graph_wall_ms"] = round(_graph_step_ms(model, prompts, steps), 3)
        print(f"decode step: as a CUDA graph {out['graph_wall_ms']:.2f} ms", flush=True)


def _greedy(output: Any) -> torch.Tensor:
    return output.logits[:, -1].argmax(-1, keepdim=True)


def _kernel_time(step: Any, steps: int) -> dict[str, Any]:
    """The GPU's kernel time and launches per call of `step`, from torch's profiler."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            step()
        synchronize()
    kernels = [e for e in prof.key_averages() if e.device_type == torch.autograd.DeviceType.CUDA]
    return {
        "kernel_ms": round(sum(e.self_device_time_total for e in kernels) / steps / 1e3, 3),
        "kernels": sum(e.count for e in kernels) / steps,
    }


def _graph_step_ms(model: Any, prompts: torch.Tensor, steps: int) -> float:
    """Median wall time of one decoding step captured once as a CUDA graph and replayed."""
    from transformers import StaticCache

    length = prompts.shape[1]
    cache = StaticCache(config=model.config, max_cache_len=length + steps + 8)
    positions = torch.arange(length, device=prompts.device)
    token = _greedy(
        model(input_ids=prompts, past_key_values=cache, cache_position=positions, logits_to_keep=1)
    )
    position = torch.tensor([length], device=prompts.device)
    side = torch.cuda.Stream()  # warm-up off the default stream, as graph capture requires
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            model(input_ids=token, past_key_values=cache, cache_position=position, logits_to_keep=1)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        following = _greedy(
            model(input_ids=token, past_key_values=cache, cache_position=position, logits_to_keep=1)
        )
    walls = []
    for _ in range(steps):
        began = time.perf_counter()
        token.copy_(following)
        position.add_(1)
        graph.replay()
        synchronize()
        walls.append(time.perf_counter() - began)
    return statistics.median(walls) * 1e3


# -- the learner -------------------------------------------------------------


def learner(
    out: dict[str, Any],
    model_name: str,
    lora: bool,
    *,
    sequences: int,
    length: int,
    micro_batch: int,
    timed_updates: int,
    peak: Peak | None,
) -> None:
    """Optimizer steps on random sequences through Learner, bf16 compute, gradient checkpointing."""
    from trainer.config import build_config
    from trainer.learner import Learner
    from trainer.model import load_policy

    config = build_config(
        {
            "model": {
                "builder": builder(model_name),
                "dtype": "bfloat16",
                "gradient_checkpointing": True,
                "lora": {"enabled": lora, "r": 32, "alpha": 64},
            },
            "rollout": {"source": "toy"},
            "optim": {"lr": 1e-6},
            "update": {"micro_batch_size": micro_batch},
        }
    )
    reset_peak_memory()
    model, tokenizer = load_policy(config.model, config.seed)
    shape = _model(model_name)
    fit = Learner(config, model, tokenizer)
    trained = [p for group in fit.optimizer.param_groups for p in group["params"]]
    params = sum(p.numel() for p in model.parameters())
    # LoRA computes no weight gradients for the frozen weights: forward, recompute, input gradients.
    flops_per_token = (6 if lora else 8) * params
    out.update(
        model=shape.name,
        mode="lora r=32" if lora else "full",
        params=params,
        trained_elements=sum(p.numel() for p in trained),
        model_dtype=str(next(model.parameters()).dtype),
        trained_dtype=str(trained[0].dtype),
        sequences=sequences,
        sequence_tokens=length,
        micro_batch_size=micro_batch,
        flops_per_token=flops_per_token,
        flops_rule="6·params (LoRA)" if lora else "8·params (forward, checkpoint recompute, backward)",
    )
    items = fit.recompute_old_logprobs(_random_items(sequences, length, model.config.vocab_size))
    fit.update(items)  # warm-up: kernels, optimizer state; LoRA's B leaves zero here, so A moves from now on
    out.update(peak_memory())  # before the copy below, which only this bench holds
    before = [p.detach().clone() for p in trained]
    seconds, tokens = 0.0, 0.0
    for n in range(timed_updates):
        synchronize()
        started = time.perf_counter()
        tokens += fit.update(items)["tokens_total"]
        synchronize()
        seconds += time.perf_counter() - started
        if n == 0:
            changed = sum(int((p.detach() != b).sum()) for p, b in zip(trained, before, strict=True))
            out["changed_share"] = round(changed / out["trained_elements"], 6)
            del before
    rate = tokens / seconds
    mfu = rate * flops_per_token / peak.bf16_flops if peak else None
    out.update(
        updates_timed=timed_updates,
        tokens_per_s=round(rate, 1),
        mfu=round(mfu, 4) if mfu is not None else None,
    )
    mfu_text = f"{mfu:.1%}" if mfu is not None else "n/a"
    print(
        f"learner {shape.name} {out['mode']}: {rate:.0f} tokens/s, MFU {mfu_text}, "
        f"{out['peak_memory_gb']} GB, {out['changed_share']:.1%} of trained elements changed",
        flush=True,
    )


def _random_items(sequences: int, length: int, vocab: int) -> list[Any]:
    """GRPO-shaped sequences: a quarter prompt, the rest completion; advantages alternate in sign."""
    from trainer.samples import Sample, TrainItem

    generator = torch.Generator().manual_seed(0)
    prompt = length // 4
    items = []
    for i in range(sequences):
        ids = torch.randint(1, vocab, (length,), generator=generator).tolist()
        sample = Sample.from_turn(ids[:prompt], ids[prompt:], [0.0] * (length - prompt))
        items.append(TrainItem(sample, advantage=1.0 if i % 2 == 0 else -1.0, trajectory=i))
    return items


# -- one GRPO step end to end ------------------------------------------------


def grpo_step(out: dict[str, Any], model_name: str, new_tokens: int) -> None:
    """toy.yaml with a Qwen-shaped model: rollouts from the in-process engine, the update, the weight sync.

    The model keeps the toy vocabulary, so a random one scores now and then and groups have a signal.
    """
    from trainer.config import load_config
    from trainer.local import build_trainer

    overrides = [
        f"model.builder={builder(model_name)}",
        "model.dtype=bfloat16",
        "optim.lr=1e-6",
        f"sampling.max_new_tokens={new_tokens}",
        "checkpoint.resume=never",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        config = load_config(TOY_CONFIG, [f"output_dir={tmp}", *overrides])
        trainer = build_trainer(config)
        out.update(
            model=_model(model_name).name,
            overrides=overrides,
            rollouts=config.rollout.tasks_per_step * config.rollout.group_size,
            first_step=_step_times(trainer.step(1)),  # warm-up
            step=_step_times(trainer.step(2)),
        )
    step = out["step"]
    if not step["groups_kept"]:
        out["note"] = "no group had a reward signal in the timed step: no update ran"
    print(
        f"grpo step: {step['time_step']:.2f} s (rollouts {step['time_rollout']:.2f}, "
        f"update {step['time_update']:.2f}, sync {step['time_sync']:.3f})",
        flush=True,
    )


def _step_times(record: dict[str, Any]) -> dict[str, Any]:
    times = {key: record.get(key) for key in (*TIMED_KEYS, "reward_mean", "groups_kept")}
    return {k: round(v, 4) if isinstance(v, float) else v for k, v in times.items()}
