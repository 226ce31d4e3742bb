"""What each role's model can do, and so which pipeline a turn runs.

A model that calls tools reliably runs its role as built: the coordinator decides when to
search, the search subagent chooses its queries and pages. A model that cannot (found by one
probe request, :func:`services.common.local_models.probe_tool_calling`, or set by
``model_tool_calling``) leaves its role to the offline model's fixed policy: the coordinator
sends every message to ``search_library`` (a research question is never answered without a
search) and the subagent searches the request and its parts and reads the best pages. The
synthesizer's model still writes the answer, from numbered evidence fitted to its context
window, with ``max_tokens`` fitting that window (:class:`grounding.WriterLimits`).

Probe results are kept per (model, server) for the life of the process; a server that could not
be reached is asked again at the next turn.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from services.agent.research.grounding import WriterLimits
from services.common.app_config import ZocratesConfig
from services.common.local_models import is_local, window_for
from services.common.local_models import probe_tool_calling as probe
from services.common.models import ROLE_MAX_TOKENS, describe_model

logger = logging.getLogger(__name__)

TOOL_ROLES = ("coordinator", "search_subagent")
# The answer's share of a small window, the rest being the evidence: 682 tokens (about 500
# words) of a 4,096-token window. A small model that loops fills whatever it is given, at
# 40-60 tokens a second on a laptop's CPU.
ANSWER_SHARE = 6

_probed: dict[tuple[str, str], bool] = {}


@dataclass(frozen=True, slots=True)
class ModelPlan:
    """Per role: whether its model runs it (False: the offline policy does), and the
    writer's limits (None when the synthesizer is the offline model)."""

    runs: dict[str, bool] = field(default_factory=dict)
    writer: WriterLimits | None = None
    max_tokens: dict[str, int] = field(default_factory=dict)
    # False when a probe could not reach its server: plan again at the next turn.
    settled: bool = True


async def calls_tools(spec: str, config: ZocratesConfig, api_key: str) -> bool | None:
    """Whether ``spec`` calls tools; None when its server could not be reached to ask."""
    setting = config.model_tool_calling
    if setting != "auto":
        return setting == "on"
    if not is_local(spec, config.model_api_base):
        return True  # a hosted model's tool calling is its provider's promise
    key = (spec, config.model_api_base)
    if key not in _probed:
        found = await probe(spec, config.model_api_base, api_key)
        if found is None:
            logger.warning("%s: its server could not be reached to probe tool calling", spec)
            return None
        _probed[key] = found
        logger.info(
            "%s %s tools: %s",
            spec,
            "calls" if found else "does not call",
            "it runs its role" if found else "the fixed search policy runs in its place",
        )
    return _probed[key]


def answer_tokens(window: int | None) -> int:
    limit = ROLE_MAX_TOKENS["synthesizer"]
    return limit if window is None else max(128, min(limit, window // ANSWER_SHARE))


async def plan_models(specs: dict[str, str], config: ZocratesConfig, api_key: str) -> ModelPlan:
    """The plan for ``specs`` (role -> model setting)."""
    runs: dict[str, bool] = {}
    settled = True
    for role in TOOL_ROLES:
        spec = specs[role]
        if describe_model(spec)["provider"] == "offline":
            runs[role] = True
            continue
        found = await calls_tools(spec, config, api_key)
        settled = settled and found is not None
        runs[role] = bool(found)
    writer = None
    max_tokens = dict(ROLE_MAX_TOKENS)
    if describe_model(specs["synthesizer"])["provider"] != "offline":
        window = await window_for(
            specs["synthesizer"], config.model_api_base, config.model_context_window
        )
        max_tokens["synthesizer"] = answer_tokens(window)
        writer = WriterLimits(context_window=window, max_tokens=max_tokens["synthesizer"])
    runs["synthesizer"] = True
    return ModelPlan(runs=runs, writer=writer, max_tokens=max_tokens, settled=settled)
