"""The benchmarks' ``--check``: the comparison with the goals of docs/benchmarks.md
(bench/goals.py) and each benchmark's goals built from figures, without running the
benchmarks (the long ones take 20 minutes and more)."""

from __future__ import annotations

import importlib
import math
import pathlib
import subprocess
import sys
from collections.abc import Iterator
from types import ModuleType

import pytest

BENCH = pathlib.Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture(scope="module")
def bench() -> Iterator[None]:
    """bench/ importable as the scripts see it (they import ``goals`` and ``_stack``)."""
    sys.path.insert(0, str(BENCH))
    try:
        yield
    finally:
        sys.path.remove(str(BENCH))


def _module(name: str) -> ModuleType:
    return importlib.import_module(name)


@pytest.mark.parametrize(
    ("limit", "at_least", "value", "met"),
    [
        pytest.param(5.0, False, 4.9, True, id="under-a-ceiling"),
        pytest.param(5.0, False, 5.0, True, id="at-a-ceiling"),
        pytest.param(5.0, False, 5.01, False, id="over-a-ceiling"),
        pytest.param(0.9, True, 0.9, True, id="at-a-floor"),
        pytest.param(0.9, True, 0.89, False, id="under-a-floor"),
        pytest.param(0.9, True, None, False, id="not-measured"),
        pytest.param(5.0, False, math.nan, False, id="nan-is-not-measured"),
        pytest.param(math.nan, True, 0.5, False, id="no-limit-to-compare-with"),
    ],
)
def test_goal_met(
    bench: None, limit: float, at_least: bool, value: float | None, met: bool
) -> None:
    goals = _module("goals")
    assert goals.Goal("figure", limit, at_least=at_least).met(value) is met


def test_verdicts_name_the_figure_the_value_and_the_goal(bench: None) -> None:
    goals = _module("goals")
    resync = goals.Goal("unchanged re-sync", 5.0, " s")
    assert resync.verdict(0.01) == "met: unchanged re-sync: 0.01 s (goal: at most 5 s)"
    assert resync.verdict(7.25) == "MISSED: unchanged re-sync: 7.25 s (goal: at most 5 s)"
    recall = goals.Goal("recall", 0.98, at_least=True)
    assert recall.verdict(None) == "MISSED: recall: not measured (goal: at least 0.98)"


def test_report_exits_1_only_when_checking_and_a_goal_is_missed(
    bench: None, capsys: pytest.CaptureFixture[str]
) -> None:
    goals = _module("goals")
    fast, slow = goals.Goal("fast", 1.0, " ms"), goals.Goal("slow", 10.0, " s")
    results = [(fast, 0.5), (slow, 12.0)]
    assert goals.report(results, check=False) == 0
    assert capsys.readouterr().out == ""  # the default output is the benchmark's own
    assert goals.report(results, check=True) == 1
    out = capsys.readouterr().out
    assert "met: fast: 0.5 ms" in out and "MISSED: slow: 12 s (goal: at most 10 s)" in out
    assert "1 of 2 goals missed" in out
    assert goals.report([(fast, 0.5)], check=True) == 0
    assert goals.missed(results) == [slow.verdict(12.0)]


def _verdicts(results: list[tuple[object, float | None]]) -> list[str]:
    return [goal.verdict(value) for goal, value in results]  # type: ignore[attr-defined]


def test_answer_goals_read_the_scores(bench: None) -> None:
    answers = _module("bench_answers")
    rows = {
        "single": [{"page": True, "sentence": True}, {"page": True, "sentence": False}],
        "multi": [{"coverage": 1.0}],
        "abstain": [{"abstained": True}],
        "follow": [],
    }
    verdicts = _verdicts(answers.goals({"pipelines": {"offline": {"results": rows}}}))
    assert verdicts == [
        "met: cites the gold page (+-1), single-paper: 1 (goal: at least 0.9)",
        "MISSED: contains the gold sentence, single-paper: 0.5 (goal: at least 0.8)",
        "met: needed papers cited, multi-paper: 1 (goal: at least 0.8)",
        "met: abstains, out-of-library: 1 (goal: at least 0.95)",
        "MISSED: follow-up cites the right paper: not measured (goal: at least 0.8)",
    ]


def test_local_model_goals_compare_the_small_pipeline_with_the_offline_model(bench: None) -> None:
    answers = _module("bench_answers")
    measures = {"seconds": 12.0, "false_verified": 0, "errored": "", "sentence": True}
    offline = {
        "single": [{"page": True, **measures}, {"page": True, **measures}],
        "multi": [],
        "abstain": [],
        "follow": [],
    }
    small = {
        **offline,
        "single": [{"page": True, **measures}, {"page": False, **measures, "seconds": 75.0}],
        "abstain": [{**measures, "abstained": True, "false_verified": 1, "errored": "hung"}],
    }
    runs = {"offline": {"results": offline}, "small": {"results": small}}
    verdicts = _verdicts(answers.goals({"pipelines": runs}))[5:]
    assert verdicts == [
        "MISSED: small pipeline: gold page (+-1) as often as offline: 0.5 (goal: at least 1)",
        "MISSED: small pipeline: verified citations off their page: 1 (goal: at most 0)",
        "MISSED: small pipeline: turns errored or hung: 1 (goal: at most 0)",
        "MISSED: small pipeline: slowest turn, s: 75 (goal: at most 60)",
    ]


def test_retrieval_goals_compare_fused_rerank_with_each_single_mode(bench: None) -> None:
    retrieval = _module("bench_retrieval")
    recalls = {"keyword": (0.808, 0.865), "dense": (0.731, 0.865), "fused + rerank": (0.846, 0.923)}
    assert all(goal.met(value) for goal, value in retrieval.goals(recalls))
    worse = {**recalls, "fused + rerank": (0.8, 0.923)}
    assert [goal.met(value) for goal, value in retrieval.goals(worse)] == [False, True, True, True]
    unreranked = {k: v for k, v in recalls.items() if k != "fused + rerank"}  # --no-rerank
    assert not any(goal.met(value) for goal, value in retrieval.goals(unreranked))


def test_search_goals_hold_each_size_to_the_next_goal_size(bench: None) -> None:
    search = _module("bench_search")
    p50 = {
        (10_000, "hybrid (index only)"): 12.0,
        (10_000, "search_corpus (all)"): 20.0,
        (1_000_000, "hybrid (index only)"): 68.7,
        (1_000_000, "search_corpus (all)"): 96.4,
    }
    verdicts = _verdicts(search.goals(p50, {1_000_000: 0.97}))
    assert verdicts == [
        "met: hybrid (index only) p50 at 10,000 chunks: 12 ms (goal: at most 30 ms)",
        "met: hybrid (index only) p50 at 1,000,000 chunks: 68.7 ms (goal: at most 100 ms)",
        "met: search_corpus (all) p50 at 10,000 chunks: 20 ms (goal: at most 50 ms)",
        "MISSED: recall@20 against exact at 1,000,000 chunks: 0.97 (goal: at least 0.98)",
    ]


def test_extractor_and_reranker_goals(bench: None) -> None:
    extract = _module("bench_pdf_extract")
    fast = extract.Result("pypdfium2", 10, 1.0, 9, 0, 3000)
    slow = extract.Result("pypdf", 10, 20.0, 9, 40, 3000)
    assert all(goal.met(value) for goal, value in extract.goals([slow, fast]))
    thin = extract.Result("pypdfium2", 10, 1.0, 8, 0, 3000)
    assert [goal.met(value) for goal, value in extract.goals([slow, thin])] == [True, False]
    reranker = _module("bench_reranker")
    lagging = reranker.Workload("rerank pairs", [], None, None)
    lagging.round_ratios = [0.95, 0.85, 0.8]
    (result,) = reranker.goals([lagging])
    assert result[1] == 0.85 and not result[0].met(result[1])


@pytest.mark.parametrize("script", sorted(p.name for p in BENCH.glob("bench_*.py")))
def test_every_benchmark_has_a_check_flag(script: str) -> None:
    shown = subprocess.run(
        [sys.executable, str(BENCH / script), "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=BENCH.parent,
    )
    assert shown.returncode == 0, shown.stderr
    assert "--check" in shown.stdout
