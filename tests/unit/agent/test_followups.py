"""Follow-ups made self-contained for the offline coordinator."""

from __future__ import annotations

from google.adk.models.llm_request import LlmRequest
from google.genai import types

from services.agent.research.followups import Turn, refers_back, standalone_request, thread_root
from services.agent.research.offline_llm import OfflineLlm, aspects_of

HC = "What is the difference between HC0 and HC3 in sandwich estimators?"
SANDWICH = "Econometric Computing with HC and HAC Covariance Matrix Estimators"


def test_a_message_that_refers_back_carries_the_thread_and_its_papers() -> None:
    request = standalone_request(
        "Which of them does the package recommend by default?", [Turn(HC, (SANDWICH,))]
    )
    assert request == (
        "Which of them does the package recommend by default? "
        f"(follow-up to: {HC}; about: {SANDWICH})"
    )
    assert thread_root(request) == HC
    # A follow-up of a follow-up stays in the same thread (no nesting).
    again = standalone_request("And HC1?", [Turn(request, (SANDWICH,))])
    assert thread_root(again) == HC and again.count("follow-up to") == 1
    # The search takes it whole: cut into pieces, "which of them" finds nothing.
    assert aspects_of(request) == [request]


def test_a_new_subject_starts_fresh() -> None:
    history = [Turn(HC, (SANDWICH,))]
    fresh = "How does the lme4 package choose its optimizer for linear mixed models?"
    assert standalone_request(fresh, history) == fresh
    topic = "Different topic: which wine data does the ordinal paper use as its example?"
    assert standalone_request(topic, history) == topic
    assert standalone_request("Which of them is the default?", []) == (
        "Which of them is the default?"
    )
    assert refers_back("And brms?") and refers_back("So what does it offer instead?")
    # A long question with a pronoun of its own ("its" is lmer's) is not a follow-up.
    broad = "How does lmer choose its optimizer, and which photonic chips implement its solver?"
    assert standalone_request(broad, history) == broad


def test_the_other_one_is_the_named_paper_the_last_answer_did_not_cite() -> None:
    root = (
        "I use both lme4 and brms for multilevel models. "
        "Which estimation approach does brms rely on?"
    )
    request = standalone_request(
        "And the other one?", [Turn(root, ("brms: An R Package for Bayesian Multilevel Models",))]
    )
    assert request.startswith("And the other one? Which estimation approach does lme4 rely on?")
    assert request.endswith("about: lme4)")


def test_and_a_new_name_asks_the_thread_question_of_it() -> None:
    root = "I use both lme4 and brms. Which estimation approach does brms rely on?"
    lme4 = "Fitting Linear Mixed-Effects Models Using lme4"
    request = standalone_request("And rstanarm?", [Turn(root, (lme4,))])
    assert request == (
        f"And rstanarm? Which estimation approach does rstanarm rely on? "
        f"(follow-up to: {root}; about: rstanarm)"
    )
    assert lme4 not in request  # the papers of the old subject do not pull the search back
    # A subject the thread already has, or no subject, is the old follow-up.
    assert standalone_request("And brms?", [Turn(root, (lme4,))]).endswith(f"about: {lme4})")
    assert standalone_request("And then?", [Turn(root, (lme4,))]).endswith(f"about: {lme4})")
    # A root with no name to replace keeps its question whole.
    plain = "Which optimizer does the mainstream mixed-model package use?"
    assert standalone_request("What about nlme?", [Turn(plain, (lme4,))]).startswith(
        f"What about nlme? {plain} (follow-up to:"
    )


async def test_the_offline_coordinator_reads_the_conversation() -> None:
    def call(request: str) -> types.Content:
        fc = types.FunctionCall(name="search_library", args={"request": request})
        return types.Content(role="model", parts=[types.Part(function_call=fc)])

    def result(titles: list[str]) -> types.Content:
        fr = types.FunctionResponse(
            name="search_library",
            response={
                "status": "success",
                "answer": "...",
                "citations": [{"title": t} for t in titles],
            },
        )
        return types.Content(role="user", parts=[types.Part(function_response=fr)])

    def user(text: str) -> types.Content:
        return types.Content(role="user", parts=[types.Part(text=text)])

    request = LlmRequest(
        contents=[user(HC), call(HC), result([SANDWICH]), user("Which of them is the default?")]
    )
    responses = [r async for r in OfflineLlm(role="coordinator").generate_content_async(request)]
    fc = responses[-1].content.parts[0].function_call
    assert fc.name == "search_library"
    assert (
        fc.args["request"]
        == f"Which of them is the default? (follow-up to: {HC}; about: {SANDWICH})"
    )


def test_the_two_things_the_last_turn_compared_are_its_subject() -> None:
    """A long follow-up about "the two" (more words than a pronoun's follow-up may have) still
    carries the thread: searched alone, it finds nothing about what "the two" are."""
    message = "How do the two differ in the small-sample corrections they apply to residuals?"
    request = standalone_request(message, [Turn(HC, (SANDWICH,))])
    assert request == f"{message} (follow-up to: {HC}; about: {SANDWICH})"
    assert refers_back("Which of these estimators is robust to heteroskedasticity of any form?")
    assert refers_back("Do both approaches need the same regularity conditions on the errors?")
