"""Which query words keyword search keeps on a large library."""

from __future__ import annotations

from services.library import terms


def test_small_libraries_keep_every_word() -> None:
    words = ["model", "optimizer", "mixed", *(f"w{i}" for i in range(12))]
    assert terms.select_words(words, {"model": 900}, total=1000) == words


def test_large_libraries_drop_common_words_and_keep_the_rarest_first() -> None:
    total = 100_000
    df = {"model": 58_000, "linear": 33_000, "optimizer": 4_000, "bobyqa": 300, "mixed": 5_000}
    kept = terms.select_words(["model", "linear", "optimizer", "bobyqa", "mixed"], df, total)
    assert kept == ["bobyqa", "optimizer", "mixed"]  # "linear" is past the posting budget


def test_the_posting_budget_bounds_a_query_however_large_the_library() -> None:
    total = 1_000_000
    df = {"bobyqa": 40, "optimizer": 9_000, "mixed": 30_000, "linear": 45_000, "model": 60_000}
    words = ["model", "linear", "mixed", "optimizer", "bobyqa"]
    # 40 + 9,000 + 30,000 fit the budget of 40,000 postings; "linear" would not.
    assert terms.POSTING_BUDGET == 40_000
    assert terms.select_words(words, df, total) == ["bobyqa", "optimizer", "mixed"]
    # The two rarest are kept whatever they cost.
    common = {"model": 200_000, "linear": 210_000, "mixed": 220_000}
    assert terms.select_words(["model", "linear", "mixed"], common, total) == ["model", "linear"]


def test_a_query_of_only_common_words_keeps_its_two_rarest() -> None:
    df = {"the": 97_000, "model": 58_000, "data": 70_000}
    assert terms.select_words(["the", "model", "data"], df, 100_000) == ["model", "data"]


def test_at_most_twenty_words() -> None:
    words = [f"w{i}" for i in range(20)]
    assert len(terms.select_words(words, {}, 100_000)) == terms.MAX_QUERY_WORDS


def test_tokens_split_like_unicode61() -> None:
    assert terms.tokens_in_order("Derivative-free BOBYQA, l'optimiseur n°2") == [
        "derivative",
        "free",
        "bobyqa",
        "l",
        "optimiseur",
        "n",
        "2",
    ]
    counts = terms.document_frequencies(["a b b", "b c"])
    assert counts == {"a": 1, "b": 2, "c": 1}


def test_counts_are_by_index_term_as_the_index_stems_them() -> None:
    counts = terms.document_frequencies(["Mixed models", "a model, modelled", "naïve Bayes"])
    assert counts["model"] == 2 and "models" not in counts and counts["naiv"] == 1
    assert terms.index_terms(["modelled", "Regressions", "naïve"]) == ["model", "regress", "naiv"]
    assert terms.index_terms([]) == []
