"""One transformers model per process, shared by every concurrent episode: an in-process inference engine.

Why not `transformers serve`: it refuses `logprobs`, drops the tools when a chat
template has no tool support, and cannot see a trainer's live weights. The
engine runs one background thread that owns the model:

- continuous batching: a request joins the running batch as soon as its prompt
  is read (prefill), and leaves when it stops; every decoding step advances all
  running requests at once (gym.models.kv holds their cache);
- prefix reuse: the caches of recent prompts and completions are kept (up to
  `cache_bytes`), so an episode's next turn, or the other samples of a GRPO
  group, only read the tokens that are new;
- per request: sampling parameters, a seeded generator, stop strings, an
  optional logits processor, and the logprob of every sampled token;
- `stop(request)` ends a request early and hands back what it has so far.

`Engine.shared(path)` gives every caller in the process the same engine for a
model folder. A trainer wraps its own model (`Engine(model, tokenizer)`) and
calls `reload()` after each optimizer step: cached prefixes are dropped since
they were computed with the old weights.

Every tensor the engine makes is on the model's device, and its forward passes
run in the model's compute dtype (gym.models.device), so a trainer's model
computes alike in the engine and in the learner.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import contextlib
import itertools
import logging
import queue
import secrets
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.errors import PolicyError
from gym.models.sampling import SamplingParams, sample

log = logging.getLogger(__name__)
PREFILL_CHUNK = 512  # tokens read per forward pass: bounds the attention's memory on long prompts
MAX_PREFIXES = 32  # remembered caches (each lookup compares the prompt with every one)
LogitsProcessor = Callable[[list[int], Any], Any]  # (tokens generated so far, logits [vocab]) -> logits


@dataclass
class Generation:
    """One completion: the sampled tokens (the end token included when it stopped on one) and their logprobs."""

    token_ids: list[int]
    logprobs: list[float]
    finish_reason: (
        str  # "stop" (end token or stop string), "length" (max_new_tokens or the window), "cancelled"
    )
    prompt_tokens: int = 0
    cached_tokens: int = 0  # prompt tokens whose cache was reused instead of read again


@dataclass(eq=False)
class Request:
    prompt_ids: list[int]
    params: SamplingParams
    generator: Any  # torch.Generator
    processor: LogitsProcessor | None = None
    future: concurrent.futures.Future = field(default_factory=concurrent.futures.Future)
    generated: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    cached_tokens: int = 0
    cancelled: bool = False

    def result(self, finish_reason: str) -> Generation:
        return Generation(
            list(self.generated), list(self.logprobs), finish_reason, len(self.prompt_ids), self.cached_tokens
        )


# Every engine whose thread may run. A daemon thread still inside a torch step when the interpreter
# ends aborts the process ("terminate called without an active exception", exit -6) after its work
# is done, so each one is stopped first.
_running: weakref.WeakSet[Engine] = weakref.WeakSet()


@atexit.register
def _close_engines() -> None:
    for engine in list(_running):
        engine.close()


class Engine:
    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        max_batch: int = 8,
        cache_bytes: int = 1536 << 20,
        threads: int | None = None,
        name: str | None = None,
    ):
        """`threads`: torch's intra-op threads for generation (default: see default_threads)."""
        import torch

        self.model, self.tokenizer = model, tokenizer
        self.name = name or getattr(model.config, "_name_or_path", None) or type(model).__name__
        self.max_batch, self.cache_bytes = max_batch, cache_bytes
        self.threads = (
            threads or default_threads()
        )  # applied in the engine's own thread (OpenMP's is per thread)
        self.window = getattr(model.config, "max_position_embeddings", None) or 1 << 30
        self.end_ids = _end_ids(model, tokenizer)
        self.layers = model.config.get_text_config().num_hidden_layers
        self.device = next(model.parameters()).device
        from gym.models import kv

        self._cache_arg = kv.cache_argument(model)
        self.lock = threading.RLock()  # held for each step; hold it to change the weights
        self._torch = torch
        self._inbox: queue.Queue[Request | None] = queue.Queue()
        self._rows: list[Request] = []
        self._cache: Any = None  # the running batch's KV cache
        self._mask: Any = None  # [rows, length] bool: which cache positions are real (not left padding)
        self._prefixes: OrderedDict[tuple[int, ...], Any] = OrderedDict()  # tokens -> one-row cache, LRU
        self._prefix_bytes = 0
        self._closed = False
        self.stats = {
            "requests": 0,
            "generated_tokens": 0,
            "prompt_tokens": 0,
            "cached_tokens": 0,
            "steps": 0,
        }
        self._thread = threading.Thread(target=self._run, name=f"egym-engine-{self.name}", daemon=True)
        self._thread.start()
        _running.add(self)

    # -- shared engines ----------------------------------------------------------

    _shared: dict[tuple[str, str], Engine] = {}
    _shared_lock = threading.Lock()

    @classmethod
    def shared(
        cls, path: str, *, dtype: str = "float32", device: str | None = None, threads: int | None = None
    ) -> Engine:
        """The process's engine for the model folder at `path` (loaded on first use).

        `device`: 'cpu', 'cuda', 'cuda:1', ...; by default the GPU when there is one, else the CPU.
        """
        from gym.models.device import parse_device

        where = parse_device(device)
        key = (str(path), dtype, str(where))
        with cls._shared_lock:
            if key not in cls._shared:
                model, tokenizer = load_model(path, dtype=dtype, device=where)
                cls._shared[key] = cls(model, tokenizer, threads=threads, name=str(path))
            elif threads:
                cls._shared[key].threads = threads
            return cls._shared[key]

    # -- requests ----------------------------------------------------------------

    def submit(
        self,
        prompt_ids: Sequence[int],
        params: SamplingParams,
        *,
        seed: int | None = None,
        processor: LogitsProcessor | None = None,
    ) -> Request:
        """Queue a completion; `request.future` resolves to a Generation."""
        if self._closed:
            raise PolicyError(f"the engine for {self.name} was closed")
        if not prompt_ids:
            raise PolicyError("empty prompt")
        if len(prompt_ids) >= self.window:
            raise PolicyError(
                f"the prompt has {len(prompt_ids)} tokens; {self.name} reads at most {self.window}"
            )
        # a CPU generator whatever the model's device: a seed draws the same uniforms everywhere
        generator = self._torch.Generator(device="cpu").manual_seed(
            secrets.randbits(63) if seed is None else seed
        )
        request = Request(list(prompt_ids), params, generator, processor)
        self._inbox.put(request)
        return request

    @contextlib.contextmanager
    def together(self) -> Iterator[None]:
        """Requests submitted inside the block are admitted together, as one batch (up to max_batch).

        Without it the engine may start on the first before the rest arrive, and how a busy
        machine schedules the two threads would decide the batch's shape; the float rounding of
        batched matmuls differs with that shape, enough to flip a sampled token now and then.
        Submitting a whole step's groups together makes the batches, and so the samples, the
        same on every run.
        """
        with self.lock:
            yield

    def generate(self, prompt_ids: Sequence[int], params: SamplingParams, **kw: Any) -> Generation:
        """Blocking submit-and-wait."""
        return self.submit(prompt_ids, params, **kw).future.result()

    def stop(self, request: Request) -> None:
        """End `request` at the next step; its future resolves with what it has ('cancelled')."""
        request.cancelled = True
        self._inbox.put(None)  # wake the loop if it sleeps

    def reload(self, change: Callable[[], None] | None = None) -> None:
        """Run `change` (new weights) while no step runs, then forget the cached prefixes."""
        with self.lock:
            if change is not None:
                change()
            self._prefixes.clear()
            self._prefix_bytes = 0

    def close(self, wait: float = 30.0) -> None:
        """Stop the engine (requests still running fail) and wait up to `wait` s for its thread to end."""
        self._closed = True
        self._inbox.put(None)
        if threading.current_thread() is not self._thread:
            self._thread.join(wait)

    # -- the loop (engine thread) ----------------------------------------------------

    def _run(self) -> None:
        while not self._closed:
            try:
                if self._torch.get_num_threads() != self.threads:
                    self._torch.set_num_threads(self.threads)
                self._admit(block=not self._rows)
                if self._rows:
                    with self.lock, self._torch.inference_mode():
                        self._step()
            except Exception as exc:
                log.exception("engine step failed")
                self._fail_all(PolicyError(f"{self.name}: generation failed: {type(exc).__name__}: {exc}"))
        self._fail_all(PolicyError(f"the engine for {self.name} was closed"))

    def _admit(self, block: bool) -> None:
        """Prefill waiting requests into the batch (up to max_batch); wait for one when idle.

        Requests with the same prompt (the samples of a group) are read once and share the result.
        """
        waiting: dict[tuple[int, ...], list[Request]] = {}
        # Idle: wait for a request outside the lock, so that a caller can finish submitting `together`.
        first = [self._inbox.get()] if block else []
        with self.lock:
            while len(self._rows) + sum(map(len, waiting.values())) < self.max_batch:
                try:
                    request = first.pop() if first else self._inbox.get_nowait()
                except queue.Empty:
                    break
                if request is None or request.cancelled or request.future.cancelled():
                    if request is not None and not request.future.done():
                        request.future.set_result(request.result("cancelled"))
                    continue
                waiting.setdefault(tuple(request.prompt_ids), []).append(request)
        for group in waiting.values():
            with self.lock, self._torch.inference_mode():
                try:
                    self._prefill(group)
                except Exception as exc:
                    log.exception("prefill failed")
                    for request in group:
                        request.future.set_exception(PolicyError(f"{self.name}: {type(exc).__name__}: {exc}"))

    def _prefill(self, group: list[Request]) -> None:
        """Read the prompt the requests of `group` share, then add one row per request to the batch."""
        from gym.models import kv

        torch = self._torch
        prompt = group[0].prompt_ids
        cache, start = self._reuse(prompt)
        logits = None
        for chunk_start in range(start, len(prompt), PREFILL_CHUNK):
            chunk = prompt[chunk_start : chunk_start + PREFILL_CHUNK]
            ids = torch.tensor([chunk], device=self.device)
            positions = torch.arange(chunk_start, chunk_start + len(chunk), device=self.device)[None]
            out = self._forward(
                input_ids=ids, position_ids=positions, kv=cache, use_cache=True, logits_to_keep=1
            )  # only the last position's logits are needed
            logits = out.logits[:, -1]
        self._remember(tuple(prompt), cache)
        for request in group:
            request.cached_tokens = start
        self.stats["requests"] += len(group)
        self.stats["prompt_tokens"] += len(prompt) * len(group)
        self.stats["cached_tokens"] += start * len(group)
        rows = kv.join([cache] * len(group)) if len(group) > 1 else cache
        mask = torch.ones((len(group), len(prompt)), dtype=torch.bool, device=self.device)
        if self._rows:  # join the batch: left-pad whichever is shorter
            width = max(kv.length(self._cache), len(prompt))
            self._cache = kv.join(
                [
                    kv.left_pad(self._cache, width - kv.length(self._cache)),
                    kv.left_pad(rows, width - len(prompt)),
                ]
            )
            self._mask = torch.cat([_pad_mask(self._mask, width), _pad_mask(mask, width)])
        else:
            self._cache, self._mask = rows, mask
        self._rows.extend(group)
        self._accept(group, logits.expand(len(group), -1))

    def _reuse(self, prompt: list[int]) -> tuple[Any, int]:
        """A one-row cache of the longest remembered prefix of `prompt` (at most all but its last token)."""
        from gym.models import kv

        best, best_key = 0, None
        for key in self._prefixes:
            shared = _common_prefix(key, prompt, len(prompt) - 1)
            if shared > best:
                best, best_key = shared, key
        if best_key is None or best < 16:
            return kv.new_cache(self.layers), 0
        self._prefixes.move_to_end(best_key)
        return kv.select(self._prefixes[best_key], [0], 0, best), best

    def _remember(self, tokens: tuple[int, ...], cache: Any) -> None:
        """Keep a copy of a one-row cache for `tokens`, within the cache budget (least recently used goes)."""
        from gym.models import kv

        if self.cache_bytes <= 0:
            return
        if tokens in self._prefixes:
            self._prefix_bytes -= kv.nbytes(self._prefixes.pop(tokens))
        self._prefixes[tokens] = kv.select(cache, [0])
        self._prefix_bytes += kv.nbytes(self._prefixes[tokens])
        while len(self._prefixes) > 1 and (
            self._prefix_bytes > self.cache_bytes or len(self._prefixes) > MAX_PREFIXES
        ):
            self._prefix_bytes -= kv.nbytes(self._prefixes.popitem(last=False)[1])

    def _step(self) -> None:
        torch = self._torch
        rows = self._rows
        ids = torch.tensor([[r.generated[-1]] for r in rows], device=self.device)
        positions = torch.tensor(
            [[len(r.prompt_ids) + len(r.generated) - 1] for r in rows], device=self.device
        )
        self._mask = torch.cat(
            [self._mask, torch.ones((len(rows), 1), dtype=torch.bool, device=self.device)], 1
        )
        out = self._forward(
            input_ids=ids,
            attention_mask=self._mask.long(),
            position_ids=positions,
            kv=self._cache,
            use_cache=True,
            logits_to_keep=1,
        )
        self.stats["steps"] += 1
        self._accept(list(rows), out.logits[:, -1])

    def _forward(self, *, kv: Any, **inputs: Any) -> Any:
        from gym.models.device import computing

        with computing(self.model):
            return self.model(**inputs, **{self._cache_arg: kv})

    def _accept(self, rows: list[Request], logits: Any) -> None:
        """Sample one token for each of `rows` (whose logits these are), then retire the finished ones."""
        torch = self._torch
        batch_index = {id(r): i for i, r in enumerate(self._rows)}
        groups: dict[SamplingParams, list[int]] = {}
        for i, request in enumerate(rows):
            groups.setdefault(request.params, []).append(i)
        chosen: dict[int, tuple[int, float]] = {}
        for params, members in groups.items():
            raw = logits[members].float()
            block = raw
            if any(rows[i].processor is not None for i in members):
                block = raw.clone()
                for j, i in enumerate(members):
                    if rows[i].processor is not None:
                        block[j] = rows[i].processor(rows[i].generated, block[j])
            uniforms = torch.stack(
                [torch.rand((), generator=rows[i].generator, device="cpu") for i in members]
            ).to(block.device)
            tokens, logprobs = sample(block, params, uniforms, model_logits=raw)
            for i, token, logprob in zip(members, tokens.tolist(), logprobs.tolist(), strict=True):
                chosen[i] = (token, logprob)
        finished: list[tuple[Request, str]] = []
        for i, request in enumerate(rows):
            token, logprob = chosen[i]
            request.generated.append(token)
            request.logprobs.append(logprob)
            self.stats["generated_tokens"] += 1
            reason = self._finish_reason(request, token)
            if reason:
                finished.append((request, reason))
        if finished:
            self._retire(finished, batch_index)

    def _finish_reason(self, request: Request, token: int) -> str | None:
        if request.cancelled or request.future.cancelled():
            return "cancelled"
        if token in self.end_ids:
            return "stop"
        if request.params.stop and self._hit_stop(request):
            return "stop"
        if len(request.generated) >= request.params.max_new_tokens:
            return "length"
        if len(request.prompt_ids) + len(request.generated) >= self.window:
            return "length"
        return None

    def _hit_stop(self, request: Request) -> bool:
        longest = max(len(s) for s in request.params.stop)
        tail = self.tokenizer.decode(request.generated[-(longest + 8) :], skip_special_tokens=False)
        return any(s in tail for s in request.params.stop)

    def _retire(self, finished: list[tuple[Request, str]], batch_index: dict[int, int]) -> None:
        """Resolve finished requests, remember their full sequence, and drop their rows from the batch."""
        from gym.models import kv

        gone = {id(r) for r, _ in finished}
        for request, reason in finished:
            row = batch_index[id(request)]
            real = int(self._mask[row].sum())
            width = kv.length(self._cache)
            if reason != "cancelled" and real == len(request.prompt_ids) + len(request.generated) - 1:
                # the cache holds every token but the last sampled one
                self._remember(
                    tuple(request.prompt_ids + request.generated[:-1]),
                    kv.select(self._cache, [row], width - real),
                )
            if not request.future.done():
                request.future.set_result(request.result(reason))
        keep = [i for i, r in enumerate(self._rows) if id(r) not in gone]
        self._rows = [self._rows[i] for i in keep]
        if not keep:
            self._cache = self._mask = None
            return
        mask = self._mask[keep]
        start = int((~mask.any(0)).long().cumprod(0).sum())  # leading columns that are padding for every row
        self._cache = kv.select(self._cache, keep, start)
        self._mask = mask[:, start:]

    def _fail_all(self, error: Exception) -> None:
        for request in self._rows:
            if not request.future.done():
                request.future.set_exception(error)
        self._rows, self._cache, self._mask = [], None, None
        while True:
            try:
                request = self._inbox.get_nowait()
            except queue.Empty:
                return
            if request is not None and not request.future.done():
                request.future.set_exception(error)


def _pad_mask(mask: Any, width: int) -> Any:
    import torch

    if mask.shape[1] == width:
        return mask
    return torch.cat(
        [torch.zeros((mask.shape[0], width - mask.shape[1]), dtype=mask.dtype, device=mask.device), mask], 1
    )


def _common_prefix(a: Sequence[int], b: Sequence[int], limit: int) -> int:
    n = min(len(a), len(b), limit)
    for i, (x, y) in enumerate(zip(itertools.islice(a, n), itertools.islice(b, n), strict=True)):
        if x != y:
            return i
    return n


def _end_ids(model: Any, tokenizer: Any) -> set[int]:
    """Every token id that ends a completion (the tokenizer's EOS and the generation config's)."""
    ids: set[int] = set()
    for value in (
        getattr(tokenizer, "eos_token_id", None),
        getattr(model.generation_config, "eos_token_id", None),
    ):
        if isinstance(value, int):
            ids.add(value)
        elif value:
            ids.update(value)
    return ids


def load_model(path: str, *, device: Any, dtype: str = "float32") -> tuple[Any, Any]:
    """A transformers model folder as (model, tokenizer), on `device`, ready for inference."""
    try:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as exc:
        raise PolicyError(
            f"local models need torch and transformers: {exc} (pip install 'enterprise-gym[train]')"
        ) from None
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # a progress bar per load is noise in rollout and batch output
    started = time.monotonic()
    try:
        model = AutoModelForCausalLM.from_pretrained(path, dtype=getattr(torch, dtype))
        tokenizer = AutoTokenizer.from_pretrained(path)
    except (OSError, ValueError) as exc:
        raise PolicyError(f"cannot load the model at '{path}': {str(exc).splitlines()[0]}") from None
    log.info("loaded %s in %.1fs", path, time.monotonic() - started)
    return model.to(device).eval(), tokenizer


def default_threads() -> int:
    """$EGYM_TORCH_THREADS, else every core, at most 2 (measured in bench/results/model.json; docs/models.md)."""
    import os

    return int(os.environ.get("EGYM_TORCH_THREADS", 0)) or max(1, min(2, os.cpu_count() or 1))
