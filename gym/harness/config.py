"""The harness's one config model (with its parts), loadable from YAML and overridable with dotted keys."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator

from core.errors import ConfigError
from core.strict import StrictModel
from core.validation import describe_validation_error
from gym.harness.coworker_model import CoworkerModelConfig
from gym.harness.prompt import PromptStyle
from gym.tasks import MAX_TURNS, TIME_LIMIT_S, TOOL_TIMEOUT_S, Limits, Task


class FaultConfig(StrictModel, allow_inf_nan=False):
    """Injected app failures, to train robustness. Off unless `rate` > 0."""

    rate: float = Field(0.0, ge=0, le=1, description="Fraction of MCP tool calls that fail.")
    seed: int = Field(0, description="Same seed and same call sequence -> same faults.")
    servers: list[str] | None = Field(None, description="Servers whose calls may fail (default: all).")


class ContextConfig(StrictModel, allow_inf_nan=False):
    """When and how the transcript is compacted to fit the model's window."""

    window: int | None = Field(
        None,
        ge=256,
        le=10_000_000,
        description="Model context window in tokens (default: the policy's, if any).",
    )
    reserve_tokens: int = Field(
        1024, ge=0, le=1_000_000, description="Tokens kept free for the model's reply."
    )
    keep_recent_turns: int = Field(
        4, ge=1, le=MAX_TURNS, description="Latest assistant turns kept verbatim when possible."
    )
    summarizer: Literal["auto", "policy", "truncate"] = Field(
        "auto",
        description="'policy': the policy writes the summary; 'truncate': deterministic; "
        "'auto': the policy when it can summarise, else truncate.",
    )
    trimmed_output_chars: int = Field(
        300, ge=0, le=1_000_000, description="Characters kept of an older tool output when trimmed."
    )


class LevelLimits(StrictModel, allow_inf_nan=False):
    """Caps on the episodes of one family level: they lower the other limits, never raise them."""

    max_turns: int | None = Field(None, ge=1, le=MAX_TURNS, description="At most this many assistant turns.")
    max_new_tokens: int | None = Field(
        None,
        ge=1,
        le=1_000_000,
        description="At most this many new tokens a turn (policies that generate here: hf, vllm).",
    )


class HarnessConfig(StrictModel, allow_inf_nan=False):
    """How one episode is run. Limits default to the task's own."""

    max_turns: int | None = Field(None, ge=1, le=MAX_TURNS, description="Override task.limits.max_turns.")
    time_limit_s: float | None = Field(
        None, ge=TIME_LIMIT_S[0], le=TIME_LIMIT_S[1], description="Override task.limits.time_limit_s."
    )
    tool_timeout_s: float | None = Field(
        None, ge=TOOL_TIMEOUT_S[0], le=TOOL_TIMEOUT_S[1], description="Override task.limits.tool_timeout_s."
    )
    output_cap_chars: int = Field(
        30_000, ge=1000, le=10_000_000, description="Longest tool output shown to the model."
    )
    workdir: str = Field("/workspace", description="Where the shell starts.")
    mcp_servers: dict[str, list[str]] | None = Field(
        None, description="Server name -> command; default: the servers of the task's apps."
    )
    context: ContextConfig = Field(default_factory=ContextConfig)
    faults: FaultConfig = Field(default_factory=FaultConfig)
    coworkers: CoworkerModelConfig = Field(
        default_factory=CoworkerModelConfig,
        description="Whether a model rewords the coworkers' replies (docs/coworkers.md); the rules decide them.",
    )
    prompt: PromptStyle = Field(
        "full",
        description="'compact': a short system prompt and tool list (each tool's first clause and required "
        "arguments), for small models; use the same setting for SFT data, training and evaluation.",
    )
    limits_by_level: dict[int, LevelLimits] = Field(
        default_factory=dict,
        description="Caps per family level, e.g. {0: {max_turns: 4, max_new_tokens: 256}}; "
        "hand-written tasks have no level.",
    )

    @field_validator("limits_by_level", mode="before")
    @classmethod
    def _one_entry_per_level(cls, value: Any) -> Any:
        """YAML reads `0:` as a number, a dotted override (`limits_by_level.0.max_turns=4`) as text: the
        same level, merged in order, so an override on the command line changes what the file set."""
        if not isinstance(value, dict):
            return value
        merged: dict[str, Any] = {}
        for level, caps in value.items():
            before = merged.get(str(level))
            merged[str(level)] = (
                {**before, **caps} if isinstance(before, dict) and isinstance(caps, dict) else caps
            )
        return merged

    def level_limits(self, task: Task) -> LevelLimits:
        """The caps of the task's family level (none for a hand-written task or an uncapped level)."""
        from gym.families import family_level

        found = family_level(task.key)
        return self.limits_by_level.get(found[1], LevelLimits()) if found else LevelLimits()

    def limits_for(self, task: Task) -> Limits:
        base = task.limits
        turns = self.max_turns or base.max_turns
        cap = self.level_limits(task).max_turns
        return Limits(
            max_turns=min(turns, cap) if cap else turns,
            time_limit_s=self.time_limit_s or base.time_limit_s,
            tool_timeout_s=self.tool_timeout_s or base.tool_timeout_s,
        )


def harness_config(value: HarnessConfig | dict[str, Any] | None, *, where: str = "harness") -> HarnessConfig:
    """A HarnessConfig from itself or its fields; ConfigError naming the bad key (and the closest valid one)."""
    if isinstance(value, HarnessConfig):
        return value
    try:
        return HarnessConfig.model_validate(value or {})
    except ValidationError as exc:
        raise ConfigError(describe_validation_error(exc, where=where, model=HarnessConfig)) from None
