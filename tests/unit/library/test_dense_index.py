"""The dense index with its HNSW graph (usearch), on a real index file: the graph above the
threshold finds what exact search finds, new vectors are found at once and join the graph,
the saved graph is reused at the next start and checked against the index (a chunk id that
now holds another vector is re-added; a deleted chunk never comes back), and a graph of
another model or a damaged file is rebuilt. The thresholds are lowered so that a few thousand
vectors exercise what a library of a hundred thousand does."""

from __future__ import annotations

import pathlib
import subprocess
import sys
import threading

import numpy as np
import pytest

from services.library import dense as dense_module
from services.library.dense import DenseIndex
from services.library.index_store import IndexStore

DIM = 32
ITEMS = 40


def _vectors(rng: np.random.Generator, n: int) -> np.ndarray:
    centers = rng.normal(size=(25, DIM)).astype(np.float32)
    v = centers[rng.integers(0, 25, n)] + rng.normal(0, 0.6, (n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _item(i: int) -> str:
    return f"ITEM{i % ITEMS:04d}"


def _add_chunks(store: IndexStore, vectors: np.ndarray) -> np.ndarray:
    with store.writer() as conn:
        start = conn.execute("SELECT coalesce(max(id), 0) FROM chunks").fetchone()[0]
        conn.executemany(
            "INSERT INTO chunks (id, attachment_key, item_key, ordinal, page_start, page_end, "
            "section, text, word_count, embedding) VALUES (?, 'ATT', ?, 0, 1, 1, NULL, 't', 1, ?)",
            [(start + 1 + i, _item(start + i), v.tobytes()) for i, v in enumerate(vectors)],
        )
    return np.arange(start + 1, start + 1 + len(vectors), dtype=np.int64)


@pytest.fixture
def store(tmp_path: pathlib.Path) -> IndexStore:
    store = IndexStore(tmp_path / "index.sqlite3")
    _add_chunks(store, _vectors(np.random.default_rng(1), 1500))
    yield store
    store.close()


def _exact(store: IndexStore) -> DenseIndex:
    exact = DenseIndex(ann_from=10**9)
    exact.load(store)
    assert not exact.uses_graph
    return exact


def _graph(store: IndexStore, tmp_path: pathlib.Path, **options: object) -> DenseIndex:
    dense = DenseIndex(graph_path=tmp_path / "vectors.usearch", graph_tag="model-a", **options)  # type: ignore[arg-type]
    dense.load(store)
    assert dense.wait_built(60)
    return dense


def _queries(n: int = 30) -> np.ndarray:
    return _vectors(np.random.default_rng(99), n)


def _recall(a: DenseIndex, b: DenseIndex, k: int = 20, scope: set[str] | None = None) -> float:
    found = []
    for q in _queries():
        got = {c for c, _ in a.search(q, limit=k, item_keys=scope)}
        want = {c for c, _ in b.search(q, limit=k, item_keys=scope)}
        found.append(len(got & want) / len(want))
    return float(np.mean(found))


def test_the_graph_finds_what_exact_search_finds(store: IndexStore, tmp_path: pathlib.Path) -> None:
    exact = _exact(store)
    dense = _graph(store, tmp_path, ann_from=500)
    assert dense.uses_graph and dense.stats()["graph"] == 1500 and len(dense) == 1500
    assert _recall(dense, exact) >= 0.98
    q = _queries(1)[0]
    # Candidates are rescored with the index's float32 vectors: the scores are exact ones.
    exact_scores = dict(exact.search(q, limit=50, item_keys=None))
    for cid, score in dense.search(q, limit=20, item_keys=None):
        assert score == pytest.approx(exact_scores[cid], abs=1e-5)
    scope = {_item(3), _item(7)}
    assert dense.search(q, limit=10, item_keys=scope) == exact.search(q, limit=10, item_keys=scope)
    assert all(c % ITEMS in (4, 8) for c, _ in dense.search(q, limit=10, item_keys=scope))
    assert dense.search(q, limit=10, item_keys={"NOSUCHITEM"}) == []
    dense.close()


def test_new_vectors_are_found_at_once_then_join_the_graph(
    store: IndexStore, tmp_path: pathlib.Path
) -> None:
    dense = _graph(store, tmp_path, ann_from=500, ann_batch=100)
    fresh = _vectors(np.random.default_rng(5), 60)
    ids = _add_chunks(store, fresh)
    dense.append(ids, fresh, [_item(int(i) - 1) for i in ids])
    assert dense.search(fresh[0], limit=1, item_keys=None)[0][0] == ids[0]  # from the tail
    assert dense.has_vectors([int(ids[0]), 10**9]).tolist() == [True, False]
    assert dense.wait_built(60) and dense.stats()["tail"] == 60  # fewer than a batch wait
    more = _vectors(np.random.default_rng(6), 60)
    more_ids = _add_chunks(store, more)
    dense.append(more_ids, more, [_item(int(i) - 1) for i in more_ids])
    assert dense.wait_built(60)
    assert dense.stats() == {
        "graph": 1620,
        "tail": 0,
        "waiting": 0,
        "unchecked": 0,
        "uses_graph": True,
        "exhaustive": False,
    }
    assert dense.search(fresh[0], limit=1, item_keys=None)[0][0] == ids[0]  # now from the graph
    assert dense.search(more[-1], limit=1, item_keys=None)[0][0] == more_ids[-1]
    assert _recall(dense, _exact(store)) >= 0.98
    dense.close()


def test_crossing_the_threshold_builds_the_graph(store: IndexStore, tmp_path: pathlib.Path) -> None:
    dense = DenseIndex(graph_path=tmp_path / "vectors.usearch", graph_tag="model-a", ann_from=1600)
    dense.load(store)
    assert not dense.uses_graph  # 1,500 < 1,600: exact
    fresh = _vectors(np.random.default_rng(8), 200)
    ids = _add_chunks(store, fresh)
    dense.append(ids, fresh, [_item(int(i) - 1) for i in ids])
    assert dense.wait_built(60)
    assert dense.uses_graph and dense.stats()["graph"] == 1700
    assert _recall(dense, _exact(store)) >= 0.98
    dense.close()
    assert (tmp_path / "vectors.usearch").exists()


def test_the_saved_graph_is_reused_and_checked_against_the_index(
    store: IndexStore, tmp_path: pathlib.Path
) -> None:
    _graph(store, tmp_path, ann_from=500).close()
    saved = tmp_path / "vectors.usearch"
    assert saved.exists() and saved.stat().st_size > 1500 * DIM
    # A re-indexed paper: five chunk ids now hold other vectors, ten chunks are gone.
    changed = _vectors(np.random.default_rng(11), 5)
    with store.writer() as conn:
        for cid, v in zip(range(101, 106), changed, strict=True):
            conn.execute("UPDATE chunks SET embedding = ? WHERE id = ?", (v.tobytes(), cid))
        conn.execute("DELETE FROM chunks WHERE id BETWEEN 201 AND 210")
    reused = DenseIndex(graph_path=saved, graph_tag="model-a", ann_from=500)
    reused.load(store)
    assert reused.stats()["waiting"] == 0 and reused.stats()["graph"] == 1490  # nothing to add
    assert reused.wait_built(60)
    for cid, v in zip(range(101, 106), changed, strict=True):
        assert reused.search(v, limit=1, item_keys=None)[0][0] == cid  # re-added, found
    returned = {c for q in _queries() for c, _ in reused.search(q, limit=50, item_keys=None)}
    assert not returned & set(range(201, 211))
    assert not reused.has_vectors(list(range(201, 211))).any()
    assert _recall(reused, _exact(store)) >= 0.98
    reused.close()


def test_a_graph_of_another_model_or_a_damaged_file_is_rebuilt(
    store: IndexStore, tmp_path: pathlib.Path, caplog: pytest.LogCaptureFixture
) -> None:
    _graph(store, tmp_path, ann_from=500).close()
    other = DenseIndex(graph_path=tmp_path / "vectors.usearch", graph_tag="model-b", ann_from=500)
    other.load(store)
    assert other.stats()["graph"] == 0 and other.stats()["waiting"] == 1500
    assert other.wait_built(60) and other.stats()["graph"] == 1500
    other.close()
    (tmp_path / "vectors.usearch").write_bytes(b"not a graph" * 100)
    damaged = DenseIndex(graph_path=tmp_path / "vectors.usearch", graph_tag="model-b", ann_from=500)
    damaged.load(store)
    assert "cannot reuse the saved graph" in caplog.text
    assert damaged.wait_built(60) and _recall(damaged, _exact(store)) >= 0.98
    damaged.close()


def test_a_library_that_shrinks_below_the_threshold_goes_back_to_exact(
    store: IndexStore, tmp_path: pathlib.Path
) -> None:
    dense = _graph(store, tmp_path, ann_from=500)
    dense.close()
    with store.writer() as conn:
        conn.execute("DELETE FROM chunks WHERE id > 400")
    dense.load(store)
    assert not dense.uses_graph and len(dense) == 400
    assert not (tmp_path / "vectors.usearch").exists()
    assert _recall(dense, _exact(store)) == 1.0


def test_searches_while_the_graph_is_built_return_only_real_chunks(
    store: IndexStore, tmp_path: pathlib.Path
) -> None:
    _add_chunks(store, _vectors(np.random.default_rng(2), 6000))
    dense = DenseIndex(graph_path=tmp_path / "vectors.usearch", graph_tag="a", ann_from=500)
    errors: list[BaseException] = []
    results: list[list[tuple[int, float]]] = []

    def search() -> None:
        try:
            for q in _queries(200):
                results.append(dense.search(q, limit=10, item_keys=None))
                dense.has_vectors([1, 2, 3])
        except BaseException as exc:  # reported below
            errors.append(exc)

    dense.load(store)  # the graph fills while the thread below searches
    searcher = threading.Thread(target=search)
    searcher.start()
    searcher.join(60)
    assert dense.wait_built(60)
    assert not errors, errors
    assert all(1 <= c <= 7500 for hits in results for c, _ in hits)
    assert dense.stats()["graph"] == 7500
    dense.close()


@pytest.mark.parametrize(("target", "exhaustive"), [(0.5, False), (1.01, True)])
def test_probes_decide_between_the_graph_walk_and_a_scan(
    store: IndexStore,
    tmp_path: pathlib.Path,
    monkeypatch: pytest.MonkeyPatch,
    target: float,
    exhaustive: bool,
) -> None:
    """A graph whose probed recall misses the target is scanned instead of walked: the
    answers are then exact search's, whatever the graph's quality."""
    monkeypatch.setattr(dense_module, "CALIBRATE_FROM", 100)
    monkeypatch.setattr(dense_module, "RECALL_TARGET", target)
    dense = _graph(store, tmp_path, ann_from=500)
    assert dense.stats()["exhaustive"] is exhaustive
    assert dense.probe_recall is not None and 0.0 < dense.probe_recall <= 1.0
    if exhaustive:
        assert _recall(dense, _exact(store)) == 1.0
    else:
        assert dense.probe_recall >= target
    dense.close()


@pytest.mark.parametrize(
    "order", ["usearch.index, onnxruntime", "onnxruntime, usearch.index"], ids=["first", "second"]
)
def test_the_graph_library_and_onnxruntime_load_in_either_order(order: str) -> None:
    # usearch 2.26's compiled module, loaded before onnxruntime, crashed the process: a test
    # session that ran the dense index's tests before the reranker's died of a segfault.
    done = subprocess.run(
        [sys.executable, "-c", f"import {order}; print('loaded')"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and "loaded" in done.stdout, done.stderr[-2000:]
