"""Budgets and ceilings of a research turn, and the notices the retrieval tools attach.

Pure functions over plain values so the rules are tested without a model: the first pass gets
``max_retrieval_tools`` calls, ``hard_word_ceiling`` words and ``max_rerank_chunks`` chunks;
each granted extension adds the three increments at once (up to ``max_extensions``).
A retrieval call one short of the budget carries a soft warning, a call at or past 80% of the
word ceiling carries one too, and a call past either limit is blocked (circuit breaker) with a
notice telling the model to conclude.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from services.common.app_config import ZocratesConfig

WORD_WARNING_SHARE = 0.8


@dataclass(frozen=True, slots=True)
class Harness:
    """A research turn's budgets and checkpoint rules, from ``zocrates_config.json`` (the deep
    research keys of ``docs/configuration.md``; how a turn spends them: ``docs/research.md``)."""

    enabled: bool = True
    budget: int = 10
    word_ceiling: int = 7500
    max_chunks: int = 15
    budget_increment: int = 5
    word_increment: int = 3750
    chunk_increment: int = 5
    max_extensions: int = 2

    @classmethod
    def from_config(cls, config: ZocratesConfig) -> Harness:
        return cls(
            enabled=config.hitl_enabled,
            budget=config.max_retrieval_tools,
            word_ceiling=config.hard_word_ceiling,
            max_chunks=config.max_rerank_chunks,
            budget_increment=config.extension_call_increment,
            word_increment=config.extension_word_increment,
            chunk_increment=config.extension_chunk_increment,
            max_extensions=config.max_extensions,
        )

    def initial(self) -> Ceilings:
        return Ceilings(self.budget, self.word_ceiling, self.max_chunks)


@dataclass(frozen=True, slots=True)
class Ceilings:
    budget: int
    word_ceiling: int
    max_chunks: int

    def extended(self, harness: Harness) -> Ceilings:
        """All three limits grow together: breadth, depth and what reaches the synthesizer."""
        return Ceilings(
            self.budget + harness.budget_increment,
            self.word_ceiling + harness.word_increment,
            self.max_chunks + harness.chunk_increment,
        )

    def to_dict(self) -> dict[str, int]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Ceilings:
        return cls(int(data["budget"]), int(data["word_ceiling"]), int(data["max_chunks"]))


@dataclass(frozen=True, slots=True)
class BudgetCheck:
    """Whether a retrieval call may run, and what to tell the model alongside its result."""

    allowed: bool
    calls: int  # calls counted so far, this one included when allowed
    notice: str | None = None


def check_and_increment_tool_budget(calls: int, words: int, ceilings: Ceilings) -> BudgetCheck:
    """Count one retrieval call against ``ceilings`` given ``calls`` and ``words`` so far."""
    if calls >= ceilings.budget:
        return BudgetCheck(
            False,
            calls,
            f"BLOCKED: the retrieval budget of {ceilings.budget} calls is used up. Do not call "
            "retrieval tools again. Call conclude_search now with what you found and the "
            "aspects you could not cover.",
        )
    if words >= ceilings.word_ceiling:
        return BudgetCheck(
            False,
            calls,
            f"BLOCKED: {words} words retrieved, the ceiling is {ceilings.word_ceiling}. Call "
            "conclude_search now with what you found and the aspects you could not cover.",
        )
    calls += 1
    notices = []
    remaining = ceilings.budget - calls
    if remaining <= 1:
        notices.append(
            f"WARNING: {remaining} retrieval call{'s' if remaining != 1 else ''} left of "
            f"{ceilings.budget}. Make it count, then call conclude_search."
        )
    if words >= WORD_WARNING_SHARE * ceilings.word_ceiling:
        notices.append(
            f"WARNING: {words} of {ceilings.word_ceiling} words retrieved. Prefer targeted "
            "searches over reading whole sections, and conclude soon."
        )
    return BudgetCheck(True, calls, " ".join(notices) or None)


def word_trigger(words: int, ceilings: Ceilings) -> bool:
    """The reactive trigger's word condition: 80% of the ceiling reached."""
    return words >= WORD_WARNING_SHARE * ceilings.word_ceiling


def should_checkpoint(
    harness: Harness, gaps: list[str], extension_count: int, extension_requested: bool
) -> bool:
    """The dual trigger with its smart skip.

    A checkpoint is offered when HITL is on, extensions remain, and the pass left gaps: either
    the subagent asked for an extension (proactive) or concluded with unaddressed aspects
    (reactive, usually after exhausting calls or words). No gaps: synthesize without asking.
    """
    if not harness.enabled or extension_count >= harness.max_extensions:
        return False
    return bool(gaps) or extension_requested
