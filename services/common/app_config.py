"""``zocrates_config.json``: the user-editable settings, single source of truth.

It lives in ``<zotero data dir>/zocrates-data/``. Reading it back-fills missing keys with their
defaults on disk (under a FileLock, written atomically), so the file always documents every
setting. A value that fails validation is rejected with a message naming the key and the
file, and nothing is written. Unknown keys in the file are kept (a newer version may have
written them) but refused through ``update``.

The preferences pane edits it through ``GET/PUT /config``; deployments may override keys with
``ZOCRATES_*`` environment variables, which the services read separately. The gateway reads
the file of the registered Zotero data directory and sends it with each turn and compaction
(``config_json`` in the agent's and compactor's requests), so every service follows
``/register`` (:func:`config_from_json`).

The specification writes the research budgets as a ``search_harness`` block
(``{"search_harness": {"max_retrieval_tools": 10, ...}}``): such a block is applied, its keys
moved to the top level where every other setting is (the file is rewritten so), and a key the
block does not know is refused by name.
"""

from __future__ import annotations

import json
import logging
import os
import pathlib
import tempfile
from typing import Any, Literal, get_origin

from filelock import FileLock
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from services.common.errors import InvalidArgument

logger = logging.getLogger(__name__)

CONFIG_FILE_NAME = "zocrates_config.json"

# How hard a model thinks before it answers (services/common/thinking.py maps it per provider).
ThinkingSetting = Literal["off", "low", "medium", "high"]
# Whether the tool-using roles' models call tools (services/agent/research/capabilities.py).
ToolCalling = Literal["auto", "on", "off"]


class ZocratesConfig(BaseModel):
    """Every key of zocrates_config.json. Descriptions are the documentation."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    session_retention_days: int | None = Field(
        default=180,
        ge=0,
        description=(
            "Sessions not updated for this many days are deleted by maintenance. "
            "0 or null disables the age pass."
        ),
    )
    max_saved_sessions: int | None = Field(
        default=100,
        ge=0,
        description=(
            "At most this many sessions are kept; maintenance deletes the least recently "
            "updated beyond it. 0 or null disables the count pass."
        ),
    )

    # Deep research: a turn's budgets and checkpoints (services/agent/research/harness.py,
    # docs/research.md).
    hitl_enabled: bool = Field(
        default=True,
        description=(
            "Pause a research turn at a checkpoint when the search found gaps or ran out of "
            "budget, so the user can grant an extension or synthesize now. false: synthesize "
            "from what the first pass found."
        ),
    )
    max_retrieval_tools: int = Field(
        default=10, ge=1, le=100, description="Retrieval tool calls allowed in the first pass."
    )
    hard_word_ceiling: int = Field(
        default=7500,
        ge=500,
        le=200_000,
        description="Words of retrieved text allowed in the first pass (about 10,000 tokens).",
    )
    max_rerank_chunks: int = Field(
        default=15, ge=1, le=200, description="Evidence chunks the synthesizer receives."
    )
    extension_call_increment: int = Field(
        default=5, ge=1, le=100, description="Tool calls added by each granted extension."
    )
    extension_word_increment: int = Field(
        default=3750, ge=100, le=200_000, description="Words added by each granted extension."
    )
    extension_chunk_increment: int = Field(
        default=5, ge=0, le=200, description="Evidence chunks added by each granted extension."
    )
    max_extensions: int = Field(
        default=2, ge=0, le=5, description="Extensions a single turn may be granted."
    )
    # Models, per role: "offline" (built in, no key), a Gemini name ("gemini-2.5-flash"), or a
    # LiteLLM name ("openrouter/...", "ollama_chat/...", "openai/..." with model_api_base).
    coordinator_model: str = Field(
        default="offline", description="Model of the coordinator (the chat itself)."
    )
    subagent_model: str = Field(
        default="offline", description="Model of the search subagent (retrieval passes)."
    )
    synthesizer_model: str = Field(
        default="offline", description="Model that writes the cited answer."
    )
    synthesizer_thinking: ThinkingSetting = Field(
        default="high",
        description=(
            "How much the synthesizer thinks before it writes the answer: off, low, medium "
            "or high. Sent only to a model that can think (Gemini 2.5 and later: a thinking "
            "budget or level; a LiteLLM reasoning model: reasoning_effort); off sends nothing "
            "and leaves the model its own default (Gemini 2.5 thinks by default). Thoughts "
            "show as steps, never in the answer."
        ),
    )
    model_api_base: str = Field(
        default="",
        description=(
            "Base URL for an OpenAI-compatible or Ollama server used by LiteLLM models. "
            "API keys come from the environment (GOOGLE_API_KEY, OPENROUTER_API_KEY, "
            "ZOCRATES_MODEL_API_KEY), never from this file."
        ),
    )
    model_tool_calling: ToolCalling = Field(
        default="auto",
        description=(
            "Whether the coordinator's and search subagent's models call tools. auto: a model "
            "served at model_api_base is probed once (one tiny request with a tool; many small "
            "local models and some servers cannot), a hosted model is trusted; off: the fixed "
            "search policy of the offline model runs the search and the model only writes the "
            "answer from the numbered evidence (the pipeline for small local models); on: "
            "trust the model without the probe."
        ),
    )
    model_context_window: int = Field(
        default=0,
        ge=0,
        le=10_000_000,
        description=(
            "Tokens the context of the models at model_api_base holds. 0: ask the server "
            "(llama.cpp, vLLM, LM Studio and Ollama say), else 4096. The answer's evidence is "
            "trimmed by rank, at sentence ends, to fit."
        ),
    )
    # Post-turn adaptive compaction (docs/compaction.md).
    enable_adaptive_compaction: bool = Field(
        default=True, description="Compact long conversations after a turn when warranted."
    )
    compaction_summarizer_model: str = Field(
        default="offline",
        description=(
            "Model that writes the rolling summary: offline (extractive, built in), a Gemini "
            "name or a LiteLLM name."
        ),
    )
    adaptive_compaction_retention_turns: int = Field(
        default=2, ge=0, le=50, description="Latest completed turns (K) kept verbatim."
    )
    adaptive_compaction_min_turns: int = Field(
        default=4,
        ge=1,
        le=1000,
        description=(
            "Completed turns before compaction is considered; raised to K+1 when it is not "
            "greater than K (adaptive_compaction_retention_turns)."
        ),
    )
    adaptive_compaction_token_floor: int = Field(
        default=30000,
        ge=0,
        description="Coordinator prompt tokens below which compaction is not considered.",
    )
    adaptive_compaction_token_ceiling: int = Field(
        default=100000,
        ge=1,
        description="Coordinator prompt tokens at which compaction is forced without the probe.",
    )
    adaptive_compaction_threshold: float = Field(
        default=0.75,
        ge=0.0,
        le=1.0,
        description="Probe probability at or above which the conversation is compacted.",
    )
    adaptive_compaction_decision_model: str = Field(
        default="local",
        description=(
            "Decision model: local (built in, no network) or a Decisions API model such as "
            "inception/mercury-decide (needs OPENROUTER_API_KEY)."
        ),
    )
    online_search_enabled: bool = Field(
        default=True,
        description=(
            "Let the coordinator search OpenAlex for literature outside the library "
            "(needs network; fails softly without it)."
        ),
    )


class ConfigError(InvalidArgument):
    default_code = "invalid_config"


def _describe(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        key = ".".join(str(p) for p in err["loc"]) or "(file)"
        parts.append(f"{key}: {err['msg']}")
    return "; ".join(parts)


# The specification's search_harness block: its keys (the flat names, and the increments by the
# specification's own names) and where each goes.
HARNESS_BLOCK = "search_harness"
_HARNESS_KEYS = {
    **{
        key: key
        for key in (
            "hitl_enabled",
            "max_retrieval_tools",
            "hard_word_ceiling",
            "max_rerank_chunks",
            "extension_call_increment",
            "extension_word_increment",
            "extension_chunk_increment",
            "max_extensions",
        )
    },
    "budget_increment": "extension_call_increment",
    "word_increment": "extension_word_increment",
    "chunk_increment": "extension_chunk_increment",
}


def lift_harness_block(raw: dict[str, Any], where: str) -> tuple[dict[str, Any], list[str]]:
    """``raw`` with its ``search_harness`` block's keys moved to the top level (the block's
    value wins over a top-level one), and what moved; ``ConfigError`` for a block that is not
    an object or holds a key no budget has. ``where`` names the file or request."""
    if HARNESS_BLOCK not in raw:
        return raw, []
    block = raw[HARNESS_BLOCK]
    if not isinstance(block, dict):
        raise ConfigError(
            f"{where}: {HARNESS_BLOCK} must be a JSON object of research budgets, such as "
            f'{{"max_retrieval_tools": 10}}; got {json.dumps(block)[:80]}.',
            code="invalid_config",
        )
    unknown = sorted(set(block) - set(_HARNESS_KEYS))
    if unknown:
        raise ConfigError(
            f"{where}: {HARNESS_BLOCK} has unknown key(s) {', '.join(unknown)}. It takes "
            f"{', '.join(_HARNESS_KEYS)}.",
            code="unknown_setting",
        )
    lifted = {k: v for k, v in raw.items() if k != HARNESS_BLOCK}
    moved = []
    for key, value in block.items():
        target = _HARNESS_KEYS[key]
        if target in lifted and lifted[target] != value:
            moved.append(f"{HARNESS_BLOCK}.{key}={value!r} (was {target}={lifted[target]!r})")
        else:
            moved.append(f"{HARNESS_BLOCK}.{key}={value!r} -> {target}")
        lifted[target] = value
    return lifted, moved


def config_from_json(text: str) -> ZocratesConfig:
    """The settings a request carries (``config_json``: the gateway's read of the file);
    ``ConfigError`` naming the key when they do not validate."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"config_json is not valid JSON ({exc.msg}).") from None
    if not isinstance(raw, dict):
        raise ConfigError("config_json must be a JSON object of settings.")
    raw, _ = lift_harness_block(raw, "config_json")
    try:
        return ZocratesConfig.model_validate(
            {k: v for k, v in raw.items() if k in ZocratesConfig.model_fields}
        )
    except ValidationError as exc:
        raise ConfigError(f"config_json: {_describe(exc)}") from None


class ConfigStore:
    """Reads and writes one ``zocrates_config.json``. Blocking: call from a thread."""

    def __init__(self, data_dir: pathlib.Path) -> None:
        self.path = data_dir / CONFIG_FILE_NAME
        self._lock = FileLock(str(self.path) + ".lock", timeout=10)

    def _read_raw(self) -> dict[str, Any]:
        if not self.path.exists():
            return {}
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8") or "{}")
        except json.JSONDecodeError as exc:
            raise ConfigError(
                f"{self.path} is not valid JSON ({exc.msg} at line {exc.lineno}). "
                "Fix or delete the file; deleting it restores the defaults."
            ) from None
        if not isinstance(raw, dict):
            raise ConfigError(f"{self.path} must hold a JSON object.")
        return raw

    def _validate(self, raw: dict[str, Any]) -> ZocratesConfig:
        known = {k: v for k, v in raw.items() if k in ZocratesConfig.model_fields}
        try:
            return ZocratesConfig.model_validate(known)
        except ValidationError as exc:
            raise ConfigError(f"{self.path}: {_describe(exc)}") from None

    def _write(self, data: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".zocrates_config.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(data, fh, indent=2, sort_keys=False)
                fh.write("\n")
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            pathlib.Path(tmp).unlink(missing_ok=True)
            raise

    def load(self) -> ZocratesConfig:
        """The validated config; missing keys are back-filled on disk."""
        with self._lock:
            raw, moved = lift_harness_block(self._read_raw(), str(self.path))
            config = self._validate(raw)
            if moved:
                logger.warning("%s: applied and moved to the top level: %s", self.path, moved)
            full = {
                **config.model_dump(),
                **{k: v for k, v in raw.items() if k not in ZocratesConfig.model_fields},
            }
            unknown = sorted(set(raw) - set(ZocratesConfig.model_fields))
            if unknown:
                logger.warning("%s has unknown keys, kept as they are: %s", self.path, unknown)
            if full != raw or moved:
                self._write(full)
            return config

    def update(self, changes: dict[str, Any]) -> ZocratesConfig:
        """Apply ``changes`` (a subset of keys; a ``search_harness`` block is taken as its keys),
        validated as a whole before anything is written."""
        changes, _ = lift_harness_block(changes, "the change")
        unknown = sorted(set(changes) - set(ZocratesConfig.model_fields))
        if unknown:
            raise ConfigError(
                f"Unknown setting(s) {', '.join(unknown)}. "
                f"Known settings: {', '.join(ZocratesConfig.model_fields)}.",
                code="unknown_setting",
            )
        with self._lock:
            raw, _ = lift_harness_block(self._read_raw(), str(self.path))
            current = self._validate(raw)
            try:
                updated = ZocratesConfig.model_validate({**current.model_dump(), **changes})
            except ValidationError as exc:
                raise ConfigError(_describe(exc)) from None
            extra = {k: v for k, v in raw.items() if k not in ZocratesConfig.model_fields}
            self._write({**updated.model_dump(), **extra})
            return updated


def config_reference() -> list[tuple[str, str, Any, str]]:
    """(key, type, default, description) for every key, for docs and ``--help``."""
    rows = []
    for name, field in ZocratesConfig.model_fields.items():
        annotation = getattr(field.annotation, "__name__", None) or str(field.annotation)
        if get_origin(field.annotation) is Literal:  # its values, not just "Literal"
            annotation = str(field.annotation)
        rows.append(
            (name, annotation.replace("typing.", ""), field.default, field.description or "")
        )
    return rows
