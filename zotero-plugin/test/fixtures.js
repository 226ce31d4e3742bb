/**
 * Wire data shaped like the gateway's (services/agent/research/chat.py `wire_events`,
 * services/sessions/formatting.py), for the tests. Not a test file itself.
 */

export const SESSION_ID = "session-1726000000";
export const INVOCATION = "e-inv-987654";

export const PAYLOAD = {
  request: "How does lmer choose its optimizer, and how does brms fit the same kind of model?",
  extension_number: 1,
  max_extensions: 2,
  covered_summary: "lme4 uses bobyqa then Nelder-Mead for the fit (Bates 2015, p. 3).",
  gaps: ["how brms fits the same kind of model", "default priors in brms"],
  justification: "Two aspects have no evidence yet.",
  trigger: "gaps",
  papers: ["Fitting Linear Mixed-Effects Models Using lme4 (ABCD2345)"],
  evidence_count: 6,
  tool_calls_used: 10,
  words_retrieved: 5200,
  ceilings: { budget: 10, word_ceiling: 7500, max_chunks: 15 },
  next_ceilings: { budget: 15, word_ceiling: 11250, max_chunks: 20 },
};

export const CITATIONS = [
  { n: 1, item_key: "ABCD2345", title: "Fitting Linear Mixed-Effects Models Using lme4", page: 3 },
  {
    n: 2,
    item_key: "BRMS7890",
    title: "brms: An R Package for Bayesian Multilevel Models",
    page: 5,
  },
];

let seq = 0;
export function msg({ author, kind, partial = false, parts, invocation = INVOCATION }) {
  seq += 1;
  return {
    event: "message",
    data: { event_id: `ev-${seq}`, invocation_id: invocation, author, partial, kind, parts },
  };
}

/** The /chat stream of a turn that pauses at the first checkpoint. */
export function chatStreamPaused() {
  return [
    msg({
      author: "coordinator",
      kind: "step",
      parts: [{ function_call: { name: "search_library", args: { request: PAYLOAD.request } } }],
    }),
    msg({
      author: "search_subagent",
      kind: "thought",
      partial: true,
      parts: [{ text: "Look for lme4", thought: true }],
    }),
    msg({
      author: "search_subagent",
      kind: "thought",
      partial: true,
      parts: [{ text: " optimizers.", thought: true }],
    }),
    msg({
      author: "search_subagent",
      kind: "thought",
      parts: [
        { text: "Look for lme4 optimizers.", thought: true },
        { function_call: { name: "search_corpus", args: { query: "lmer optimizer" } } },
      ],
    }),
    msg({
      author: "search_subagent",
      kind: "step",
      parts: [
        {
          function_response: {
            name: "search_corpus",
            status: "success",
            count: 5,
            items: ["Fitting Linear Mixed-Effects Models Using lme4"],
            budget_notice: "3 retrieval calls left of 10.",
          },
        },
      ],
    }),
    {
      event: "request_input",
      data: {
        interrupt_id: "interrupt_ext_1",
        invocation_id: INVOCATION,
        message: "Deep research limit reached: grant an extension or synthesize now.",
        payload: PAYLOAD,
      },
    },
    {
      event: "done",
      data: {
        status: "paused",
        invocation_id: INVOCATION,
        session_id: SESSION_ID,
        answer: "",
        citations: [],
      },
    },
  ];
}

export const ANSWER =
  "Lme4 fits with **bobyqa** first [1, p. 3].\n\nbrms compiles a Stan model [2, p. 5].\n\n" +
  "# Cited Sources\n[1] Bates et al. (2015). Fitting Linear Mixed-Effects Models Using lme4. Item ABCD2345, p. 3.\n" +
  "[2] Bürkner (2017). brms. Item BRMS7890, p. 5.";

/** The /chat/resume stream of the same turn: an extension pass, then the answer. */
export function resumeStreamCompleted() {
  const half = ANSWER.indexOf("brms compiles");
  return [
    msg({
      author: "search_subagent",
      kind: "step",
      parts: [
        { function_call: { name: "read_document", args: { item_key: "BRMS7890", start_page: 5 } } },
      ],
    }),
    msg({
      author: "search_subagent",
      kind: "step",
      parts: [
        {
          function_response: {
            name: "read_document",
            status: "success",
            pages: [5, 6],
            title: "brms",
          },
        },
      ],
    }),
    msg({
      author: "synthesizer",
      kind: "answer",
      partial: true,
      parts: [{ text: ANSWER.slice(0, 20), thought: false }],
    }),
    msg({
      author: "synthesizer",
      kind: "answer",
      partial: true,
      parts: [{ text: ANSWER.slice(20, half), thought: false }],
    }),
    msg({
      author: "synthesizer",
      kind: "answer",
      partial: true,
      parts: [{ text: ANSWER.slice(half), thought: false }],
    }),
    msg({ author: "synthesizer", kind: "answer", parts: [{ text: ANSWER, thought: false }] }),
    msg({
      author: "coordinator",
      kind: "step",
      parts: [{ function_response: { name: "search_library", status: "success" } }],
    }),
    {
      event: "done",
      data: {
        status: "completed",
        invocation_id: INVOCATION,
        session_id: SESSION_ID,
        answer: ANSWER,
        citations: CITATIONS,
      },
    },
  ];
}

/** GET /sessions/{id} of the paused turn (after a Zotero restart). */
export function pausedSession() {
  return {
    id: SESSION_ID,
    title: "lmer optimizers",
    created_at: 1726000000.0,
    updated_at: 1726000100.0,
    messages: [
      {
        id: "u1",
        role: "user",
        author: "user",
        text: PAYLOAD.request,
        thought: false,
        timestamp: 1726000001.0,
        invocation_id: INVOCATION,
        intermediate: false,
        context: {
          active_context_items: [{ item_key: "ABCD2345", title: "lme4" }],
          active_collection: null,
          snippets: [
            { text: "bobyqa is the default", item_key: "ABCD2345", page: 3, title: "lme4" },
          ],
        },
      },
      {
        id: "a1",
        role: "assistant",
        author: "coordinator",
        text: "",
        thought: false,
        timestamp: 1726000002.0,
        invocation_id: INVOCATION,
        intermediate: false,
        tool_calls: [{ name: "search_library", args: { request: PAYLOAD.request } }],
      },
      {
        id: "a2",
        role: "assistant",
        author: "search_subagent",
        text: "Look for lme4 optimizers.",
        thought: true,
        timestamp: 1726000003.0,
        invocation_id: INVOCATION,
        intermediate: true,
      },
      {
        id: "a3",
        role: "assistant",
        author: "search_subagent",
        text: "",
        thought: false,
        timestamp: 1726000003.0,
        invocation_id: INVOCATION,
        intermediate: true,
        tool_calls: [{ name: "search_corpus", args: { query: "lmer optimizer" } }],
      },
      {
        id: "a4",
        role: "assistant",
        author: "search_subagent",
        text: "",
        thought: false,
        timestamp: 1726000004.0,
        invocation_id: INVOCATION,
        intermediate: true,
        tool_results: [{ name: "search_corpus" }],
      },
    ],
    pending_hitl: {
      interrupt_id: "interrupt_ext_1",
      invocation_id: INVOCATION,
      message: "Deep research limit reached: grant an extension or synthesize now.",
      payload: PAYLOAD,
    },
  };
}

/** A Response whose body streams `text` in chunks of `size` bytes. */
export function sseResponse(events, { size = 7, status = 200, raw } = {}) {
  const text =
    raw ??
    events.map(({ event, data }) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`).join("");
  const bytes = new TextEncoder().encode(text);
  const body = new ReadableStream({
    start(controller) {
      for (let i = 0; i < bytes.length; i += size) controller.enqueue(bytes.slice(i, i + size));
      controller.close();
    },
  });
  return new Response(body, { status, headers: { "content-type": "text/event-stream" } });
}

export function jsonResponse(body, status = 200) {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json" },
  });
}

/** An image snippet's bytes (a PNG signature and a little more), base64, and their sha256. */
export const PNG_BASE64 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg==";
export const PNG_SHA256 = "a".repeat(64);

/** An image snippet as the plugin pins it from an image annotation. */
export function imageSnippet(overrides = {}) {
  return {
    kind: "image",
    text: "Figure 2: profile zeta",
    item_key: "ABCD2345",
    page: 4,
    title: "lme4",
    image: { mime_type: "image/png", data: PNG_BASE64 },
    annotation_key: "ANNO2345",
    ...overrides,
  };
}

/** GET /sessions/{id} of a completed turn that carried an image snippet (context: metadata). */
export function imageSession() {
  const session = pausedSession();
  const [question] = session.messages;
  return {
    ...session,
    messages: [
      {
        ...question,
        context: {
          active_mode: "library",
          active_context_items: null,
          active_collection: null,
          snippets: [
            {
              kind: "image",
              text: "Figure 2: profile zeta",
              item_key: "ABCD2345",
              page: 4,
              title: "lme4",
              image: { mime_type: "image/png", size: 70, sha256: PNG_SHA256, part: 1 },
            },
          ],
        },
      },
    ],
    pending_hitl: null,
  };
}
