"""The offline model and image snippets: it cannot see an image, so it must not fail on one
and works from what the ``<image_snippet>`` says. The coordinator names the figure in its
research request; the search subagent reads the pinned page of the pinned paper first and
searches the caption."""

from __future__ import annotations

from typing import Any

from google.adk.models.llm_request import LlmRequest
from google.genai import types

from services.agent.research import evidence as ev
from services.agent.research.offline_llm import OfflineLlm, pinned_images
from services.agent.research.turn_scope import focal_snippets_str, prompt_parts

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16
IMAGE = {
    "kind": "image",
    "text": "profile zeta plots",
    "item_key": "ABCD1234",
    "page": 7,
    "title": 'lme4 "fits"',
    "image": {"mime_type": "image/png", "data": PNG},
}


async def _reply(llm: OfflineLlm, request: LlmRequest) -> types.FunctionCall:
    responses = [r async for r in llm.generate_content_async(request)]
    call = responses[-1].content.parts[0].function_call  # type: ignore[union-attr,index]
    assert call is not None
    return call


def _request(system: str, parts: list[types.Part], *more: types.Content) -> LlmRequest:
    return LlmRequest(
        contents=[types.Content(role="user", parts=parts), *more],
        config=types.GenerateContentConfig(system_instruction=system),
    )


async def test_the_coordinator_names_the_pinned_figure_in_its_request() -> None:
    system = "# Passages the user selected\n" + focal_snippets_str([IMAGE], with_keys=False)
    request = _request(system, prompt_parts("What does this figure show?", [IMAGE]))
    call = await _reply(OfflineLlm(role="coordinator"), request)
    assert call.args == {
        "request": 'What does this figure show? (about the figure on p. 7 of lme4 "fits": '
        "profile zeta plots)"
    }
    plain = _request("", prompt_parts("How does lmer fit?", []))
    assert (await _reply(OfflineLlm(role="coordinator"), plain)).args == {
        "request": "How does lmer fit?"
    }


async def test_with_an_image_pinned_this_is_the_image_not_the_last_answer() -> None:
    earlier = [
        types.Content(
            role="model",
            parts=[
                types.Part(
                    function_call=types.FunctionCall(
                        name="search_library", args={"request": "How does lmer fit?"}
                    )
                )
            ],
        ),
        types.Content(
            role="user",
            parts=[
                types.Part(
                    function_response=types.FunctionResponse(
                        name="search_library",
                        response={"answer": "...", "citations": [{"title": "lme4"}]},
                    )
                )
            ],
        ),
    ]
    system = focal_snippets_str([IMAGE], with_keys=False)
    request = LlmRequest(
        contents=[
            types.Content(role="user", parts=[types.Part(text="How does lmer fit?")]),
            *earlier,
            types.Content(role="user", parts=prompt_parts("What does this show?", [IMAGE])),
        ],
        config=types.GenerateContentConfig(system_instruction=system),
    )
    call = await _reply(OfflineLlm(role="coordinator"), request)
    assert call.args == {
        "request": 'What does this show? (about the figure on p. 7 of lme4 "fits": '
        "profile zeta plots)"
    }


def _tool_turn(name: str, response: dict[str, Any]) -> list[types.Content]:
    return [
        types.Content(
            role="model", parts=[types.Part(function_call=types.FunctionCall(name=name, args={}))]
        ),
        types.Content(
            role="user",
            parts=[
                types.Part(function_response=types.FunctionResponse(name=name, response=response))
            ],
        ),
    ]


async def test_the_subagent_reads_the_pinned_page_first_then_searches_the_caption() -> None:
    keyed = focal_snippets_str([IMAGE], with_keys=True)
    assert pinned_images(keyed)[0].item_key == "ABCD1234"
    prompt = ev.initial_prompt("What does this figure show?", "", keyed)
    llm = OfflineLlm(role="search_subagent")
    first = await _reply(llm, _request("", [types.Part(text=prompt)]))
    assert (first.name, first.args) == (
        "read_document",
        {"item_key": "ABCD1234", "start_page": 7, "end_page": 7},
    )
    page = {"status": "success", "pages": [{"page": 7, "text": "Profile zeta plots show ..."}]}
    after = _request("", [types.Part(text=prompt)], *_tool_turn("read_document", page))
    second = await _reply(llm, after)
    assert (second.name, second.args["query"]) == (  # type: ignore[index]
        "search_corpus",
        "What does this figure show?",
    )
    searched = [*_tool_turn("read_document", page), *_tool_turn("search_corpus", {"results": []})]
    third = await _reply(llm, _request("", [types.Part(text=prompt)], *searched))
    assert third.name == "search_corpus" and third.args["query"] == "profile zeta plots"  # type: ignore[index]
