/**
 * The deep-research checkpoint card: its model from a `request_input` payload (or a session's
 * `pending_hitl`), and the POST /chat/resume body from the user's choice.
 *
 * Payload (services/agent/research/evidence.py `checkpoint_payload`): request,
 * extension_number, max_extensions, covered_summary, gaps, justification, trigger
 * ("budget_exhausted" | "gaps" | "agent_request"), papers, evidence_count, tool_calls_used,
 * words_retrieved, ceilings {budget, word_ceiling, max_chunks}, next_ceilings {...}.
 *
 * Labels are English by default; pass `t(id, args)` (e.g. backed by Fluent, ids as in
 * addon/locale/en-US/sidebar.ftl) to localize them.
 */

export const ACTIONS = Object.freeze({ EXTEND: "extend_budget", SYNTHESIZE: "synthesize" });
export const GUIDANCE_MAX = 2000;

const number = (n) => new Intl.NumberFormat("en-US").format(n);
const plural = (n, one, many) => `${number(n)} ${n === 1 ? one : many}`;

/** English strings; keys match the Fluent ids in sidebar.ftl without the "zocrates-card-" prefix. */
export const ENGLISH = Object.freeze({
  badge: ({ number: k, max }) => `Deep Research: Extension ${k} of ${max}`,
  "badge-final": () => "Deep Research: no extensions left",
  "grant-label": ({ calls, words }) =>
    `Grant Deep Research Extension (+${plural(calls, "call", "calls")}, +${plural(words, "word", "words")})`,
  "synthesize-label": () => "Synthesize Response with Existing Evidence",
  "guidance-placeholder": () =>
    "Steer the search (optional), e.g. “focus on the ablation in Table 3”",
  "covered-heading": () => "What the search covered",
  "gaps-heading": () => "Not found yet",
  "trigger-budget_exhausted": () => "The search used up its budget before it finished.",
  "trigger-gaps": () => "The search left parts of the question without evidence.",
  "trigger-agent_request": () => "The search agent asked for more room to finish.",
  stats: ({ evidence, calls, budget, words, ceiling }) =>
    `${plural(evidence, "passage", "passages")} found with ${number(calls)} of ${number(budget)} ` +
    `searches and ${number(words)} of ${number(ceiling)} words.`,
  // The card around the model (src/ui/card-view.js) and what each choice costs (format.js).
  title: () => "The search paused before answering",
  "choose-prompt": () => "Choose how to continue.",
  "meter-searches": () => "Searches",
  "meter-words": () => "Words read",
  "meter-value": ({ used, of }) => `${number(used)} of ${number(of)}`,
  "passages-found": () => "Passages found",
  "meter-count": ({ count }) => number(count),
  "from-papers": ({ count }) => `from ${plural(count, "paper", "papers")}`,
  "open-page": ({ page }) => `Open p. ${page} in the reader`,
  open: () => "Open in the reader",
  page: ({ page }) => `p. ${page}`,
  "nothing-found": () => "Nothing relevant was found yet.",
  "guidance-label": () => "Guidance for the next pass",
  "guidance-optional": () => "(optional)",
  "guidance-kept": () => "The guidance is kept with your choice.",
  "guidance-shortcut": ({ shortcut }) => `${shortcut} grants the extension with this guidance.`,
  discard: () => "Discard this turn",
  "discard-title": () =>
    "Remove this question and its search from the chat; the question comes back to the box below",
  "cost-grant": () => "Another search pass, steered by your guidance, then the answer.",
  "cost-grant-chunks": ({ chunks }) =>
    `Another search pass, steered by your guidance, then the answer from up to ${plural(chunks, "passage", "passages")}.`,
  "cost-last-extension": () => "This is the last extension.",
  "cost-more-extensions": ({ count }) =>
    `${plural(count, "more extension", "more extensions")} possible after this one.`,
  "cost-none-left": () => "No extensions left for this question.",
  "cost-synthesize": ({ count }) =>
    `No more searching: answers now from the ${plural(count, "passage", "passages")} found so far.`,
});

export function englishT(id, args = {}) {
  const f = ENGLISH[id];
  return f ? f(args) : id;
}

const int = (v, fallback = 0) => (Number.isFinite(Number(v)) ? Math.trunc(Number(v)) : fallback);

/**
 * The card's model.
 * @param {{interruptId?: string, interrupt_id?: string, invocationId?: string,
 *          invocation_id?: string, message?: string, payload: object}} checkpoint
 *   a bubble's `checkpoint` (messages.js) or the raw `request_input` / `pending_hitl` data
 * @param {{t?: (id: string, args?: object) => string}} [options]
 */
export function buildCardModel(checkpoint, { t = englishT } = {}) {
  const cp = checkpoint || {};
  const p = cp.payload && typeof cp.payload === "object" ? cp.payload : {};
  const ceilings = p.ceilings || {};
  const next = p.next_ceilings || {};
  const extensionNumber = Math.max(1, int(p.extension_number, 1));
  const maxExtensions = Math.max(0, int(p.max_extensions, 0));
  const delta = {
    calls: Math.max(0, int(next.budget) - int(ceilings.budget)),
    words: Math.max(0, int(next.word_ceiling) - int(ceilings.word_ceiling)),
    chunks: Math.max(0, int(next.max_chunks) - int(ceilings.max_chunks)),
  };
  const canExtend =
    extensionNumber <= maxExtensions && (delta.calls > 0 || delta.words > 0 || delta.chunks > 0);
  const trigger = ["budget_exhausted", "gaps", "agent_request"].includes(p.trigger)
    ? p.trigger
    : "gaps";
  const gaps = (Array.isArray(p.gaps) ? p.gaps : []).map((g) => String(g).trim()).filter(Boolean);
  return {
    interruptId: String(cp.interruptId ?? cp.interrupt_id ?? ""),
    invocationId: String(cp.invocationId ?? cp.invocation_id ?? ""),
    message: String(cp.message ?? ""),
    request: String(p.request ?? ""),
    extensionNumber,
    maxExtensions,
    badge: canExtend
      ? t("badge", { number: extensionNumber, max: maxExtensions })
      : t("badge-final"),
    trigger,
    triggerText: t(`trigger-${trigger}`),
    coveredHeading: t("covered-heading"),
    coveredSummary: String(p.covered_summary ?? "").trim(),
    gapsHeading: t("gaps-heading"),
    gaps,
    justification: String(p.justification ?? "").trim(),
    papers: (Array.isArray(p.papers) ? p.papers : []).map(String),
    stats: {
      evidenceCount: int(p.evidence_count),
      toolCallsUsed: int(p.tool_calls_used),
      budget: int(ceilings.budget),
      wordsRetrieved: int(p.words_retrieved),
      wordCeiling: int(ceilings.word_ceiling),
      maxChunks: int(ceilings.max_chunks),
    },
    statsText: t("stats", {
      evidence: int(p.evidence_count),
      calls: int(p.tool_calls_used),
      budget: int(ceilings.budget),
      words: int(p.words_retrieved),
      ceiling: int(ceilings.word_ceiling),
    }),
    ceilings: {
      budget: int(ceilings.budget),
      wordCeiling: int(ceilings.word_ceiling),
      maxChunks: int(ceilings.max_chunks),
    },
    nextCeilings: {
      budget: int(next.budget),
      wordCeiling: int(next.word_ceiling),
      maxChunks: int(next.max_chunks),
    },
    guidance: { placeholder: t("guidance-placeholder"), maxLength: GUIDANCE_MAX },
    primary: {
      action: ACTIONS.EXTEND,
      label: t("grant-label", delta),
      delta,
      disabled: !canExtend,
    },
    secondary: { action: ACTIONS.SYNTHESIZE, label: t("synthesize-label"), disabled: false },
  };
}

/**
 * The POST /chat/resume body.
 * @param {{sessionId: string, card: {interruptId, invocationId}, action: string, guidance?: string}} choice
 */
export function resumeBody({ sessionId, card, action, guidance = "" }) {
  if (!sessionId) throw new TypeError("resumeBody: sessionId is required");
  if (!card || !card.interruptId || !card.invocationId) {
    throw new TypeError("resumeBody: the card has no interrupt or invocation id");
  }
  if (action !== ACTIONS.EXTEND && action !== ACTIONS.SYNTHESIZE) {
    throw new RangeError(
      `resumeBody: action must be "${ACTIONS.EXTEND}" or "${ACTIONS.SYNTHESIZE}"`,
    );
  }
  const text = String(guidance ?? "").trim();
  if (text.length > GUIDANCE_MAX) {
    throw new RangeError(
      `The guidance has ${text.length} characters; at most ${GUIDANCE_MAX} fit.`,
    );
  }
  return {
    session_id: sessionId,
    invocation_id: card.invocationId,
    interrupt_id: card.interruptId,
    response: { action, guidance: text || null },
  };
}
