"""The decision probe: is compacting the earlier discussion warranted after turn N?

Two models answer with the same :class:`Decision`:

- :class:`DecisionsApiClient`: a Decisions API model (``inception/mercury-decide`` on
  OpenRouter) asked the rubric (:data:`RUBRIC_INSTRUCTIONS`) as one ``noul`` question
  (``docs/compaction.md``, step 3 "Probe"). Wire format:
  ``POST {base}/api/alpha/decisions`` with ``{"model", "state", "questions"}`` and a bearer
  key; the answer is ``{"answers": {"compaction_warranted": {"type": "noul", "noul": p}}}``.
- :class:`~services.compactor.local_decision.LocalDecisionModel` (the default, no network):
  embedding similarity plus conversational cues, combined by a logistic function.

``verdict`` is ``COMPRESS`` when ``p >= threshold`` (``adaptive_compaction_threshold``).
Neither model raises: a timeout, an error or an unreadable answer is a ``CONTINUE`` with
``probability=None`` and the reason (fail open: the conversation is never disturbed).
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import httpx

from services.common.http_retry import retry_after_seconds
from services.compactor.turns import DecisionState

logger = logging.getLogger(__name__)

Verdict = Literal["COMPRESS", "CONTINUE"]
COMPRESS: Verdict = "COMPRESS"
CONTINUE: Verdict = "CONTINUE"

DEFAULT_BASE_URL = "https://openrouter.ai"
DECISIONS_PATH = "/api/alpha/decisions"
DEFAULT_DECISION_MODEL = "inception/mercury-decide"
QUESTION_ID = "compaction_warranted"

# The rubric the Decisions API model answers: a closed unit, progress or a pivot, no
# clarification loop and something substantive to summarize, all four (docs/compaction.md,
# step 3 "Probe"). The local model approximates it with embeddings and conversational cues
# (local_decision.py).
RUBRIC_INSTRUCTIONS = (
    "Task: Decide whether `earlier_discussion` should be compacted into a concise summary to "
    "preserve context space for upcoming turns.\n\nRubric:\n- CLOSED-UNIT: Did "
    "`earlier_discussion` conclude a complete sub-topic or sub-analysis?\n- PROGRESS/PIVOT: In "
    "the latter part of `earlier_discussion` or in `latest_turn`, has the user pivoted to a "
    "different research topic or advanced to a new phase?\n- NOT STUCK: Is the conversation "
    "free from an unresolved clarification or correction loop?\n- SUMMARIZABLE: Does "
    "`earlier_discussion` contain substantive information suitable for compaction?\n\n"
    "Decision Rule:\n- Compaction is WARRANTED if and only if ALL criteria are satisfied: "
    "earlier turns form a resolved unit, the conversation is advancing to new ground, there is "
    "no active confusion or clarification loop, and the earlier turns hold substantive "
    "information worth summarizing.\n- Compaction is NOT WARRANTED if the user is still "
    "actively drilling down, clarifying, or troubleshooting the exact same point, if the "
    "conversation is mid-thought, or if `earlier_discussion` holds nothing substantive to "
    "summarize.\n\nDetermine if compacting `earlier_discussion` is warranted."
)


@dataclass(frozen=True, slots=True)
class Decision:
    """One probe's answer. ``probability`` is None when the probe failed (see ``reason``)."""

    probability: float | None
    verdict: Verdict
    threshold: float
    model: str
    latency_ms: float
    reason: str
    signals: dict[str, float] = field(default_factory=dict)


class DecisionModel(Protocol):
    """Anything that answers the rubric for a decision state."""

    model: str

    async def decide(self, state: DecisionState, *, threshold: float) -> Decision: ...


def verdict_for(probability: float | None, threshold: float) -> Verdict:
    """COMPRESS at or above the threshold; CONTINUE below it or without a probability."""
    if probability is None or not math.isfinite(probability):
        return CONTINUE
    return COMPRESS if probability >= threshold else CONTINUE


def make_decision(
    probability: float | None,
    *,
    threshold: float,
    model: str,
    started: float,
    reason: str,
    signals: dict[str, float] | None = None,
) -> Decision:
    """A :class:`Decision` whose latency runs from ``started`` (``time.monotonic()``)."""
    return Decision(
        probability=probability,
        verdict=verdict_for(probability, threshold),
        threshold=threshold,
        model=model,
        latency_ms=round((time.monotonic() - started) * 1000.0, 3),
        reason=reason,
        signals=dict(signals or {}),
    )


def decisions_request(model: str, state: DecisionState) -> dict[str, Any]:
    """The JSON body of one probe."""
    return {
        "model": model,
        "state": {
            "earlier_discussion": state.earlier_discussion,
            "latest_turn": state.latest_turn,
        },
        "questions": {QUESTION_ID: {"type": "noul", "instructions": RUBRIC_INSTRUCTIONS}},
    }


def _as_probability(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    p = float(value)
    return p if math.isfinite(p) and 0.0 <= p <= 1.0 else None


def noul_probability(body: Any) -> float | None:
    """``answers["compaction_warranted"]["noul"]``: a number, or an object holding one
    (``probability``, ``p``, ``yes``, ``value``); None when the answer is missing, refused or
    outside 0..1."""
    answers = body.get("answers") if isinstance(body, dict) else None
    answer = answers.get(QUESTION_ID) if isinstance(answers, dict) else None
    if not isinstance(answer, dict):
        return _as_probability(answer)
    value = answer.get("noul", answer)
    if isinstance(value, dict):
        for key in ("probability", "p", "yes", "value"):
            if key in value:
                return _as_probability(value[key])
        return None
    return _as_probability(value)


class DecisionsApiClient:
    """The rubric probe against a Decisions API (OpenRouter's ``/api/alpha/decisions``).

    ``timeout`` bounds the whole probe, retries included. HTTP 429 and 5xx answers are retried
    up to ``max_retries`` times, after what ``Retry-After`` asks (else 0.5 s, doubling), never
    longer than ``max_retry_wait`` nor past the deadline. Every failure is a fail-open
    ``CONTINUE`` whose reason says what happened.
    """

    def __init__(
        self,
        base_url: str = DEFAULT_BASE_URL,
        *,
        api_key: str,
        model: str = DEFAULT_DECISION_MODEL,
        timeout: float = 10.0,
        max_retries: int = 2,
        max_retry_wait: float = 2.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout = timeout
        self.max_retries = max(0, max_retries)
        self.max_retry_wait = max(0.0, max_retry_wait)
        self._http = httpx.AsyncClient(
            base_url=self.base_url,
            timeout=timeout,
            transport=transport,
            headers={
                "Authorization": f"Bearer {api_key}",
                "Content-Type": "application/json",
                "Accept": "application/json",
                "User-Agent": "zocrates-compactor",
            },
        )

    async def aclose(self) -> None:
        await self._http.aclose()

    async def decide(self, state: DecisionState, *, threshold: float) -> Decision:
        started = time.monotonic()
        deadline = started + self.timeout
        body = decisions_request(self.model, state)
        url = f"{self.base_url}{DECISIONS_PATH}"
        retries = 0

        def failed(reason: str) -> Decision:
            logger.warning("Decision probe failed open (CONTINUE): %s", reason)
            return make_decision(
                None, threshold=threshold, model=self.model, started=started, reason=reason
            )

        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return failed(f"timeout: no answer from {url} within {self.timeout:g} s")
            try:
                response = await self._http.post(DECISIONS_PATH, json=body, timeout=remaining)
            except httpx.TimeoutException:
                return failed(f"timeout: no answer from {url} within {self.timeout:g} s")
            except httpx.HTTPError as exc:
                return failed(f"network_error: {type(exc).__name__}: {exc}")
            status = response.status_code
            if status == 429 or status >= 500:
                wait = retry_after_seconds(response)
                wait = min(self.max_retry_wait, wait if wait is not None else 0.5 * 2.0**retries)
                kind = "rate_limited" if status == 429 else f"http_{status}"
                if retries >= self.max_retries:
                    return failed(f"{kind}: HTTP {status} after {retries} retries")
                if time.monotonic() + wait >= deadline:
                    return failed(f"{kind}: HTTP {status}; retrying would pass the deadline")
                retries += 1
                logger.info(
                    "Decision probe got HTTP %d; retry %d/%d in %.2f s",
                    status,
                    retries,
                    self.max_retries,
                    wait,
                )
                await asyncio.sleep(wait)
                continue
            if status != 200:
                return failed(f"http_{status}: {' '.join(response.text.split())[:200]}")
            try:
                payload = response.json()
            except ValueError:
                return failed("malformed_response: the body is not JSON")
            probability = noul_probability(payload)
            if probability is None:
                return failed(
                    f"malformed_response: no {QUESTION_ID} noul probability in {str(payload)[:200]}"
                )
            return make_decision(
                probability,
                threshold=threshold,
                model=self.model,
                started=started,
                reason="ok" if retries == 0 else f"ok after {retries} retries",
            )
