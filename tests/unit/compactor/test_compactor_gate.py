"""The envelope gate (docs/compaction.md, step 1)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from services.common.app_config import ZocratesConfig
from services.common.compaction_gate import effective_min_turns, evaluate_gate


def _config(**changes: Any) -> ZocratesConfig:
    return ZocratesConfig(**changes)


def test_envelope_gate_skips_when_few_turns() -> None:
    config = _config()  # min_turns 4, K 2

    decision = evaluate_gate(3, 80_000, config)

    assert (decision.outcome, decision.reason) == ("skip", "few_turns")
    assert not decision.opens
    assert evaluate_gate(4, 80_000, config).outcome == "probe"


def test_envelope_gate_disambiguation_clamping(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="services.common.compaction_gate"):
        assert effective_min_turns(1, 2) == 3
    assert "clamping effective_min_turns to 3" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="services.common.compaction_gate"):
        assert effective_min_turns(4, 2) == 4
        assert effective_min_turns(1, -5) == 1  # K is never negative: K=0, 1 > 0
    assert caplog.text == ""

    config = _config(adaptive_compaction_min_turns=2, adaptive_compaction_retention_turns=2)
    decision = evaluate_gate(2, 50_000, config)
    assert decision.effective_min_turns == 3
    assert (decision.outcome, decision.reason) == ("skip", "few_turns")
    assert evaluate_gate(3, 50_000, config).outcome == "probe"


def test_envelope_gate_skips_when_tokens_below_floor() -> None:
    config = _config()

    decision = evaluate_gate(10, 29_999, config)

    assert (decision.outcome, decision.reason) == ("skip", "below_floor")
    assert evaluate_gate(10, 30_000, config).outcome == "probe"


def test_envelope_gate_skips_without_a_token_count() -> None:
    assert evaluate_gate(10, None, _config()).reason == "no_tokens"


def test_envelope_gate_skips_when_disabled() -> None:
    decision = evaluate_gate(50, 500_000, _config(enable_adaptive_compaction=False))

    assert (decision.outcome, decision.reason) == ("skip", "disabled")


def test_hard_backstop_forces_compress() -> None:
    config = _config()

    assert evaluate_gate(5, 99_999, config).outcome == "probe"
    decision = evaluate_gate(5, 100_000, config)
    assert (decision.outcome, decision.reason) == ("force", "ceiling")
    assert decision.opens
    # The backstop sits behind the envelope: too few turns still skip.
    assert evaluate_gate(3, 250_000, config).reason == "few_turns"
