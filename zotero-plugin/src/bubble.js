/**
 * The assistant bubble of a turn (messages.js): `applyEvent(bubble, {event, data})` folds one
 * SSE event of POST /chat or /chat/resume into a bubble and returns a new one; `beginResume`
 * keeps the same bubble for the /chat/resume stream. Also the user message of a turn, and the
 * counts of a bubble's steps.
 */
import { describeError } from "./errors.js";

/** @typedef {"streaming" | "paused" | "completed" | "error" | "stopped"} BubbleStatus */

let localCounter = 0;
const localId = (prefix) =>
  `${prefix}-local-${Date.now().toString(36)}-${(localCounter++).toString(36)}`;

/** A new, empty assistant bubble (status `streaming`). */
export function createBubble({ id, invocationId = "", status = "streaming" } = {}) {
  return {
    kind: "assistant",
    id: id || localId("a"),
    invocationId,
    segments: [], // answer pieces: {text, open, author}
    answer: "",
    steps: [],
    checkpoint: null, // {interruptId, invocationId, message, payload}
    decisions: [], // answered checkpoints: {interruptId, action, guidance, extensionNumber}
    resumedFrom: null, // the checkpoint a running resume answered (to restore if it fails)
    citations: [],
    status,
    error: null,
    passes: 1,
  };
}

/** A user message (text plus the scope it was sent with, as the session API's `context`). */
export function createUserMessage({
  id,
  text,
  context = null,
  invocationId = "",
  timestamp = null,
} = {}) {
  return {
    kind: "user",
    id: id || localId("u"),
    text: String(text ?? ""),
    context: context || null,
    invocationId,
    timestamp,
  };
}

function clone(b) {
  return {
    ...b,
    segments: b.segments.map((s) => ({ ...s })),
    steps: b.steps.map((s) => ({ ...s })),
    decisions: b.decisions.map((d) => ({ ...d })),
    citations: b.citations.slice(),
  };
}

export function joinAnswer(segments) {
  return segments
    .map((s) => s.text)
    .filter((t) => t && t.trim())
    .join("\n\n");
}

function closeOpen(b) {
  for (const s of b.segments) s.open = false;
  for (const s of b.steps) if ("open" in s) s.open = false;
}

/** Append a delta to the open piece of `list` (matching `match`), or start one. */
function streamInto(list, match, delta, make) {
  for (let k = list.length - 1; k >= 0; k--) {
    if (list[k].open && match(list[k])) {
      list[k].text += delta;
      return;
    }
  }
  list.push({ ...make(), text: delta, open: true });
}

/** Replace the open piece with the whole text and close it, or add a closed piece. */
function finalInto(list, match, full, make) {
  for (let k = list.length - 1; k >= 0; k--) {
    if (list[k].open && match(list[k])) {
      list[k].text = full;
      list[k].open = false;
      return;
    }
  }
  if (full) list.push({ ...make(), text: full, open: false });
}

function resultStep(summary, author) {
  const step = {
    type: "result",
    name: String(summary?.name || ""),
    status: summary?.status || "success",
    author,
  };
  for (const key of [
    "count",
    "items",
    "pages",
    "title",
    "notice",
    "budget_notice",
    "message",
    "code",
  ]) {
    if (summary && summary[key] != null)
      step[key === "budget_notice" ? "budgetNotice" : key] = summary[key];
  }
  return step;
}

function applyMessage(b, data) {
  const author = data.author || "";
  const partial = !!data.partial;
  const kind = data.kind || "step";
  if (!b.invocationId && data.invocation_id) b.invocationId = data.invocation_id;
  let answerText = "";
  let thoughtText = "";
  let noteText = "";
  let hasAnswer = false;
  let hasThought = false;
  let hasNote = false;
  for (const part of data.parts || []) {
    if (part == null || typeof part !== "object") continue;
    if (typeof part.text === "string") {
      if (part.thought) {
        thoughtText += part.text;
        hasThought = true;
      } else if (kind === "answer") {
        answerText += part.text;
        hasAnswer = true;
      } else {
        noteText += part.text;
        hasNote = true;
      }
    } else if (!partial && part.function_call) {
      b.steps.push({
        type: "call",
        name: String(part.function_call.name || ""),
        args: part.function_call.args ?? {},
        author,
      });
    } else if (!partial && part.function_response) {
      b.steps.push(resultStep(part.function_response, author));
    }
  }
  const sameAuthor = (type) => (s) => s.type === type && s.author === author;
  if (hasThought) {
    const make = () => ({ type: "thought", author });
    if (partial) streamInto(b.steps, sameAuthor("thought"), thoughtText, make);
    else finalInto(b.steps, sameAuthor("thought"), thoughtText, make);
  }
  if (hasNote) {
    const make = () => ({ type: "note", author });
    if (partial) streamInto(b.steps, sameAuthor("note"), noteText, make);
    else finalInto(b.steps, sameAuthor("note"), noteText, make);
  }
  if (hasAnswer) {
    const make = () => ({ author });
    const match = (s) => s.author === author;
    if (partial) streamInto(b.segments, match, answerText, make);
    else finalInto(b.segments, match, answerText, make);
  }
}

/** The checkpoint of a `request_input` event or a session's `pending_hitl`. */
export function checkpointFrom(data) {
  if (!data || !data.interrupt_id) return null;
  return {
    interruptId: String(data.interrupt_id),
    invocationId: String(data.invocation_id || ""),
    message: data.message ?? "",
    payload: data.payload && typeof data.payload === "object" ? data.payload : {},
  };
}

export function checkpointStep(cp) {
  return {
    type: "checkpoint",
    interruptId: cp.interruptId,
    extensionNumber: cp.payload.extension_number ?? null,
    maxExtensions: cp.payload.max_extensions ?? null,
    gaps: Array.isArray(cp.payload.gaps) ? cp.payload.gaps.length : 0,
  };
}

/**
 * Fold one SSE event into a bubble.
 * @param {ReturnType<typeof createBubble>} bubble
 * @param {{event: string, data: any}} ev
 * @returns a new bubble
 */
export function applyEvent(bubble, ev) {
  const b = clone(bubble);
  const data = ev?.data ?? {};
  switch (ev?.event) {
    case "message":
      applyMessage(b, data);
      if (b.status !== "error") b.status = "streaming";
      break;
    case "request_input": {
      const cp = checkpointFrom(data);
      if (!cp) break;
      closeOpen(b);
      b.checkpoint = cp;
      b.resumedFrom = null;
      if (!b.invocationId) b.invocationId = cp.invocationId;
      b.steps.push(checkpointStep(cp));
      b.status = "paused";
      break;
    }
    case "done":
      closeOpen(b);
      if (data.invocation_id && !b.invocationId) b.invocationId = data.invocation_id;
      b.resumedFrom = null;
      if (data.status === "paused") {
        b.status = "paused";
      } else {
        b.status = "completed";
        b.checkpoint = null;
        if (Array.isArray(data.citations) && data.citations.length)
          b.citations = data.citations.slice();
        // A remote model's tokens and cost for the turn; the offline model sends none.
        if (data.usage && typeof data.usage === "object") b.usage = { ...data.usage };
        if (!joinAnswer(b.segments) && data.answer)
          b.segments.push({ text: String(data.answer), open: false, author: "" });
      }
      break;
    case "error":
      closeOpen(b);
      b.status = "error";
      b.error = {
        code: data.code || "error",
        message: data.display || describeError({ code: data.code, message: data.message }),
      };
      break;
    default:
      return bubble; // unknown events (future additions) change nothing
  }
  b.answer = joinAnswer(b.segments);
  return b;
}

/** Fold several events. */
export function applyEvents(bubble, events) {
  let b = bubble;
  for (const ev of events) b = applyEvent(b, ev);
  return b;
}

/**
 * The user answered the checkpoint: the same bubble now takes the /chat/resume stream.
 * @param {{action: "extend_budget" | "synthesize", guidance?: string}} choice
 */
export function beginResume(bubble, { action, guidance = "" } = {}) {
  if (!bubble.checkpoint) throw new Error("beginResume: this bubble has no pending checkpoint");
  const b = clone(bubble);
  const cp = b.checkpoint;
  const decision = {
    type: "decision",
    interruptId: cp.interruptId,
    action,
    guidance: String(guidance || "").trim(),
    extensionNumber: cp.payload.extension_number ?? null,
  };
  b.decisions.push({ ...decision });
  b.steps.push(decision);
  b.resumedFrom = cp;
  b.checkpoint = null;
  b.status = "streaming";
  b.error = null;
  b.passes += 1;
  return b;
}

/**
 * The resume request never reached the agent (the gateway was down, the request was refused):
 * put the card back so the user can answer it again, and show why.
 */
export function abortResume(bubble, error = null) {
  if (!bubble.resumedFrom) return bubble;
  const b = clone(bubble);
  const cp = b.resumedFrom;
  b.checkpoint = cp;
  b.resumedFrom = null;
  b.decisions = b.decisions.filter((d) => d.interruptId !== cp.interruptId);
  b.steps = b.steps.filter((s) => !(s.type === "decision" && s.interruptId === cp.interruptId));
  b.passes = Math.max(1, b.passes - 1);
  b.status = "paused";
  b.error = error ? { code: error.code || "error", message: error.message || String(error) } : null;
  return b;
}

/** The user stopped the stream (abort). */
export function stopBubble(bubble) {
  const b = clone(bubble);
  closeOpen(b);
  if (b.status === "streaming") b.status = "stopped";
  b.answer = joinAnswer(b.segments);
  return b;
}

/** Counts for the collapsed steps header ("6 steps: 4 searches, 2 reads ..."). */
export function stepSummary(bubble) {
  const calls = bubble.steps.filter((s) => s.type === "call");
  const byName = {};
  for (const c of calls) byName[c.name] = (byName[c.name] || 0) + 1;
  return {
    total: bubble.steps.length,
    calls: calls.length,
    thoughts: bubble.steps.filter((s) => s.type === "thought").length,
    byName,
    extensions: bubble.decisions.filter((d) => d.action === "extend_budget").length,
  };
}
