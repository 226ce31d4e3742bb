"""The local decision model with the real bge-small embedder, served by the real reranker
service (in-process gRPC), calibrated on the labelled dialogues of ``dialogues.py``."""

from __future__ import annotations

from collections.abc import AsyncIterator

import numpy as np
import pytest

from services.common.adk.turns import Turn
from services.compactor.decision import Decision
from services.compactor.local_decision import LocalDecisionModel, question_cues
from services.compactor.turns import DecisionState, decision_state
from services.reranker.client import RerankerClient
from services.reranker.models import CrossEncoder, Embedder
from tests.support.stack import running_reranker
from tests.unit.compactor.dialogues import DIALOGUES, LabelledDialogue

THRESHOLD = 0.75


@pytest.fixture
async def reranker(
    cross_encoder: CrossEncoder, embedder: Embedder
) -> AsyncIterator[RerankerClient]:
    async with running_reranker(
        load_reranker=lambda: cross_encoder, load_embedder=lambda: embedder
    ) as server:
        client = RerankerClient(server.runtime.address)
        try:
            yield client
        finally:
            await client.close()


def _state(dialogue: LabelledDialogue) -> DecisionState:
    turns = [
        Turn(f"e-{i}", user, assistant, float(i), float(i) + 0.5)
        for i, (user, assistant) in enumerate(dialogue.turns)
    ]
    return decision_state(turns)


async def test_calibration_on_labelled_research_dialogues(reranker: RerankerClient) -> None:
    model = LocalDecisionModel(lambda texts: reranker.embed(texts))
    assert len(DIALOGUES) >= 24
    assert {d.label for d in DIALOGUES} == {"compress", "continue"}

    rows: list[tuple[LabelledDialogue, float, Decision]] = []
    for dialogue in DIALOGUES:
        decision = await model.decide(_state(dialogue), threshold=THRESHOLD)
        assert decision.probability is not None, decision.reason
        rows.append((dialogue, decision.probability, decision))

    correct = [(d.label == "compress") == (r.verdict == "COMPRESS") for d, _, r in rows]
    accuracy = sum(correct) / len(rows)
    compress_p = [p for d, p, _ in rows if d.label == "compress"]
    continue_p = [p for d, p, _ in rows if d.label == "continue"]
    brier = float(np.mean([(p - (d.label == "compress")) ** 2 for d, p, _ in rows]))
    print(f"\nlocal decision model on {len(rows)} labelled dialogues (threshold {THRESHOLD}):")
    for (dialogue, p, decision), ok in zip(rows, correct, strict=True):
        s = decision.signals
        print(
            f"  {'ok  ' if ok else 'MISS'} {dialogue.label:8} p={p:.3f} "
            f"sim={s['similarity']:.3f} pivot={s['pivot']:.0f} stuck={s['stuck']:.0f} "
            f"drill={s['drill']:.0f} anaphora={s['anaphora']:.0f} thin={s['thin']:.2f} "
            f"{'(hard) ' if dialogue.hard else ''}{dialogue.name}"
        )
    print(
        f"  accuracy {accuracy:.3f}; Brier {brier:.3f}; lowest compress p "
        f"{min(compress_p):.3f}; highest continue p {max(continue_p):.3f}"
    )

    assert accuracy >= 0.85
    assert max(continue_p) < 0.9
    assert all(r.model == "local" and r.threshold == THRESHOLD for _, _, r in rows)


async def test_embeddings_come_from_the_reranker_service(
    reranker: RerankerClient, embedder: Embedder
) -> None:
    texts = ["Lithium plating on graphite anodes", "Coral bleaching thresholds"]
    served = await reranker.embed(texts)
    assert served.shape == (2, embedder.dim)
    assert np.allclose(served, embedder.embed(texts), atol=1e-5)
    assert np.allclose(np.linalg.norm(served, axis=1), 1.0, atol=1e-4)


async def test_verdict_follows_the_configured_threshold(embedder: Embedder) -> None:
    async def embed(texts: list[str]) -> np.ndarray:
        return embedder.embed(texts)

    model = LocalDecisionModel(embed)
    pivot = next(d for d in DIALOGUES if d.name == "battery_anodes_to_flow_battery_cost")

    strict = await model.decide(_state(pivot), threshold=0.999)
    lenient = await model.decide(_state(pivot), threshold=0.5)

    assert strict.probability == lenient.probability
    assert (strict.verdict, lenient.verdict) == ("CONTINUE", "COMPRESS")


async def test_embedder_failure_fails_open() -> None:
    async def broken(texts: list[str]) -> np.ndarray:
        raise ConnectionError("reranker is down")

    pivot = next(d for d in DIALOGUES if d.label == "compress")
    decision = await LocalDecisionModel(broken).decide(_state(pivot), threshold=THRESHOLD)

    assert (decision.verdict, decision.probability) == ("CONTINUE", None)
    assert decision.reason.startswith("embedding_unavailable: ConnectionError")


async def test_nothing_earlier_means_continue() -> None:
    async def never(texts: list[str]) -> np.ndarray:
        raise AssertionError("no embedding needed")

    state = DecisionState("", "**User**: Q?\n**Assistant**: A.")
    decision = await LocalDecisionModel(never).decide(state, threshold=THRESHOLD)

    assert (decision.verdict, decision.probability) == ("CONTINUE", 0.0)


def test_cues() -> None:
    assert question_cues("No, I meant the 2013 paper.").stuck
    assert question_cues("Can you clarify what shrinkage means?").stuck
    assert question_cues("I still don't understand the interval.").stuck
    assert question_cues("In that paper, what was the sample?").drill
    assert question_cues("Tell me more about the SEI layer").drill
    assert question_cues("And the third?").drill
    assert question_cues("Why is it slower?").anaphora
    assert question_cues("Different question: what is temperature scaling?").pivot
    back_reference = question_cues("Another question about the same trial: dropouts?")
    assert back_reference.drill and not back_reference.pivot
    plain = question_cues("What thresholds trigger coral bleaching in the Great Barrier Reef?")
    assert not (plain.stuck or plain.drill or plain.anaphora or plain.pivot)


def test_paper_shift_counts_the_latest_turns_new_papers() -> None:
    from services.compactor.local_decision import paper_shift

    earlier = [("lmer?", "Fitting LMMs (GQ53K66Z) p. 24: ..."), ("brms?", "brms (LKT3XQKT) p. 6")]
    assert paper_shift(earlier, [("sandwich?", "Sandwich (LRRIKN4N) p. 3")]) == 1.0
    assert paper_shift(earlier, [("priors?", "brms (LKT3XQKT) p. 9, sandwich (LRRIKN4N)")]) == 0.5
    assert paper_shift(earlier, [("chat", "No papers named here.")]) == 0.0
    # Words in capitals are not item keys: a key mixes letters and digits.
    assert paper_shift([("q", "ABCDEFGH")], [("q", "IJKLMNOP")]) == 0.0
