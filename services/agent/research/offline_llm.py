"""The built-in offline model: deterministic, extractive and honest about what it is.

With no model configured (the default), every role runs on this ``BaseLlm``. It drives the same
agents, tools, checkpoints and streaming as a real model, with a fixed policy:

- coordinator: every user message becomes one ``search_library`` call with the message as the
  request (it does not chat); a message with pinned images, which it cannot see, names them
  in the request by what their ``<image_snippet>`` says: "(about the figure on p. 3 of <title>:
  <caption>)", and is never a follow-up (its "this" is the image, not the last answer);
- search subagent: read the page of each image the user pinned (it cannot see images: the
  ``<image_snippet>`` of its prompt names the paper and page, and the page's text is what it
  can quote about the figure), search the whole request, the images' captions, then each of
  the request's parts (clauses that ask something of their own: "..., and what ..."), read the
  best page of the two best papers, and conclude with the parts for which no retrieved passage
  holds most of the part's words. Those gaps trigger the deep-research checkpoint. An
  extension pass searches each gap (and the user's guidance);
- synthesizer: the sentences of the evidence that answer, picked by the cross-encoder
  (``offline_answer``): a direct answer first, then supporting passages, each cited [n, p. X],
  the uncovered parts, and '# Cited Sources'.

It never writes a sentence that is not in the evidence, apart from its labels.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Any

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

from services.agent.research import evidence as ev
from services.agent.research.followups import Turn, standalone_request
from services.agent.research.offline_answer import compose_answer, scorer_from_reranker
from services.agent.research.offline_questions import (
    about_own_writing,
    question_parts,
    subject_queries,
    with_context,
)
from services.agent.research.offline_sentences import Block, parse_blocks
from services.common.adk.names import SEARCH_LIBRARY
from services.common.stopwords import stopwords

OFFLINE_NOTICE = (
    "*Offline extractive answer: Zocrates' built-in model quotes sentences from your papers "
    "instead of writing a synthesis. Configure a model in the preferences for full answers.*"
)

# Search terms skip these too: what a question asks of its papers ("compare", "explain",
# "model", "paper") rather than what it is about.
_STOP = stopwords(
    """above after again against all am any because been before being below between both but
    could did doing down during each few further had has have having he her here hers herself him
    himself his if itself just me more most my myself no nor not now off once only other ours
    ourselves out over own same she should so some such than theirs them themselves they those
    through too under until up very were while whom will would you your yours yourself
    yourselves used using uses kind way ways compare compares compared comparison comparisons
    contrast differ differs difference differences explain explains describe describes discuss
    discusses say says said tell tells show shows mean means according model models paper papers
    study studies one two also"""
)
# Passages per search. The synthesizer gets up to 15 (the harness's ``max_chunks``): a
# question that is one search takes them all from it; one of several parts takes 8 a search,
# so the passages of the later parts are not crowded out by the first search's weaker ones.
SEARCH_K = 15
PART_SEARCH_K = 8
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9\-]+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\[])")
_SUFFIXES = (
    "izations", "ization", "ations", "ation", "izers", "izer", "izing", "ized", "ize",
    "ements", "ement", "ings", "ing", "ers", "er", "ed", "es", "s",
)  # fmt: skip


def stem(word: str) -> str:
    """A light suffix stripper: "optimizer", "optimization", "optimizers" -> "optim"."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            root = word[: -len(suffix)]
            if len(root) >= 4 and root[-1] == root[-2] and root[-1] not in "aeiouls":
                root = root[:-1]  # "fitting" -> "fitt" -> "fit"
            return root
    return word


def terms(text: str) -> set[str]:
    out = set()
    for word in _WORD.findall(text.lower()):
        if word in _STOP or len(word) < 3:
            continue
        out.add(stem(word))
    return out


def ordered_terms(text: str) -> list[str]:
    """``terms`` in the order they appear."""
    out: list[str] = []
    for word in _WORD.findall(text.lower()):
        if word in _STOP or len(word) < 3:
            continue
        if stem(word) not in out:
            out.append(stem(word))
    return out


def aspects_of(request: str) -> list[str]:
    """The parts of a question that the search looks for one by one (see
    :func:`~services.agent.research.offline_answer.question_parts`)."""
    return [part.query for part in question_parts(request)] or [request.strip()]


def covered(aspect: str, texts: list[str], share: float = 0.6) -> bool:
    """Whether the retrieved ``texts`` speak to ``aspect``: its subject (first content word,
    "quantum" in "what do they say about quantum annealing hardware") appears in them, and so
    do most of its words (anywhere: a comparison draws on several papers)."""
    wanted = ordered_terms(aspect)
    if not wanted:
        return True
    found: set[str] = set()
    for text in texts:
        found |= terms(text)
    hits = sum(1 for w in wanted if w in found)
    return wanted[0] in found and hits >= max(1, round(share * len(wanted)))


def _user_texts(request: LlmRequest) -> list[str]:
    return [
        p.text
        for c in request.contents
        if c.role == "user"
        for p in c.parts or []
        if p.text and not p.thought
    ]


def _responses(request: LlmRequest) -> list[types.FunctionResponse]:
    return [
        p.function_response for c in request.contents for p in c.parts or [] if p.function_response
    ]


def _call(name: str, **args: Any) -> LlmResponse:
    return LlmResponse(
        content=types.Content(
            role="model", parts=[types.Part(function_call=types.FunctionCall(name=name, args=args))]
        )
    )


def estimate_tokens(text: str) -> int:
    """About four characters per token, the usual rule of thumb for English."""
    return max(1, len(text) // 4)


def _prompt_tokens(request: LlmRequest) -> int:
    size = len(str(request.config.system_instruction or "")) if request.config else 0
    for content in request.contents:
        for part in content.parts or []:
            if part.text:
                size += len(part.text)
            elif part.function_call is not None:
                size += len(str(part.function_call.args or {})) + 20
            elif part.function_response is not None:
                size += len(str(part.function_response.response or {})) + 20
    return max(1, size // 4)


def _with_usage(response: LlmResponse, request: LlmRequest) -> LlmResponse:
    output = "".join(
        p.text or str(p.function_call.args if p.function_call else "")
        for p in (response.content.parts if response.content else []) or []
    )
    prompt = _prompt_tokens(request)
    completion = estimate_tokens(output)
    response.usage_metadata = types.GenerateContentResponseUsageMetadata(
        prompt_token_count=prompt,
        candidates_token_count=completion,
        total_token_count=prompt + completion,
    )
    return response


class OfflineLlm(BaseLlm):
    """One instance per role: ``coordinator``, ``search_subagent`` or ``synthesizer``."""

    model: str = "offline"
    role: str = "coordinator"
    # The reranker service's client: the synthesizer scores sentences with its cross-encoder.
    reranker: Any = None
    # Reads the library's pages: a quote from a passage that spans pages cites its own page.
    read_pages: Any = None

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        if self.role == "search_subagent":
            yield _with_usage(self._subagent(llm_request), llm_request)
            return
        if self.role == "synthesizer":
            text = await self._synthesize(llm_request)
        else:
            response = self._coordinate(llm_request)
            if response is not None:
                yield _with_usage(response, llm_request)
                return
            text = "Ask me about the papers in your library."
        if stream:
            pieces = re.findall(r"\S+\s*|\s+", text)
            for i in range(0, len(pieces), 6):
                yield LlmResponse(
                    content=types.Content(
                        role="model", parts=[types.Part(text="".join(pieces[i : i + 6]))]
                    ),
                    partial=True,
                )
        yield _with_usage(
            LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)])),
            llm_request,
        )

    # -- coordinator ------------------------------------------------------------------------

    def _coordinate(self, request: LlmRequest) -> LlmResponse | None:
        last = request.contents[-1] if request.contents else None
        if last is None or last.role != "user":
            return None
        texts = [p.text for p in last.parts or [] if p.text]
        if texts:
            message = " ".join(texts).strip()
            system = str(request.config.system_instruction or "") if request.config else ""
            figures = _figures_note(pinned_images(system))
            # With images pinned, "this" and "it" are the images, not the last answer.
            if figures:
                asked = " ".join(message.split()) + figures
            else:
                asked = standalone_request(message, _history(request))
            return _call(SEARCH_LIBRARY, request=asked)
        for part in last.parts or []:
            fr = part.function_response
            if fr is not None and fr.name == SEARCH_LIBRARY:
                answer = (fr.response or {}).get("answer") or "The research pipeline stopped."
                return LlmResponse(
                    content=types.Content(role="model", parts=[types.Part(text=str(answer))])
                )
        return None

    # -- search subagent --------------------------------------------------------------------

    def _subagent(self, request: LlmRequest) -> LlmResponse:
        prompt = next((t for t in _user_texts(request) if "Research request:" in t), "")
        question = _field(prompt, "Research request:")
        extension = prompt.startswith("Deep research extension")
        responses = _responses(request)
        texts: list[str] = []
        hits: list[dict[str, Any]] = []
        blocked = False
        for fr in responses:
            body = fr.response or {}
            if body.get("status") == "blocked":
                blocked = True
            for r in body.get("results") or []:
                hits.append(r)
                texts.append(str(r.get("text", "")))
            for page in body.get("pages") or []:
                texts.append(str(page.get("text", "")))
        searched = [fr for fr in responses if fr.name == "search_corpus"]
        reads = [fr for fr in responses if fr.name == "read_document"]
        pinned = [] if extension else pinned_images(prompt)
        # The pinned images' pages first, each read once: they are what the images show.
        pages = [(p.item_key, p.page) for p in pinned if p.item_key and p.page]
        pages = list(dict.fromkeys(pages))
        if not blocked and len(reads) < len(pages):
            key, page = pages[len(reads)]
            return _call("read_document", item_key=key, start_page=page, end_page=page)
        reads = reads[len(pages) :]
        captions = [p.caption for p in pinned if terms(p.caption)]
        if extension:
            missing = [
                g[2:].strip() for g in _block(prompt, "Still missing:") if g.startswith("- ")
            ]
            guidance = _field(prompt, "The user's guidance for this extension:")
            queries = [f"{g} {guidance}".strip() for g in missing] or [question]
        else:
            missing = aspects_of(question)
            queries = [question] + [c for c in captions if c != question]
            queries += with_context(missing) if len(missing) > 1 else []
            if searched:
                # The papers the first search found tell which of them the question names:
                # each named paper gets a search of its own.
                found = [
                    Block(
                        0,
                        "",
                        str(h.get("title", "")),
                        str(h.get("item_key")),
                        0,
                        0,
                        str(h.get("text", "")),
                    )
                    for h in hits
                ]
                queries += [q for q in subject_queries(question, found) if q not in queries]
        # "What did I note about ...": what the user wrote in Zotero is searched first.
        mine = [question] if not extension and about_own_writing(question) else []
        if not blocked and len(searched) < len(mine):
            return _call("search_corpus", query=question, k=SEARCH_K, of="mine")
        searched = searched[len(mine) :]
        if not blocked and len(searched) < len(queries):
            k = SEARCH_K if len(queries) == 1 else PART_SEARCH_K
            return _call("search_corpus", query=queries[len(searched)], k=k)
        if not blocked and not extension and len(reads) < 2:
            best: list[dict[str, Any]] = []
            for hit in hits:
                if not hit.get("page"):
                    continue  # a note: no page of the paper to read
                if all(b["item_key"] != hit["item_key"] for b in best):
                    best.append(hit)
            if len(best) > len(reads):
                hit = best[len(reads)]
                return _call(
                    "read_document",
                    item_key=hit["item_key"],
                    start_page=int(hit["page"]),
                    end_page=int(hit["page"]),
                )
        aspects = missing if extension else aspects_of(question)
        gaps = [a for a in aspects if not covered(a, texts)]
        return _call("conclude_search", summary=_findings(hits), gaps=gaps)

    # -- synthesizer ------------------------------------------------------------------------

    async def _synthesize(self, request: LlmRequest) -> str:
        prompt = "\n\n".join(_user_texts(request))
        question = _field(prompt, "Question:")
        evidence_text = prompt.split("Evidence from the user's library:", 1)[-1]
        evidence_text = evidence_text.split("Aspects the search found no evidence for:", 1)[0]
        evidence_text = evidence_text.split(ev.SYNTHESIS_INSTRUCTION_START, 1)[0]
        gaps = [g[2:].strip() for g in _block(prompt, "Aspects the search found no evidence for:")]
        _capture(question, evidence_text, gaps)
        return await compose_answer(
            question,
            parse_blocks(evidence_text),
            gaps,
            scorer_from_reranker(self.reranker),
            notice=OFFLINE_NOTICE,
            read_pages=self.read_pages,
        )


# bench/replay_answers.py replays what the synthesizer was given: with this set (the answer
# benchmark sets it for its own stack), each synthesis input is appended to that file.
CAPTURE_ENV = "ZOCRATES_OFFLINE_CAPTURE"


def _capture(question: str, evidence_text: str, gaps: list[str]) -> None:
    path = os.environ.get(CAPTURE_ENV)
    if not path:
        return
    record = {"question": question, "evidence": evidence_text, "gaps": gaps}
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps(record) + "\n")


@dataclass(frozen=True, slots=True)
class PinnedImage:
    """An ``<image_snippet>`` of the subagent's prompt: the paper, page and caption."""

    item_key: str
    page: int
    caption: str
    title: str = ""


_IMAGE_SNIPPET = re.compile(r"<image_snippet\b([^>]*)>(.*?)</image_snippet>", re.S)
_ATTRIBUTE = re.compile(r'(\w+)="([^"]*)"')


def pinned_images(prompt: str) -> list[PinnedImage]:
    """The images the user pinned, as the prompt's ``<image_snippet>`` elements name them (the
    model cannot see the images themselves); ``item_key`` only where the element has a key."""
    out = []
    for attrs, body in _IMAGE_SNIPPET.findall(prompt):
        values = {k: _unescape(v) for k, v in _ATTRIBUTE.findall(attrs)}
        page = values.get("page", "")
        out.append(
            PinnedImage(
                values.get("key", ""),
                int(page) if page.isdigit() else 0,
                _unescape(body).strip(),
                values.get("title", ""),
            )
        )
    return out


def _figures_note(images: list[PinnedImage]) -> str:
    """' (about the figure on p. 3 of <title>: <caption>)' for a request the pinned images
    are part of; '' without any."""
    named = []
    for image in images:
        where = f"p. {image.page} of {image.title}" if image.page else image.title
        figure = f"the figure on {where}" if where else "the pinned figure"
        named.append(f"{figure}: {image.caption}" if image.caption else figure)
    return f" (about {'; '.join(named)})" if named else ""


def _unescape(text: str) -> str:
    for escaped, plain in (("&lt;", "<"), ("&gt;", ">"), ("&quot;", '"'), ("&amp;", "&")):
        text = text.replace(escaped, plain)
    return text


def _history(request: LlmRequest) -> list[Turn]:
    """The earlier research turns of the conversation: each request and its cited titles."""
    turns: list[Turn] = []
    asked = ""
    for content in request.contents[:-1]:
        for part in content.parts or []:
            call, response = part.function_call, part.function_response
            if call is not None and call.name == SEARCH_LIBRARY:
                asked = str((call.args or {}).get("request") or "")
            elif response is not None and response.name == SEARCH_LIBRARY and asked:
                citations = (response.response or {}).get("citations") or []
                titles = tuple(str(c.get("title") or "") for c in citations if c.get("title"))
                turns.append(Turn(asked, titles))
    return turns


def _findings(hits: list[dict[str, Any]], papers: int = 4) -> str:
    """What the pass found, in the papers' own words: for the best hit of each of the first
    few papers, its title, page and opening sentence."""
    lines: list[str] = []
    seen: set[str] = set()
    for hit in hits:
        key = str(hit.get("item_key"))
        if key in seen:
            continue
        seen.add(key)
        sentence = _SENTENCE.split(re.sub(r"\s+", " ", str(hit.get("text", "")).strip()))[0]
        if len(sentence) > 200:
            sentence = sentence[:200].rsplit(" ", 1)[0] + " ..."
        lines.append(f"{hit.get('title', key)} ({key}) p. {hit.get('page')}: {sentence}")
        if len(lines) >= papers:
            break
    return "\n".join(lines) or "No passages in the library matched."


def _field(text: str, label: str) -> str:
    for line in text.splitlines():
        if line.startswith(label):
            return line[len(label) :].strip()
    return ""


def _block(text: str, heading: str) -> list[str]:
    if heading not in text:
        return []
    body = text.split(heading, 1)[1].lstrip("\n")
    out = []
    for line in body.splitlines():
        if not line.strip():
            break
        out.append(line.strip())
    return out
