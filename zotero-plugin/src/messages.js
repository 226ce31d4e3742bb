/**
 * Chat state: the assistant bubble of a turn, and the message list of a session.
 *
 * `applyEvent(bubble, {event, data})` folds one SSE event of POST /chat or /chat/resume into
 * a bubble and returns a new bubble (the old one is not changed):
 *
 * - `message` with kind `answer`: partial messages carry text deltas that are appended; the
 *   non-partial message that follows carries the whole text and replaces what the deltas
 *   built. Thought parts go to the steps as thoughts, whatever the kind.
 * - `message` with kind `step` / `thought`: function calls, function results (summaries), the
 *   search agents' notes and thoughts, into the collapsed steps list.
 * - `request_input`: the checkpoint card (`bubble.checkpoint`), status `paused`.
 * - `done`: `completed` (citations, and the answer when nothing streamed) or `paused`.
 * - `error`: status `error` with `{code, message}`.
 *
 * Bubble continuity: `beginResume(bubble, choice)` records the user's choice and the same
 * bubble then takes the events of the /chat/resume stream — steps and answer keep
 * accumulating, no new bubble is made.
 *
 * `fromSession(session)` rebuilds the message list of GET /sessions/{id}: user messages, and
 * one bubble per turn in which intermediate events (search subagents), tool calls and
 * thoughts are steps; a `pending_hitl` becomes the checkpoint of its turn's bubble.
 *
 * The bubble and its events are bubble.js, the session's message list history.js; this module
 * is their one name.
 */

export {
  abortResume,
  applyEvent,
  applyEvents,
  beginResume,
  checkpointFrom,
  createBubble,
  createUserMessage,
  stepSummary,
  stopBubble,
} from "./bubble.js";
export {
  fromSession,
  pendingBubble,
  replaceMessage,
  rewindTarget,
  startTurn,
  truncateAt,
} from "./history.js";
