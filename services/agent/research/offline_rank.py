"""The evidence's order for the offline synthesizer: each passage by its best sentence.

The offline synthesizer quotes sentences, and scores every candidate sentence of its evidence
with the cross-encoder (``offline_answer``). Ranking the passages first with a pass of their
own (up to 512 tokens each) took as long again, for an order the answer does not use: replayed
on the answer benchmark, the offline answers are the same in any order of their evidence
(docs/benchmarks.md, "Offline turn latency"); the ranking only chooses which pieces reach the
synthesizer. So the passages are ranked by their best sentence (MaxP), scored exactly as the
synthesizer will score it (the same part of the question, the same text): the reranker
service keeps those scores, and the synthesizer's own pass is answered from them. One
cross-encoder pass per part instead of two.

Each part of the question ranks the passages of its papers; the parts' rankings are
interleaved, as the passage ranking interleaves the queries that found them.
"""

from __future__ import annotations

from typing import Any

from services.agent.research import evidence as ev
from services.agent.research.offline_answer import Scorer, cross_encoder_text, penalty
from services.agent.research.offline_questions import question_parts
from services.agent.research.offline_sentences import candidate_sentences, parse_blocks

NO_SENTENCE = -100.0  # a passage with nothing quotable (a table, code): after every other


async def rank_by_sentences(
    request: str, evidence: list[dict[str, Any]], scorer: Scorer
) -> list[tuple[str, float, int]]:
    """``evidence`` as ``(id, score, words)``, best first: a passage's score is the best score
    of its quotable sentences for a part of ``request``. Raises what ``scorer`` raises."""
    if not evidence:
        return []
    numbered = ev.number_evidence(evidence)
    blocks = parse_blocks(ev.evidence_blocks(numbered))
    by_n = {p["n"]: p for p in numbered}
    sentences = {b.n: candidate_sentences([b]) for b in blocks}
    rankings: list[list[tuple[str, float, int]]] = []
    for part in question_parts(request, blocks):
        own = [b for b in blocks if part.papers is None or b.key in part.papers]
        pairs = [(f"{b.n}:{s.id}", cross_encoder_text(s)) for b in own for s in sentences[b.n]]
        scores = dict(await scorer(part.query, pairs)) if pairs else {}
        ranking = []
        for b in own:
            best = max(
                (scores[f"{b.n}:{s.id}"] - penalty(s) for s in sentences[b.n]),
                default=NO_SENTENCE,
            )
            piece = by_n[b.n]
            ranking.append((str(piece["id"]), best, int(piece.get("words") or 0)))
        ranking.sort(key=lambda r: -r[1])
        rankings.append(ranking)
    ranked = ev.interleave(rankings)
    # Passages no part could use (another paper than the parts name): last, as retrieved.
    seen = {r[0] for r in ranked}
    ranked += [
        (str(p["id"]), NO_SENTENCE, int(p.get("words") or 0))
        for p in numbered
        if str(p["id"]) not in seen
    ]
    return ranked
