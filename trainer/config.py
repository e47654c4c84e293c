"""The training config: one pydantic model per component, loaded from YAML with dotted overrides.

`egym train run.yaml loss.clip_high=0.28 rollout.group_size=16` reads the
file, applies the overrides, and validates the result here; a typo in a key
is an error naming it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from core.errors import ConfigError
from core.overrides import apply_overrides, read_yaml
from core.validation import describe_validation_error


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LoraConfig(_Section):
    """LoRA adapter (peft). Disabled means a full fine-tune."""

    enabled: bool = Field(False, description="Train a LoRA adapter instead of every weight.")
    r: int = Field(16, ge=1, description="Adapter rank.")
    alpha: int = Field(32, ge=1, description="LoRA scaling numerator (scale = alpha / r).")
    dropout: float = Field(
        0.0, ge=0, lt=1, description="Dropout on the adapter input; keep 0 for exact ratios."
    )
    target_modules: list[str] | Literal["all-linear"] = Field(
        "all-linear",
        description="Module names to adapt, or 'all-linear' for every linear layer but the head.",
    )


class ModelConfig(_Section):
    """The policy being trained."""

    path: str | None = Field(
        None, description="`smollm2`, a .gguf file, a model folder, or a Hugging Face id."
    )
    builder: str | None = Field(
        None,
        description="Instead of `path`: 'toy' or 'module:function' returning (model, tokenizer), for tests/demos.",
    )
    dtype: Literal["float32", "bfloat16", "float16", "auto"] = Field(
        "float32",
        description="Compute dtype ('auto': the checkpoint's); bfloat16 on GPUs, float32 on CPU. "
        "Trained weights and optimizer state stay float32 (a LoRA run's frozen base is held in it).",
    )
    lora: LoraConfig = Field(default_factory=LoraConfig)
    gradient_checkpointing: bool = Field(
        False, description="Trade compute for activation memory on long contexts."
    )
    trust_remote_code: bool = Field(False, description="Passed to transformers when loading `path`.")

    @model_validator(mode="after")
    def _one_source(self) -> ModelConfig:
        if (self.path is None) == (self.builder is None):
            raise ValueError("set exactly one of model.path or model.builder")
        return self


BAND_WEIGHTS = {"target": 1.0, "hard": 0.5, "too-easy": 0.1, "too-hard": 0.05, "unbanded": 1.0}


class CurriculumConfig(_Section):
    """Which tasks each step trains on: weighted by their calibrated band (`egym calibrate`)."""

    band_weights: dict[str, float] = Field(
        default_factory=lambda: dict(BAND_WEIGHTS),
        description="Sampling weight per task in each band; 'unbanded' covers tasks not calibrated yet. "
        "0 excludes a band, except 'too-hard', whose weight is a floor above 0 so a level found too hard "
        "is still tried now and then and can recover. Bands left out keep their default weight.",
    )
    promote_at: float = Field(
        0.5,
        ge=0,
        le=1,
        description="Live pass rate of a family level at which its next level joins the learning zone.",
    )
    window: int = Field(
        32, ge=1, le=100_000, description="Rollouts per family level the live pass rate is over."
    )
    min_observed: int = Field(
        8,
        ge=1,
        le=100_000,
        description="Rollouts of a family level before its live pass rate replaces its band.",
    )
    bands_of: str | None = Field(
        None,
        description="Read the bands calibrated for this model key (gym.models.identity) instead of the "
        "trained model's own: the same recipe trained again on another CPU gives other weights, so "
        "another key, and no bands.",
    )

    @model_validator(mode="after")
    def _known_bands(self) -> CurriculumConfig:
        unknown = sorted(set(self.band_weights) - set(BAND_WEIGHTS))
        if unknown:
            raise ValueError(f"unknown band(s) {unknown}; known: {sorted(BAND_WEIGHTS)}")
        if any(w < 0 for w in self.band_weights.values()):
            raise ValueError("band weights must be >= 0")
        self.band_weights = BAND_WEIGHTS | self.band_weights
        if self.band_weights["too-hard"] <= 0:
            raise ValueError(
                "band_weights.too-hard must be above 0: a level at weight 0 is never sampled again, so a "
                f"live pass rate of 0 would drop it for good (default {BAND_WEIGHTS['too-hard']})"
            )
        return self


class TasksConfig(_Section):
    """Where training tasks come from."""

    paths: list[str] = Field(
        default_factory=list,
        description="Worlds (acme), task folders or trees, families (acme/product-price: seeds 0-9) or instance "
        "ids; empty: every world egym knows (./tasks and installed world packages), from any folder.",
    )
    split: Literal["train", "val", "test"] = Field(
        "train", description="Only tasks of this split are trained on."
    )
    include: list[str] = Field(
        default_factory=list, description="Glob patterns on task keys (`acme/*`); empty: all."
    )
    curriculum: CurriculumConfig = Field(default_factory=CurriculumConfig)

    def refs(self) -> list[str]:
        """What `paths` names, or every known world's name when it names nothing."""
        from gym.worlds import world_dirs

        return list(self.paths) or list(world_dirs())


class RolloutConfig(_Section):
    """How groups of rollouts are produced."""

    source: str = Field("gym", description="'gym' (harness + grader in sandboxes), 'toy', or module:Class.")
    group_size: int = Field(8, ge=2, description="G: rollouts per task from the same seed.")
    tasks_per_step: int = Field(4, ge=1, description="Tasks (groups) per training step.")
    concurrency: int = Field(4, ge=1, description="Rollouts running at once on one machine.")
    include_incomplete: bool = Field(
        False, description="Train on rollouts whose grade is incomplete (judge failed)."
    )
    resample_rounds: int = Field(
        0,
        ge=0,
        le=10,
        description="Dynamic sampling (DAPO): up to this many extra rounds per step replace the groups "
        "whose rewards are all equal (no signal) by groups of newly sampled tasks; 0: they are only dropped.",
    )
    options: dict[str, Any] = Field(
        default_factory=dict, description="Source-specific settings, validated by it."
    )


class SamplingConfig(_Section):
    """Sampling parameters; the learner scores tokens at the same temperature."""

    temperature: float = Field(1.0, gt=0, description="Softmax temperature for sampling and for the loss.")
    top_p: float = Field(1.0, gt=0, le=1, description="Nucleus sampling mass.")
    top_k: int = Field(0, ge=0, description="Top-k sampling; 0 disables.")
    max_new_tokens: int = Field(512, ge=1, description="Completion tokens per model turn.")


class SamplerConfig(_Section):
    """The engine that generates rollouts: transformers (CPU) or in-process vLLM (GPU)."""

    backend: str = Field(
        "hf", description="'hf' (transformers, shares the learner's model), 'vllm', or module:Class."
    )
    max_batch: int = Field(
        256,
        ge=1,
        le=100_000,
        description="hf: most requests the engine decodes at once (rollout.concurrency bounds them too).",
    )
    gpu_memory_utilization: float = Field(
        0.5, gt=0, le=1, description="vLLM: fraction of GPU memory for the engine."
    )
    tensor_parallel_size: int = Field(1, ge=1, description="vLLM: GPUs per engine.")
    max_model_len: int | None = Field(None, description="vLLM: context length; None uses the model's.")
    enforce_eager: bool = Field(False, description="vLLM: skip CUDA graphs (faster start, slower decode).")
    enable_prefix_caching: bool = Field(
        True, description="vLLM: reuse KV cache across turns of one trajectory."
    )


class OptimConfig(_Section):
    """AdamW with linear warm-up."""

    lr: float = Field(1e-6, gt=0, description="Peak learning rate.")
    betas: tuple[float, float] = Field((0.9, 0.999), description="Adam betas.")
    eps: float = Field(1e-8, gt=0, description="Adam epsilon.")
    weight_decay: float = Field(0.0, ge=0, description="Decoupled weight decay.")
    max_grad_norm: float = Field(1.0, ge=0, description="Gradient clipping by global norm; 0 disables.")
    warmup_steps: int = Field(
        10,
        ge=0,
        description="Optimizer steps of linear warm-up: step k uses lr * k / warmup_steps; 0 starts at lr. "
        "Adam's first steps move every weight by about lr whatever the gradient's size, so they come small.",
    )


class LossConfig(_Section):
    """The clipped policy-gradient objective."""

    clip_low: float = Field(0.2, ge=0, lt=1, description="Ratio floor is 1 - clip_low.")
    clip_high: float = Field(
        0.2, ge=0, description="Ratio ceiling is 1 + clip_high (DAPO's clip-higher: 0.28)."
    )
    kl_coef: float = Field(
        0.0, ge=0, description="Weight of the k3 KL estimate to the reference (initial) policy."
    )
    normalization: Literal["token", "sequence"] = Field(
        "token",
        description="'token': mean over all model tokens in the batch; 'sequence': mean of per-trajectory means.",
    )
    scale_advantages: bool = Field(
        True, description="Divide by the group std (GRPO); False: only centre (Dr. GRPO)."
    )
    adv_eps: float = Field(1e-6, gt=0, description="eps in (r - mean) / (std + eps).")
    old_logprobs: Literal["sampler", "recompute"] = Field(
        "sampler",
        description="Old-policy logprobs: the sampler's, or recomputed by the learner before updating.",
    )


class UpdateConfig(_Section):
    """How one batch of rollouts becomes optimizer steps."""

    micro_batch_size: int = Field(
        8, ge=1, description="Sequences per forward/backward (gradient accumulation)."
    )
    mini_batches: int = Field(
        1, ge=1, description="Optimizer steps per batch; >1 makes later ones off-policy (clip)."
    )


class CheckpointConfig(_Section):
    """Checkpoints that resume exactly."""

    dir: str | None = Field(None, description="Where checkpoints go; default <output_dir>/checkpoints.")
    interval: int = Field(50, ge=0, description="Save every N steps (and at the end); 0: only at the end.")
    keep: int = Field(3, ge=1, description="Newest checkpoints kept on disk.")
    resume: str = Field("auto", description="'auto' (latest in dir if any), 'never', or a checkpoint folder.")


class EvalConfig(_Section):
    """Periodic evaluation on held-out tasks (no update)."""

    interval: int = Field(0, ge=0, description="Evaluate every N steps; 0 disables.")
    split: Literal["train", "val", "test"] = Field("val", description="Split evaluated.")
    group_size: int = Field(4, ge=1, description="Rollouts per eval task.")
    max_tasks: int | None = Field(None, ge=1, description="Evaluate at most this many tasks (first by key).")


class WandbConfig(_Section):
    """Weights & Biases, used only when `project` is set (and wandb is installed)."""

    project: str | None = Field(None, description="W&B project; None disables W&B.")
    entity: str | None = Field(None, description="W&B team or user.")
    run_name: str | None = Field(None, description="Run name; default the output folder's name.")
    mode: Literal["online", "offline"] = Field(
        "online", description="'offline' writes locally for later sync."
    )


class LoggingConfig(_Section):
    """Per-step metrics."""

    metrics_file: str = Field("metrics.jsonl", description="JSONL file under output_dir, one line per step.")
    wandb: WandbConfig = Field(default_factory=WandbConfig)
    tensorboard: bool = Field(
        False,
        description="Also write the metrics as TensorBoard event files in output_dir "
        "(pip install 'enterprise-gym[tensorboard]'; view with tensorboard --logdir <output_dir>).",
    )


class RayConfig(_Section):
    """Spread rollouts and the learner over a Ray cluster."""

    enabled: bool = Field(False, description="Use Ray; False runs everything in this process.")
    address: str | None = Field(
        None, description="Cluster address ('auto', 'ray://head:10001'); None starts a local Ray."
    )
    rollout_workers: int = Field(2, ge=1, description="Rollout worker actors (CPU nodes with Docker).")
    worker_cpus: float = Field(1.0, gt=0, description="CPUs reserved per rollout worker.")
    worker_resources: dict[str, float] = Field(
        default_factory=dict,
        description="Custom resources per rollout worker, e.g. {docker: 1} to pin to Docker nodes.",
    )
    learners: int = Field(
        1, ge=1, description="Learner actors (one per GPU); >1 all-reduces gradients (torch.distributed)."
    )
    learner_gpus: float = Field(0.0, ge=0, description="GPUs per learner actor; 0 on CPU-only clusters.")
    learner_cpus: float = Field(1.0, gt=0, description="CPUs per learner actor.")
    samplers: int = Field(
        1, ge=1, description="Sampler actors serving the gym source's policies (vLLM engines)."
    )
    sampler_gpus: float = Field(
        0.0, ge=0, description="GPUs per sampler actor (tensor_parallel_size for vLLM)."
    )


class TrainConfig(_Section):
    """Everything `egym train` needs."""

    seed: int = Field(
        0, description="Seeds sampling, curriculum and initialisation; rollouts derive from (seed, step)."
    )
    steps: int = Field(100, ge=1, description="Training steps (each: rollouts, update, weight sync).")
    output_dir: str = Field("runs/train", description="Metrics, checkpoints and the final model go here.")
    model: ModelConfig
    tasks: TasksConfig = Field(default_factory=TasksConfig)
    rollout: RolloutConfig = Field(default_factory=RolloutConfig)
    sampling: SamplingConfig = Field(default_factory=SamplingConfig)
    sampler: SamplerConfig = Field(default_factory=SamplerConfig)
    optim: OptimConfig = Field(default_factory=OptimConfig)
    loss: LossConfig = Field(default_factory=LossConfig)
    update: UpdateConfig = Field(default_factory=UpdateConfig)
    checkpoint: CheckpointConfig = Field(default_factory=CheckpointConfig)
    eval: EvalConfig = Field(default_factory=EvalConfig)
    logging: LoggingConfig = Field(default_factory=LoggingConfig)
    ray: RayConfig = Field(default_factory=RayConfig)

    @property
    def checkpoint_dir(self) -> Path:
        return Path(self.checkpoint.dir) if self.checkpoint.dir else Path(self.output_dir) / "checkpoints"


def build_config(
    data: dict[str, Any], overrides: list[str] | None = None, *, where: str = "config"
) -> TrainConfig:
    """Validate a mapping (after overrides) into a TrainConfig; ConfigError names the first bad key."""
    data = apply_overrides(data, overrides or [])
    try:
        return TrainConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"{where}: {describe_validation_error(exc, model=TrainConfig)}") from None


def load_config(path: str | Path, overrides: list[str] | None = None) -> TrainConfig:
    """Read a YAML training config and apply `key=value` overrides."""
    return build_config(read_yaml(path), overrides, where=str(path))
