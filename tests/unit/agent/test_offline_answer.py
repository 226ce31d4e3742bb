"""The offline synthesizer's sentence handling and answer layout (the lexical fallback; the
cross-encoder path is tested against the real reranker in tests/integration)."""

from __future__ import annotations

import json
import pathlib
import re

from services.agent.research import offline_answer as oa
from services.agent.research import offline_questions as oq
from services.agent.research import offline_sentences as sents
from services.agent.research.citations import on_page, quote_before, verify, with_quotes

NOTICE = "*offline*"


def _block(n: int, body: str, *, key: str = "KEY1", title: str = "A Paper", page: int = 3,
           page_end: int | None = None) -> sents.Block:  # fmt: skip
    return sents.Block(n, "Doe (2020)", title, key, page, page_end or page, body)


def test_sentences_split_at_full_stops_but_not_after_abbreviations() -> None:
    text = (
        "The default is HC3, see e.g. Long and Ervin (2000) and Fig. 3 for details. "
        "vcovHC() computes it. A list follows: \u2022 one item here \u2022 another item."
    )
    assert sents.split_sentences(text) == [
        "The default is HC3, see e.g. Long and Ervin (2000) and Fig. 3 for details.",
        "vcovHC() computes it.",
        "A list follows:",
        "one item here",
        "another item.",
    ]


def test_program_output_lines_stay_apart_from_prose() -> None:
    text = 'Methods:\n[1] "ARSA" "BBURCG"\nSeriation orders objects so that similar ones meet.'
    assert sents.split_sentences(text)[-1] == "Seriation orders objects so that similar ones meet."


def test_a_sentence_in_two_overlapping_passages_is_a_candidate_once() -> None:
    shared = "We choose d by applying successive KPSS unit-root tests to the data."
    first = _block(1, f"Earlier text ends here with a full stop. {shared}")
    second = _block(2, f"{shared} Then the remaining parameters are chosen by the AIC.", page=4)
    texts = [s.text for s in sents.candidate_sentences([first, second])]
    assert texts.count(shared) == 1
    assert "Then the remaining parameters are chosen by the AIC." in texts


def test_fragments_references_and_formulas_are_not_quoted() -> None:
    body = (
        "ending of a sentence cut by the chunk boundary is here. "
        "Bates, D., Maechler, M. and Bolker, B. (2015). Fitting linear mixed models. "
        "x = 1 + 2 * 3 / 4 - 5 = 6 7 8 9 10. "
        "A real sentence that answers the question stands here."
    )
    texts = [s.text for s in sents.candidate_sentences([_block(1, body)])]
    assert texts == ["A real sentence that answers the question stands here."]


def test_page_marks_give_each_sentence_its_page() -> None:
    body = "The first page says this sentence here.\n[page 11]\nThe next page says that one here."
    sentences = sents.candidate_sentences([_block(1, body, page=10, page_end=11)])
    assert [(s.text[:14], s.page) for s in sentences] == [
        ("The first page", 10),
        ("The next page ", 11),
    ]


def test_a_question_is_split_only_between_its_own_questions() -> None:
    one = "When an ARIMA model is selected automatically for a seasonal series, how is d chosen?"
    assert [p.query for p in oq.question_parts(one)] == [one.rstrip("?")]
    two = (
        "Compare how glmnet and lme4 handle regularization, "
        "and what do these papers say about qubits?"
    )
    assert [p.query for p in oq.question_parts(two)] == [
        "Compare how glmnet and lme4 handle regularization",
        "what do these papers say about qubits",
    ]


def test_a_part_that_points_back_searches_with_the_first_parts_words() -> None:
    question = (
        "How can the mixing weights of latent class regressions be made to depend on "
        "covariates, and which package does the fitting of that weight model?"
    )
    parts = [p.query for p in oq.question_parts(question)]
    assert oq.with_context(parts) == [
        parts[0],
        "which package does the fitting of that weight model "
        "(mixing weights latent class regressions made depend covariates)",
    ]
    # A part of its own keeps its words; a one-part question is left as it is.
    apart = ["How does lmer choose its optimizer", "what do quantum annealers schedule"]
    assert oq.with_context(apart) == apart
    assert oq.with_context(["How is that chosen"]) == ["How is that chosen"]


def test_a_part_that_names_nothing_asks_about_what_the_first_part_names() -> None:
    question = (
        "Which numerical integration technique does mvtnorm use for multivariate normal "
        "probabilities, and how is the error estimated?"
    )
    blocks = [
        _block(1, "Randomized quasi-Monte Carlo methods.", key="MVT1",
               title="On Multivariate t and Gauss Probabilities in R (mvtnorm)"),
        _block(2, "The error rate is estimated by cross-validation.", key="ROB1",
               title="An Object-Oriented Framework for Robust Multivariate Analysis"),
    ]  # fmt: skip
    parts = oq.question_parts(question, blocks)
    assert [(p.query, p.papers) for p in parts] == [
        (parts[0].query, None),
        ("how is the error estimated", frozenset({"MVT1"})),
    ]
    assert oq.with_context([p.query for p in parts])[1] == (
        "how is the error estimated "
        "(numerical integration technique mvtnorm multivariate normal probabilities)"
    )
    # A part that names its own subject, or asks beyond the first, is its own question.
    own = "Which optimizer does lme4 use, and which other packages fit mixed models?"
    assert [p.papers for p in oq.question_parts(own, blocks)] == [None, None]
    assert oq.with_context([p.query for p in oq.question_parts(own)]) == [
        p.query for p in oq.question_parts(own)
    ]


def test_each_named_paper_gets_its_own_part_and_query() -> None:
    blocks = [
        _block(1, "text", key="LME4", title="Fitting Linear Mixed-Effects Models Using lme4"),
        _block(2, "text", key="BRMS", title="brms: An R Package for Bayesian Multilevel Models"),
        _block(3, "the glmnet package fits paths.", key="GLMN", title="Regularized Cox Regression"),
    ]
    parts = oq.question_parts("How do lme4 and brms each fit mixed models?", blocks)
    assert [(p.label, p.query, p.papers) for p in parts] == [
        ("lme4", "How do lme4 fit mixed models", frozenset({"LME4"})),
        ("brms", "How do brms fit mixed models", frozenset({"BRMS"})),
    ]
    # A name the title lacks but the text calls a package.
    assert oq.subjects_of("what does glmnet fit", blocks) == {"glmnet": frozenset({"GLMN"})}
    # One named paper is one part.
    assert len(oq.question_parts("How does lme4 fit mixed models?", blocks)) == 1


async def test_the_answer_leads_with_the_best_sentence_and_never_repeats_one() -> None:
    shared = "The number of differences d is chosen by successive KPSS unit-root tests."
    blocks = [
        _block(1, f"Seasonal patterns are stable over the years in many series. {shared}"),
        _block(2, f"{shared} Seasonal differencing uses the Canova-Hansen test instead.", page=4),
    ]
    answer = await oa.compose_answer(
        "How is the number of differences d chosen?", blocks, [], None, notice=NOTICE
    )
    lines = answer.splitlines()
    assert lines[0] == NOTICE
    assert lines[2].startswith(f'"{shared}" [1, p. 3]')
    assert answer.count(shared) == 1
    assert "# Cited Sources" in answer


async def test_nothing_that_answers_means_no_citations() -> None:
    blocks = [_block(1, "Mixed models have random effects for grouped data in this package.")]
    answer = await oa.compose_answer(
        "How does AlphaFold predict protein structures?", blocks, [], None, notice=NOTICE
    )
    assert "Your library has no evidence on this" in answer
    assert "[1," not in answer and "# Cited Sources" not in answer


def test_names_no_passage_mentions_in_any_spelling() -> None:
    text = (
        "Kleiber and Zeileis (2008) fit Tukey contrasts; the Warp-III method, S4-based classes, "
        "HC3 and the NUTS sampler in lme4."
    )
    blocks = [_block(1, text)]
    question = (
        "Do the Kleiber-Zeileis book's Tukey-type contrasts, Warp-III, S4, HC3, lme4, ADVI, "
        "NUTS or the Mann-Kendall test from the 1990s give 2 answers out of 10?"
    )
    assert oq.unmentioned_names(question, blocks) == ["ADVI", "Mann-Kendall", "1990s"]
    # The context a follow-up carries is not the user's words.
    assert oq.unmentioned_names("And ADVI? (follow-up to: What is NUTS?; about: X)", blocks) == [
        "ADVI"
    ]


async def test_a_weakly_related_passage_does_not_answer_a_question_about_something_else() -> None:
    blocks = [_block(1, "The NUTS sampler of Stan is as efficient as a well tuned HMC sampler.")]

    async def scorer(query: str, candidates: list[tuple[str, str]]) -> list[tuple[str, float]]:
        return [(cid, 2.1) for cid, _ in candidates]  # related, not an answer

    question = "How does ADVI in Stan compare with NUTS sampling in speed?"
    answer = await oa.compose_answer(question, blocks, [], scorer, notice=NOTICE)
    assert "Your library has no evidence on this" in answer
    assert "No passage the search found mentions “ADVI”." in answer
    assert "[1," not in answer
    # The same passage answers a question about what it does mention.
    answer = await oa.compose_answer(
        "How efficient is the NUTS sampler in Stan?", blocks, [], scorer, notice=NOTICE
    )
    assert '"The NUTS sampler of Stan' in answer and "[1, p. 3]" in answer

    async def strong(query: str, candidates: list[tuple[str, str]]) -> list[tuple[str, float]]:
        return [(cid, 6.0) for cid, _ in candidates]

    # A sentence that clearly answers it anyway is quoted, and the missing name is said.
    answer = await oa.compose_answer(question, blocks, [], strong, notice=NOTICE)
    assert "[1, p. 3]" in answer
    assert "**Not found in your library:** any passage that mentions “ADVI”." in answer


def test_a_heading_run_into_a_repeated_sentence_is_no_new_candidate() -> None:
    sentence = "Stock and Watson investigate the stability of 76 monthly macroeconomic series."
    blocks = [
        _block(1, f"Some earlier sentence closes here for sure. {sentence}"),
        _block(2, f"2 U.S. macroeconomic data {sentence}", page=2),
    ]
    texts = [s.text for s in sents.candidate_sentences(blocks)]
    assert texts.count(sentence) == 1 and len(texts) == 2


def test_the_tail_of_a_word_broken_across_pages_is_no_sentence() -> None:
    body = (
        "One can con-\n[page 10]\ntrol the behavior of the NUTS sampler by using the control "
        "argument. And glmnet handles ties with the Breslow approximation.\n\nglmnet is not "
        "able to perform the Efron approximation at the moment."
    )
    texts = [s.text for s in sents.candidate_sentences([_block(1, body, page=9, page_end=10)])]
    assert texts == [
        "And glmnet handles ties with the Breslow approximation.",
        "glmnet is not able to perform the Efron approximation at the moment.",
    ]


async def test_a_page_reader_moves_a_quote_to_the_page_it_is_on() -> None:
    body = (
        "The first page talks about something else entirely here. "
        "The optimizer is BOBYQA by default in this version."
    )
    block = _block(1, body, page=24, page_end=25)

    async def read_pages(key: str, first: int, last: int) -> dict[int, str]:
        assert (key, first, last) == ("KEY1", 24, 25)
        return {24: "The first page talks about something else entirely here.",
                25: "The optimizer is BOBYQA by default\nin this version."}  # fmt: skip

    answer = await oa.compose_answer(
        "Which optimizer is the default?", [block], [], None, notice=NOTICE, read_pages=read_pages
    )
    assert '"The optimizer is BOBYQA by default in this version." [1, p. 25]' in answer


def test_quotes_are_found_before_their_markers() -> None:
    answer = (
        'Direct: "BOBYQA is the default optimizer." [1, p. 24] Models converge faster [2, p. 3].'
    )
    assert quote_before(answer, answer.index("[1")) == "BOBYQA is the default optimizer."
    assert quote_before(answer, answer.index("[2")) == "Models converge faster"
    assert on_page(
        "BOBYQA is the default optimizer.",
        "... the default\noptimizer: BOBYQA is the default optimizer, ...",
    )
    assert not on_page("BOBYQA is the default optimizer.", "Nelder-Mead was used.")


async def test_citations_are_verified_against_their_pages() -> None:
    numbered = [{"n": 1, "item_key": "K", "page": 24, "page_end": 25},
                {"n": 2, "item_key": "K", "page": 3, "page_end": 3}]  # fmt: skip
    answer = '"The optimizer is BOBYQA." [1, p. 24] "Nothing like this is written." [2, p. 3]'
    cites = with_quotes(answer, [{"n": 1, "item_key": "K", "title": "", "page": 24},
                                 {"n": 2, "item_key": "K", "title": "", "page": 3}])  # fmt: skip
    pages = {24: "Intro.", 25: "The optimizer is BOBYQA.", 3: "Other words."}

    async def read_pages(key: str, first: int, last: int) -> dict[int, str]:
        return {p: t for p, t in pages.items() if first <= p <= last}

    checked = await verify(cites, numbered, read_pages)
    assert [(c["quote"], c["verified"], c.get("found_on_page")) for c in checked] == [
        ("The optimizer is BOBYQA.", False, 25),
        ("Nothing like this is written.", False, None),
    ]
    assert all(c["verified"] is None for c in await verify(cites, numbered, None))
    # A citation that only the list of sources makes quotes nothing: not checked.
    listed = with_quotes(
        answer + "\n\n# Cited Sources\n[1] Doe (2020). A Paper. Item K, p. 24.",
        [{"n": 1, "item_key": "K", "title": "", "page": 30}],
    )
    assert listed[0]["quote"] == ""
    assert (await verify(listed, numbered, read_pages))[0]["verified"] is None


def test_a_short_clause_about_the_one_before_stays_with_it() -> None:
    question = "Which tasting experiment is the running example, and what was its design?"
    assert len(oq.question_parts(question)) == 1
    broad = "How does lmer choose its optimizer, and which photonic chips implement its solver?"
    assert len(oq.question_parts(broad)) == 2


async def test_a_part_the_search_called_a_gap_is_answered_when_a_sentence_answers_it() -> None:
    question = "Why does lme4 not print p values for fixed effects?"
    blocks = [_block(1, "The lme4 package does not print p values for fixed effects on purpose.")]
    answer = await oa.compose_answer(question, blocks, [question.rstrip("?")], None, notice=NOTICE)
    assert '"The lme4 package does not print p values' in answer
    assert "Not found in your library" not in answer


def test_code_tables_name_lists_and_run_in_headings_are_not_quoted_as_such() -> None:
    body = (
        "The command would be: > fs <- Fstats(ecm.model, from = c(1990, 1), to = c(1999,6)) "
        "This returns an object. "
        "2.6 2.8 3.0 3.2 3.4 2.5 3.0 3.5 age length Figure 2: mandible data. "
        "Acciaiuoli Albizzi Barbadori Bischeri Castellani Ginori Guadagni Medici Pazzi Strozzi. "
        "Orthogonalized Gnanadesikan/Kettenring The MCD estimator poses a hard problem. "
        "Alternatively the default is to take from = 0.15 and implicitly to = 0.85."
    )
    texts = [s.text for s in sents.candidate_sentences([_block(1, body)])]
    assert texts == [
        "The MCD estimator poses a hard problem.",
        "Alternatively the default is to take from = 0.15 and implicitly to = 0.85.",
    ]


def test_the_bibliography_is_not_evidence() -> None:
    text = (
        "### [1] Doe (2020) \"A Paper\" item KEY1, p. 30, section 'References'\n"
        "Zeileis A (2004). Econometric computing with HC and HAC covariance matrix estimators.\n"
        '### [2] Doe (2020) "A Paper" item KEY1, p. 3\n'
        "The default is HC3 for linear models in this implementation.\n"
    )
    assert [b.n for b in sents.parse_blocks(text)] == [2]


def test_the_filters_keep_the_sentences_that_answer_the_benchmark_questions() -> None:
    """Every gold sentence of bench/data (picked by a person reading the page) survives the
    filters for code, tables and fragments, but for formulas that are mostly symbols."""
    root = pathlib.Path(__file__).resolve().parents[3] / "bench" / "data"
    gold: list[str] = []
    for name in ("answer_questions.jsonl", "conversations.jsonl"):
        for line in (root / name).read_text().splitlines():
            record = json.loads(line)
            for turn in record.get("turns") or [record]:
                gold += [g for paper in turn.get("papers", []) for g in paper.get("gold", [])]
    rejected = [g for g in gold if not sents._is_quotable(sents.split_sentences(g)[0], False)]
    assert len(gold) > 200
    assert len(rejected) <= 0.01 * len(gold), rejected


async def test_cited_sources_read_one_line_per_paper_with_its_pages() -> None:
    forecast = "Forecasting with exponential smoothing"
    blocks = [
        _block(1, "The number of differences d is chosen by KPSS unit-root tests.", key="FCST",
               title=forecast, page=10),
        _block(2, "Seasonal differencing for the number of differences uses the OCSB test.",
               key="FCST", title=forecast, page=9),
        _block(3, "Differences of seasonal series are chosen by the Canova-Hansen test.",
               key="OTHR", title="Another Paper", page=4),
        _block(4, "The number of differences is then fixed by unit-root tests again.",
               key="FCST", title=forecast, page=10),
    ]  # fmt: skip
    answer = await oa.compose_answer(
        "How is the number of differences chosen?", blocks, [], None, notice=NOTICE
    )
    sources = answer.split("# Cited Sources\n", 1)[1].splitlines()
    forecast_lines = [line for line in sources if "Item FCST" in line]
    assert len(forecast_lines) == 1, sources
    cited_numbers = {int(n) for n in re.findall(r"\[(\d+), p\. \d+\]", answer)}
    fcst_numbers = cited_numbers & {1, 2, 4}
    assert len(fcst_numbers) >= 2, answer
    # Every number the answer cites from the paper is on its one line, with the pages quoted.
    assert forecast_lines[0].startswith(", ".join(f"[{n}]" for n in sorted(fcst_numbers)))
    pages = sorted({blocks[n - 1].page for n in fcst_numbers})
    where = ("p. " if len(pages) == 1 else "pp. ") + ", ".join(map(str, pages))
    assert forecast_lines[0].endswith(f"Item FCST, {where}."), forecast_lines[0]
    assert len(sources) == len({line.split("Item ")[1] for line in sources})


def test_a_part_heading_takes_the_papers_own_spelling() -> None:
    blocks = [
        _block(1, "text", key="ARMA", title="RcppArmadillo: Accelerating R with C++ algebra"),
        _block(2, "text", key="PRTY", title="party: A Laboratory for Recursive Partytioning"),
        _block(3, "Fits come from the Glmnet-style solver in the glmnet package.", key="GLMN",
               title="Regularized Cox Regression"),
    ]  # fmt: skip
    parts = oq.question_parts("How do rcpparmadillo, Party and GLMNET each fit?", blocks)
    assert [p.label for p in parts] == ["rcpparmadillo", "party", "glmnet"]
    # Titles first, then the text (not a sentence's first word), then the question.
    assert [oa.part_heading(p, blocks) for p in parts] == ["RcppArmadillo", "party", "glmnet"]
    clause = oq.Part(label="what does the zoo series look like?", query="zoo")
    assert oa.part_heading(clause, blocks) == "What does the zoo series look like"
