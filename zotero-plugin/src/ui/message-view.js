/**
 * The messages: a user's question (with its scope, Edit and Rewind) and an assistant's
 * bubble (status, research steps, the live activity line, the offline model's note, the
 * answer with its citations, an error, the checkpoint card, and, once it is complete, Copy,
 * Save as note and what the turn cost).
 *
 * Nodes are keyed by message id and kept: a streaming bubble is updated in place (its answer
 * re-rendered, its steps appended), so a resumed stream visibly continues in the same bubble
 * and the user's open/closed steps and scroll position survive re-renders.
 */
import { renderMarkdown } from "../markdown.js";
import * as S from "../scope.js";
import { renderCheckpointCard } from "./card-view.js";
import { clear, fill } from "./dom.js";
import { createAnswerFoot } from "./answer-foot.js";
import { splitOfflineNotice, truncate } from "./format.js";
import { icon } from "./icons.js";
import { turnErrorActions } from "./notices.js";
import { liveActivity, stepRows, stepsHeadline } from "./steps.js";

const STATUS = {
  paused: "zocrates-answer-status-paused",
  stopped: "zocrates-answer-status-stopped",
  error: "zocrates-answer-status-error",
};

/**
 * @param {object} ctx the view's context (view.js)
 * @param {{noticeBody: Function}} parts the notice view's noticeBody (an answer's error)
 */
export function createMessagesView(ctx, { noticeBody }) {
  const { doc, h, controller, env, ui } = ctx;
  const foot = createAnswerFoot(ctx);
  const listEl = h("div", { class: "zc-message-list" });

  function contextLabel(context) {
    if (!context) return "";
    const scope = S.scopeFromContext(context);
    const bits = [S.scopeLabel(scope, h.t)];
    const images = S.imageCount(scope);
    const passages = scope.snippets.length - images;
    if (passages) bits.push(h.t("zocrates-scope-snippets", { count: passages }));
    if (images) bits.push(h.t("zocrates-scope-images", { count: images }));
    return bits.join(" · ");
  }

  /** A question's Edit or Rewind: an icon and a label (`id`), its tooltip `${id}-button`. */
  function turnButton(cls, id, iconName, disabled, onClick) {
    return h(
      "button",
      {
        type: "button",
        class: `zc-link-btn ${cls}`,
        disabled,
        l10n: `${id}-button`,
        on: { click: onClick },
      },
      [icon(doc, iconName, { size: 13 }), h("span", { l10n: id })],
    );
  }

  function userNode(m, state) {
    const canRewind = !!m.invocationId && !state.streaming;
    return h("div", { class: "zocrates-message user", "data-id": m.id }, [
      h("div", { class: "zc-user-text" }, [m.text]),
      h("div", { class: "zc-user-foot" }, [
        m.context
          ? h("span", { class: "zc-user-scope", l10n: "zocrates-sidebar-user-scope" }, [
              contextLabel(m.context),
            ])
          : null,
        h("span", { class: "zc-spacer" }),
        h("div", { class: "zc-user-actions" }, [
          turnButton("zc-edit", "zocrates-sidebar-edit", "pencil", !canRewind, () =>
            controller.startEdit(m.id),
          ),
          turnButton("zc-rewind", "zocrates-sidebar-rewind", "rewind", !canRewind, () =>
            controller.rewindTo(m.id),
          ),
        ]),
      ]),
    ]);
  }

  function stepRowNode(row) {
    const iconName =
      {
        search: "search",
        read: "book",
        toc: "list",
        research: "search",
        conclude: "check",
        thought: "thought",
        note: "info",
        checkpoint: "flag",
        decision: "arrowRight",
        "extend-request": "flag",
      }[row.kind] || "sparkle";
    const label = row.link
      ? h(
          "span",
          {
            class: "zc-step-label zc-step-link",
            role: "link",
            tabindex: "0",
            "data-item-key": row.link.itemKey,
            "data-page": row.link.page ? String(row.link.page) : null,
            l10n: "zocrates-answer-open-reader",
          },
          [row.label],
        )
      : h("span", { class: "zc-step-label" }, [row.label]);
    return h(
      "li",
      { class: `step ${row.kind}${row.running ? " running" : ""}${row.error ? " failed" : ""}` },
      [
        icon(doc, iconName, { size: 13, className: "zc-step-icon" }),
        h("div", { class: "zc-step-body" }, [
          label,
          row.detail
            ? h("span", { class: "zc-step-detail" }, [
                row.kind === "thought" ? row.detail : truncate(row.detail, 220),
              ])
            : null,
          row.error ? h("span", { class: "zc-step-error" }, [truncate(row.error, 160)]) : null,
        ]),
      ],
    );
  }

  function createAssistantParts(m) {
    const headStatus = h("span", { class: "zc-bubble-status" });
    const head = h("div", { class: "zc-bubble-head" }, [
      h("span", { class: "zc-avatar", "aria-hidden": "true" }, ["Z"]),
      h("span", { class: "zc-author", l10n: "zocrates-answer-author" }),
      headStatus,
    ]);
    const stepsList = h("ol", { class: "zc-steps" });
    const stepsSummaryText = h("span", { class: "zc-steps-headline" });
    const steps = h(
      "details",
      {
        class: "intermediate-steps-bubble",
        hidden: true,
        on: { toggle: () => ui.stepsOpen.set(m.id, steps.open) },
      },
      [
        h("summary", {}, [
          icon(doc, "chevronRight", { size: 12, className: "zc-disclosure" }),
          h("span", { class: "zc-steps-title", l10n: "zocrates-answer-steps-title" }),
          stepsSummaryText,
        ]),
        stepsList,
      ],
    );
    const live = h("div", { class: "zc-live", hidden: true }, [
      h("span", { class: "zc-spinner" }),
      h("span", { class: "zc-live-text" }),
    ]);
    const offline = h("div", { class: "zc-offline-notice", hidden: true, role: "note" });
    const answer = h("div", { class: "zocrates-answer" });
    const error = h("div", { class: "zc-bubble-error", hidden: true });
    const cardSlot = h("div", { class: "zc-card-slot" });
    const foot = h("div", { class: "zc-bubble-foot", hidden: true });
    const node = h("div", { class: "zocrates-message assistant", "data-id": m.id }, [
      head,
      steps,
      live,
      offline,
      answer,
      error,
      cardSlot,
      foot,
    ]);
    return {
      node,
      parts: {
        headStatus,
        steps,
        stepsList,
        stepsSummaryText,
        live,
        offline,
        answer,
        error,
        cardSlot,
        foot,
        footKey: null,
        stepsCount: 0,
        answerKey: null,
        cardId: null,
        errorKey: null,
      },
    };
  }

  function updateAssistant(entry, m, state, question) {
    const p = entry.parts;
    const streaming = state.streaming?.bubbleId === m.id;
    entry.node.setAttribute("data-status", streaming ? "streaming" : m.status);
    entry.node.classList.toggle("streaming", streaming);
    entry.node.setAttribute("data-passes", String(m.passes || 1));

    // status in the head
    const rows = stepRows(m.steps, h.l10n ? h.t : undefined);
    const { offline, notice, body } = splitOfflineNotice(m.answer);
    const status = streaming
      ? body.trim()
        ? "zocrates-answer-status-writing"
        : "zocrates-answer-status-researching"
      : STATUS[m.status] || null;
    if (status) h.localize(p.headStatus, status);
    else {
      p.headStatus.removeAttribute("data-zc-l10n");
      clear(p.headStatus);
    }

    // steps
    p.steps.hidden = rows.length === 0;
    if (rows.length) {
      fill(h, p.stepsSummaryText, [
        stepsHeadline(rows)
          .map(([id, args]) => h.t(id, args))
          .join(" · "),
      ]);
      const sig = rows
        .map((r) => `${r.kind}${r.running ? 1 : 0}${r.label}${r.detail.length}`)
        .join("|");
      if (sig !== p.stepsSig) {
        p.stepsSig = sig;
        fill(h, p.stepsList, rows.map(stepRowNode));
      }
      const wanted = ui.stepsOpen.has(m.id) ? ui.stepsOpen.get(m.id) : ui.showThoughts;
      if (p.steps.open !== wanted) p.steps.open = wanted;
    }

    // live activity line while nothing is written yet
    const showLive = streaming && !body.trim();
    p.live.hidden = !showLive;
    if (showLive) {
      const what = liveActivity(rows);
      fill(h, p.live.lastChild, [Array.isArray(what) ? h.t(...what) : what.text]);
    }

    // the offline model's notice
    p.offline.hidden = !offline;
    if (offline && p.offline.zcText !== notice) {
      p.offline.zcText = notice;
      // Short, with the built-in model's own words in the tooltip.
      p.offline.setAttribute("title", notice);
      fill(h, p.offline, [
        icon(doc, "info", { size: 14 }),
        h("div", {}, [
          h("strong", { l10n: "zocrates-answer-offline-label" }),
          " ",
          h("span", { l10n: "zocrates-answer-offline-text" }),
          env.openPreferences
            ? [
                " ",
                h(
                  "a",
                  {
                    href: "#",
                    role: "button",
                    class: "zc-configure-model",
                    on: {
                      click: (e) => {
                        e.preventDefault();
                        e.stopPropagation();
                        env.openPreferences();
                      },
                    },
                  },
                  [h.t("zocrates-answer-choose-model")],
                ),
              ]
            : null,
        ]),
      ]);
    }

    // the answer (Markdown, citations as links)
    const answerKey = `${body.length}|${body.slice(-40)}|${(m.citations || []).length}`;
    if (answerKey !== p.answerKey) {
      p.answerKey = answerKey;
      fill(h, p.answer, body ? renderMarkdown(body, { citations: m.citations || [], h }) : []);
    }
    p.answer.hidden = !body;

    // an error that ended the stream
    const errKey = m.status === "error" && m.error ? `${m.error.code}|${m.error.message}` : null;
    if (errKey !== p.errorKey) {
      p.errorKey = errKey;
      p.error.hidden = !errKey;
      if (errKey) {
        const actions = turnErrorActions(m.error.code);
        fill(
          h,
          p.error,
          noticeBody({ level: "error", message: m.error.message, actions }, { compact: true }),
        );
        p.error.setAttribute("data-code", m.error.code);
      } else clear(p.error);
    }

    foot.render(p, m, { streaming, body, question });

    // the checkpoint card
    const cardId = m.checkpoint && !streaming ? m.checkpoint.interruptId : null;
    if (cardId !== p.cardId) {
      p.cardId = cardId;
      clear(p.cardSlot);
      if (cardId) {
        // interrupt ids repeat across turns (interrupt_ext_1, ...): key drafts by invocation too
        const interrupt = `${m.checkpoint.invocationId || m.id}:${m.checkpoint.interruptId}`;
        p.cardSlot.appendChild(
          renderCheckpointCard(h, doc, m.checkpoint, {
            guidance: ui.guidance.get(interrupt) || "",
            isMac: env.isMac,
            onGuidance: (v) => ui.guidance.set(interrupt, v),
            onGrant: (g) => controller.grant(m.id, g),
            onSynthesize: (g) => controller.synthesize(m.id, g),
            onDiscard: () => controller.discardTurn(m.id),
            onOpen: (where) => env.openCitation?.(where),
          }),
        );
      }
    }
  }

  function messageSig(m, state) {
    if (m.kind === "user")
      return `u|${m.text}|${m.invocationId}|${state.streaming ? 1 : 0}|${S.contextSignature(m.context)}`;
    return null; // assistants update in place
  }

  function renderMessages(state) {
    let created = false;
    const seen = new Set();
    let prev = null;
    const editingId = state.editing?.userMessageId || null;
    let afterEditing = false;
    let lastQuestion = "";
    for (const m of state.messages) {
      if (m.kind === "user") lastQuestion = m.text || "";
      seen.add(m.id);
      let entry = ui.nodes.get(m.id);
      if (m.kind === "user") {
        const sig = messageSig(m, state);
        if (!entry || entry.sig !== sig) {
          const node = userNode(m, state);
          if (entry) entry.node.replaceWith(node);
          else created = true;
          entry = { node, sig };
          ui.nodes.set(m.id, entry);
        }
      } else {
        if (!entry) {
          entry = createAssistantParts(m);
          ui.nodes.set(m.id, entry);
          created = true;
        }
        updateAssistant(entry, m, state, lastQuestion);
      }
      const isEditing = m.id === editingId;
      entry.node.classList.toggle("zc-editing-target", isEditing);
      entry.node.classList.toggle("zc-dimmed", afterEditing);
      if (isEditing) afterEditing = true;
      // keep document order without moving nodes that are already in place
      const want = prev ? prev.nextSibling : listEl.firstChild;
      if (want !== entry.node) listEl.insertBefore(entry.node, want);
      prev = entry.node;
    }
    for (const [id, entry] of ui.nodes) {
      if (!seen.has(id)) {
        entry.node.remove();
        ui.nodes.delete(id);
      }
    }
    listEl.hidden = state.phase === "offline";
    return created;
  }

  return { listEl, render: renderMessages };
}
