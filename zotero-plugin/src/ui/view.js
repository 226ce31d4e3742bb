/**
 * The chat pane's DOM, rendered from the controller's state (controller.js). Small functions
 * each build one part (header, session list, notice, messages, a bubble, the composer) with
 * dom.js's h (createElementNS + text nodes; markdown through markdown.js's renderMarkdown).
 *
 * Message nodes are keyed by message id and kept: a streaming bubble is updated in place (its
 * answer re-rendered, its steps appended), so a resumed stream visibly continues in the same
 * bubble and the user's open/closed steps and scroll position survive re-renders.
 */
import { CITATION_CLASS, renderMarkdown } from "../markdown.js";
import * as S from "../scope.js";
import { renderCheckpointCard } from "./card-view.js";
import { clear, createH, fill, isSendShortcut } from "./dom.js";
import { DEFAULT_TITLE, plural, relativeTime, splitOfflineNotice, truncate } from "./format.js";
import { icon } from "./icons.js";
import { liveActivity, stepRows, stepsHeadline } from "./steps.js";

const ACTION_LABELS = {
  retry: "Try again",
  settings: "Open settings",
  "show-card": "Show the checkpoint",
  "discard-paused": "Discard the paused turn",
  reload: "Reload chat",
  "new-chat": "New chat",
};

const STATUS_LABELS = {
  paused: "Waiting for your decision",
  stopped: "Stopped",
  error: "Interrupted",
};

const MODE_LABELS = { items: "Selected", collection: "Collection", library: "Library" };

const EXAMPLES = [
  "What are the main findings of the selected papers?",
  "Which methods do these papers use, and how do they differ?",
  "What limitations do the authors acknowledge?",
];

/**
 * @param {{doc: Document, root: Element, controller: object, env: object}} options
 *   env: {openCitation({itemKey, page}), openURL?(url), openPreferences?(), isMac?, canCollapse?,
 *         onCollapse?(), prefs?, now?()}
 */
export function createPaneView({ doc, root, controller, env = {} }) {
  const h = createH(doc);
  const now = env.now || (() => Date.now());
  const ui = {
    sessionsOpen: false,
    renamingId: null,
    confirmDeleteId: null,
    stepsOpen: new Map(), // bubble id -> bool
    guidance: new Map(), // interrupt id -> draft
    nodes: new Map(), // message id -> {node, parts, sig}
    composerVersion: -1,
    revealVersion: 0,
    showThoughts: !!env.prefs?.get?.("showThoughts"),
  };

  // ---------------------------------------------------------------- skeleton

  const titleText = h("span", { class: "zc-title-text" });
  const titleBtn = h(
    "button",
    {
      type: "button",
      class: "zc-title-btn",
      "aria-haspopup": "listbox",
      "aria-expanded": "false",
      title: "Your chats",
      on: { click: () => toggleSessions() },
    },
    [
      h("span", { class: "zc-logo", "aria-hidden": "true" }, ["Z"]),
      titleText,
      icon(doc, "chevronDown", { size: 14, className: "zc-caret" }),
    ],
  );
  const header = h("header", { class: "zc-header" }, [
    titleBtn,
    h("div", { class: "zc-header-actions" }, [
      h(
        "button",
        {
          type: "button",
          class: "zc-btn zc-new-chat",
          title: "Start a new chat",
          on: { click: () => newChat() },
        },
        [icon(doc, "plus"), h("span", {}, ["New chat"])],
      ),
      env.openPreferences
        ? h(
            "button",
            {
              type: "button",
              class: "zc-icon-btn zc-open-settings",
              title: "Zocrates settings",
              "aria-label": "Zocrates settings",
              on: { click: () => env.openPreferences() },
            },
            [icon(doc, "gear")],
          )
        : null,
      env.canCollapse
        ? h(
            "button",
            {
              type: "button",
              class: "zc-icon-btn zc-collapse",
              title: "Hide Zocrates",
              "aria-label": "Hide Zocrates",
              on: { click: () => env.onCollapse?.() },
            },
            [icon(doc, "panel")],
          )
        : null,
    ]),
  ]);
  const sessionsEl = h("div", {
    class: "zc-sessions",
    role: "listbox",
    "aria-label": "Your chats",
    hidden: true,
  });
  const noticeEl = h("div", { class: "zc-notice", hidden: true });
  const messagesEl = h("div", {
    class: "zc-messages",
    role: "log",
    "aria-live": "polite",
    "aria-relevant": "additions",
    tabindex: "-1",
  });
  const listEl = h("div", { class: "zc-message-list" });
  const emptyEl = h("div", { class: "zc-empty" });
  messagesEl.append(emptyEl, listEl);

  // composer
  const textarea = h("textarea", {
    class: "zc-input",
    rows: "2",
    placeholder: "Ask about your papers…",
    "aria-label": "Your question",
    on: {
      input: () => {
        controller.setDraft(textarea.value);
        autoGrow();
      },
      keydown: onComposerKey,
    },
  });
  const sendBtn = h(
    "button",
    {
      type: "button",
      class: "zc-send",
      title: `Ask (${shortcut()})`,
      on: { click: () => sendNow() },
    },
    [icon(doc, "send"), h("span", {}, ["Ask"])],
  );
  const stopBtn = h(
    "button",
    {
      type: "button",
      class: "zc-stop",
      title: "Stop the answer",
      hidden: true,
      on: { click: () => controller.stop() },
    },
    [icon(doc, "stop"), h("span", {}, ["Stop"])],
  );
  const hintEl = h("span", { class: "zc-hint" }, [`${shortcut()} to ask`]);
  const editingEl = h("div", { class: "zc-editing", hidden: true });
  const scopeEl = h("div", { class: "zc-scope" });
  const snippetsEl = h("div", { class: "zc-snippets" });
  const composer = h("div", { class: "zc-composer" }, [
    editingEl,
    scopeEl,
    snippetsEl,
    h("div", { class: "zc-input-wrap" }, [
      textarea,
      h("div", { class: "zc-composer-foot" }, [
        hintEl,
        h("span", { class: "zc-spacer" }),
        stopBtn,
        sendBtn,
      ]),
    ]),
  ]);

  // The notice sits right above the composer, where the eyes are when an action fails.
  const pane = h("div", { class: "zocrates-pane", "data-phase": "starting" }, [
    header,
    sessionsEl,
    messagesEl,
    noticeEl,
    composer,
  ]);
  clear(root);
  root.appendChild(pane);

  messagesEl.addEventListener("click", onMessagesClick);
  messagesEl.addEventListener("keydown", onMessagesKey);
  pane.addEventListener("keydown", onPaneKey);
  // A click anywhere outside the chat list closes it.
  const onDocMouseDown = (e) => {
    if (ui.sessionsOpen && !sessionsEl.contains(e.target) && !titleBtn.contains(e.target))
      toggleSessions(false);
  };
  doc.addEventListener("mousedown", onDocMouseDown, true);

  function shortcut() {
    return env.isMac ? "⌘↩" : "Ctrl+Enter";
  }

  // ---------------------------------------------------------------- events

  function onComposerKey(e) {
    if (isSendShortcut(e, env.isMac)) {
      e.preventDefault();
      sendNow();
    } else if (e.key === "Escape") {
      if (controller.state.editing) {
        e.preventDefault();
        controller.cancelEdit();
      } else if (controller.state.streaming) {
        e.preventDefault();
        controller.stop();
      }
    }
  }

  function onPaneKey(e) {
    if (e.key === "Escape" && ui.sessionsOpen) {
      e.preventDefault();
      toggleSessions(false);
      titleBtn.focus();
    }
  }

  async function sendNow() {
    const text = textarea.value;
    if (!text.trim()) {
      textarea.focus();
      return;
    }
    await controller.send(text);
  }

  async function newChat() {
    toggleSessions(false);
    await controller.newSession();
    textarea.focus();
  }

  function activate(target) {
    const cite = target.closest?.(`a.${CITATION_CLASS}, a.zc-paper-link, .zc-step-link`);
    if (cite) {
      const itemKey = cite.getAttribute("data-item-key");
      const page = Number(cite.getAttribute("data-page")) || null;
      const quote = cite.getAttribute("data-quote") || "";
      if (itemKey) env.openCitation?.({ itemKey, page, quote });
      return true;
    }
    const link = target.closest?.("a[href]");
    if (link) {
      const href = link.getAttribute("href");
      if (href && href !== "#") env.openURL?.(href);
      return true;
    }
    return false;
  }

  function onMessagesClick(e) {
    const a = e.target.closest?.("a");
    if (a || e.target.closest?.(".zc-step-link")) {
      e.preventDefault();
      if (!a?.classList.contains("zc-paper-link")) activate(e.target);
    }
  }

  function onMessagesKey(e) {
    if (
      (e.key === "Enter" || e.key === " ") &&
      e.target.matches?.(`a.${CITATION_CLASS}, .zc-step-link`)
    ) {
      e.preventDefault();
      activate(e.target);
    }
  }

  // ---------------------------------------------------------------- header and sessions

  function toggleSessions(open = !ui.sessionsOpen) {
    ui.sessionsOpen = open;
    ui.renamingId = null;
    ui.confirmDeleteId = null;
    if (open) controller.refreshSessions();
    render();
    if (open) sessionsEl.querySelector(".zc-session[aria-selected='true'], .zc-session")?.focus();
  }

  function renderHeader(state) {
    fill(h, titleText, [state.session ? state.session.title || DEFAULT_TITLE : "Zocrates"]);
    titleBtn.setAttribute("aria-expanded", String(ui.sessionsOpen));
  }

  function sessionRow(s, state) {
    const current = state.session?.id === s.id;
    const open = () => {
      toggleSessions(false);
      controller.openSession(s.id).then(() => textarea.focus());
    };
    if (ui.renamingId === s.id) {
      const input = h("input", {
        type: "text",
        class: "zc-rename-input",
        maxlength: "200",
        "aria-label": "Chat title",
        props: { value: s.title || "" },
        on: {
          keydown: async (e) => {
            if (e.key === "Enter") {
              e.preventDefault();
              ui.renamingId = null;
              await controller.renameSession(s.id, input.value);
              sessionsEl.querySelector(`[data-session-id="${s.id}"]`)?.focus();
            } else if (e.key === "Escape") {
              e.preventDefault();
              e.stopPropagation();
              ui.renamingId = null;
              render();
            }
          },
        },
      });
      const row = h(
        "div",
        {
          class: "zc-session zc-renaming",
          "data-session-id": s.id,
          role: "option",
          "aria-selected": String(current),
        },
        [
          input,
          h(
            "button",
            {
              type: "button",
              class: "zc-btn zc-btn-small",
              on: {
                click: async () => {
                  ui.renamingId = null;
                  await controller.renameSession(s.id, input.value);
                },
              },
            },
            ["Save"],
          ),
        ],
      );
      Promise.resolve().then(() => {
        input.focus();
        input.select();
      });
      return row;
    }
    if (ui.confirmDeleteId === s.id) {
      return h(
        "div",
        {
          class: "zc-session zc-confirm",
          "data-session-id": s.id,
          role: "option",
          "aria-selected": String(current),
        },
        [
          h("span", { class: "zc-confirm-text" }, [
            `Delete “${truncate(s.title || DEFAULT_TITLE, 40)}” and its history?`,
          ]),
          h(
            "button",
            {
              type: "button",
              class: "zc-btn zc-btn-small zc-danger",
              on: {
                click: async () => {
                  ui.confirmDeleteId = null;
                  await controller.deleteSession(s.id);
                },
              },
            },
            ["Delete"],
          ),
          h(
            "button",
            {
              type: "button",
              class: "zc-btn zc-btn-small",
              on: {
                click: () => {
                  ui.confirmDeleteId = null;
                  render();
                },
              },
            },
            ["Cancel"],
          ),
        ],
      );
    }
    return h(
      "div",
      {
        class: `zc-session${current ? " zc-current" : ""}`,
        role: "option",
        tabindex: "0",
        "aria-selected": String(current),
        "data-session-id": s.id,
        on: {
          click: (e) => {
            if (!e.target.closest("button")) open();
          },
          keydown: (e) => {
            if (e.target !== e.currentTarget) return;
            if (e.key === "Enter") {
              e.preventDefault();
              open();
            } else if (e.key === "F2") {
              e.preventDefault();
              ui.renamingId = s.id;
              render();
            } else if (e.key === "Delete" || e.key === "Backspace") {
              e.preventDefault();
              ui.confirmDeleteId = s.id;
              render();
            } else if (e.key === "ArrowDown" || e.key === "ArrowUp") {
              e.preventDefault();
              const rows = [...sessionsEl.querySelectorAll(".zc-session[tabindex]")];
              const k = rows.indexOf(e.currentTarget) + (e.key === "ArrowDown" ? 1 : -1);
              rows[Math.max(0, Math.min(rows.length - 1, k))]?.focus();
            }
          },
        },
      },
      [
        h("div", { class: "zc-session-main" }, [
          h("span", { class: "zc-session-title" }, [s.title || DEFAULT_TITLE]),
          h("span", { class: "zc-session-meta" }, [relativeTime(s.updated_at, now())]),
        ]),
        h("div", { class: "zc-session-actions" }, [
          h(
            "button",
            {
              type: "button",
              class: "zc-icon-btn zc-rename",
              title: "Rename (F2)",
              "aria-label": "Rename",
              on: {
                click: () => {
                  ui.renamingId = s.id;
                  render();
                },
              },
            },
            [icon(doc, "pencil", { size: 14 })],
          ),
          h(
            "button",
            {
              type: "button",
              class: "zc-icon-btn zc-delete",
              title: "Delete (Del)",
              "aria-label": "Delete",
              on: {
                click: () => {
                  ui.confirmDeleteId = s.id;
                  render();
                },
              },
            },
            [icon(doc, "trash", { size: 14 })],
          ),
        ]),
      ],
    );
  }

  function renderSessions(state) {
    sessionsEl.hidden = !ui.sessionsOpen;
    if (!ui.sessionsOpen) return;
    const focused =
      doc.activeElement && sessionsEl.contains(doc.activeElement)
        ? doc.activeElement.getAttribute("data-session-id")
        : null;
    fill(h, sessionsEl, [
      h("div", { class: "zc-sessions-head" }, [
        h("span", {}, ["Chats"]),
        h("span", { class: "zc-muted" }, [plural(state.sessions.length, "chat")]),
        h("span", { class: "zc-spacer" }),
        h("span", { class: "zc-muted zc-keys" }, ["↑↓ open ↩ · F2 rename · Del delete"]),
      ]),
      state.sessions.length
        ? h(
            "div",
            { class: "zc-session-list" },
            state.sessions.map((s) => sessionRow(s, state)),
          )
        : h("p", { class: "zc-muted zc-sessions-empty" }, [
            "No chats yet. Ask a question to start one.",
          ]),
    ]);
    if (focused)
      sessionsEl.querySelector(`.zc-session[data-session-id="${focused}"][tabindex]`)?.focus();
  }

  // ---------------------------------------------------------------- notice

  function inlineText(message) {
    // Our messages use `code` for commands and paths: render them with the Markdown renderer
    // (safe: text nodes only), unwrapping the paragraph.
    const nodes = renderMarkdown(String(message || ""), { h });
    const out = [];
    for (const n of nodes) {
      if (n.tagName && n.tagName.toLowerCase() === "p") out.push(...n.childNodes);
      else out.push(n);
    }
    // URLs in our messages are addresses to read, not links to follow.
    return out.map((n) =>
      n.tagName && n.tagName.toLowerCase() === "a"
        ? h("span", { class: "zc-url" }, [n.textContent])
        : n,
    );
  }

  function noticeBody(notice, { compact = false } = {}) {
    return [
      icon(doc, notice.level === "error" ? "alert" : "info", { className: "zc-notice-icon" }),
      h("div", { class: "zc-notice-body" }, [
        h("div", { class: "zc-notice-text" }, inlineText(notice.message)),
        notice.actions?.length
          ? h(
              "div",
              { class: "zc-notice-actions" },
              notice.actions.map((a, k) =>
                h(
                  "button",
                  {
                    type: "button",
                    class: `zc-btn zc-btn-small${k === 0 ? " zc-btn-accent" : ""}`,
                    "data-action": a,
                    on: {
                      click: () =>
                        a === "settings" ? env.openPreferences?.() : controller.runAction(a),
                    },
                  },
                  [ACTION_LABELS[a] || a],
                ),
              ),
            )
          : null,
      ]),
      compact
        ? null
        : h(
            "button",
            {
              type: "button",
              class: "zc-icon-btn zc-notice-close",
              title: "Dismiss",
              "aria-label": "Dismiss",
              on: { click: () => controller.dismissNotice() },
            },
            [icon(doc, "x", { size: 14 })],
          ),
    ];
  }

  function renderNotice(state) {
    const n = state.phase === "offline" ? null : state.notice;
    noticeEl.hidden = !n;
    if (!n) {
      noticeEl.removeAttribute("data-code");
      return;
    }
    if (noticeEl.zcNotice === n) return;
    noticeEl.zcNotice = n;
    noticeEl.setAttribute("data-level", n.level);
    noticeEl.setAttribute("data-code", n.code);
    noticeEl.setAttribute("role", n.level === "error" ? "alert" : "status");
    fill(h, noticeEl, noticeBody(n));
  }

  // ---------------------------------------------------------------- empty and offline states

  function renderEmpty(state) {
    const show = state.phase === "offline" || (!state.messages.length && !state.loadingSession);
    emptyEl.hidden = !show;
    if (!show) return;
    const key = `${state.phase}|${state.notice?.message || ""}|${state.session?.id || ""}`;
    if (emptyEl.zcKey === key) return;
    emptyEl.zcKey = key;
    if (state.phase === "offline") {
      fill(h, emptyEl, [
        h(
          "div",
          {
            class: "zc-empty-card zc-offline",
            role: "alert",
            "data-code": state.notice?.code || "",
          },
          [
            h("h2", {}, ["Cannot reach Zocrates"]),
            state.notice
              ? h(
                  "div",
                  {
                    class: "zc-notice zc-notice-inline",
                    "data-level": "error",
                    "data-code": state.notice.code,
                  },
                  noticeBody(state.notice, { compact: true }),
                )
              : null,
          ],
        ),
      ]);
      return;
    }
    if (state.phase === "starting") {
      fill(h, emptyEl, [
        h("div", { class: "zc-empty-card zc-loading" }, [
          h("span", { class: "zc-spinner" }),
          "Connecting to Zocrates…",
        ]),
      ]);
      return;
    }
    fill(h, emptyEl, [
      h("div", { class: "zc-empty-card" }, [
        h("h2", {}, ["Ask your library"]),
        h("p", { class: "zc-muted" }, [
          "Answers quote your papers and cite item and page; click a citation to open the PDF there. Choose below what to search: the selected papers, the current collection or the whole library.",
        ]),
        h(
          "ul",
          { class: "zc-examples" },
          EXAMPLES.map((q) =>
            h("li", {}, [
              h(
                "button",
                {
                  type: "button",
                  class: "zc-example",
                  on: {
                    click: () => {
                      textarea.value = q;
                      controller.setDraft(q);
                      textarea.focus();
                      autoGrow();
                    },
                  },
                },
                [q],
              ),
            ]),
          ),
        ),
      ]),
    ]);
  }

  // ---------------------------------------------------------------- messages

  function contextLabel(context) {
    if (!context) return "";
    const scope = S.scopeFromContext(context);
    const bits = [S.scopeLabel(scope)];
    if (scope.snippets.length) bits.push(plural(scope.snippets.length, "pinned passage"));
    return bits.join(" · ");
  }

  function userNode(m, state) {
    const canRewind = !!m.invocationId && !state.streaming;
    return h("div", { class: "zocrates-message user", "data-id": m.id }, [
      h("div", { class: "zc-user-text" }, [m.text]),
      h("div", { class: "zc-user-foot" }, [
        m.context
          ? h("span", { class: "zc-user-scope", title: "What this question was asked about" }, [
              contextLabel(m.context),
            ])
          : null,
        h("span", { class: "zc-spacer" }),
        h("div", { class: "zc-user-actions" }, [
          h(
            "button",
            {
              type: "button",
              class: "zc-link-btn zc-edit",
              disabled: !canRewind,
              title:
                "Edit this question: it comes back to the box with its scope; sending replaces this turn and everything after it",
              on: { click: () => controller.startEdit(m.id) },
            },
            [icon(doc, "pencil", { size: 13 }), h("span", {}, ["Edit"])],
          ),
          h(
            "button",
            {
              type: "button",
              class: "zc-link-btn zc-rewind",
              disabled: !canRewind,
              title:
                "Discard this turn and everything after it; the question comes back to the box",
              on: { click: () => controller.rewindTo(m.id) },
            },
            [icon(doc, "rewind", { size: 13 }), h("span", {}, ["Rewind"])],
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
            title: "Open in the reader",
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
      h("span", { class: "zc-author" }, ["Zocrates"]),
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
          h("span", { class: "zc-steps-title" }, ["Research steps"]),
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
    const node = h("div", { class: "zocrates-message assistant", "data-id": m.id }, [
      head,
      steps,
      live,
      offline,
      answer,
      error,
      cardSlot,
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
        stepsCount: 0,
        answerKey: null,
        cardId: null,
        errorKey: null,
      },
    };
  }

  function updateAssistant(entry, m, state) {
    const p = entry.parts;
    const streaming = state.streaming?.bubbleId === m.id;
    entry.node.setAttribute("data-status", streaming ? "streaming" : m.status);
    entry.node.classList.toggle("streaming", streaming);
    entry.node.setAttribute("data-passes", String(m.passes || 1));

    // status in the head
    const rows = stepRows(m.steps);
    const { offline, notice, body } = splitOfflineNotice(m.answer);
    const statusText = streaming
      ? body.trim()
        ? "Writing…"
        : "Researching…"
      : STATUS_LABELS[m.status] || "";
    fill(h, p.headStatus, statusText ? [statusText] : []);

    // steps
    p.steps.hidden = rows.length === 0;
    if (rows.length) {
      fill(h, p.stepsSummaryText, [stepsHeadline(rows)]);
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
    if (showLive) fill(h, p.live.lastChild, [liveActivity(rows)]);

    // the offline model's notice
    p.offline.hidden = !offline;
    if (offline && p.offline.zcText !== notice) {
      p.offline.zcText = notice;
      // Short, with the built-in model's own words in the tooltip.
      p.offline.setAttribute("title", notice);
      fill(h, p.offline, [
        icon(doc, "info", { size: 14 }),
        h("div", {}, [
          h("strong", {}, ["Offline model: "]),
          "quotes your papers word for word instead of writing a synthesis.",
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
                  ["Choose a model…"],
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
        const actions = m.error.code === "stream_interrupted" ? ["reload"] : [];
        fill(
          h,
          p.error,
          noticeBody({ level: "error", message: m.error.message, actions }, { compact: true }),
        );
        p.error.setAttribute("data-code", m.error.code);
      } else clear(p.error);
    }

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
      return `u|${m.text}|${m.invocationId}|${state.streaming ? 1 : 0}|${JSON.stringify(m.context || null).length}`;
    return null; // assistants update in place
  }

  function renderMessages(state) {
    let created = false;
    const seen = new Set();
    let prev = null;
    const editingId = state.editing?.userMessageId || null;
    let afterEditing = false;
    for (const m of state.messages) {
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
        updateAssistant(entry, m, state);
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

  // ---------------------------------------------------------------- composer

  function scopeDetail(scope) {
    if (scope.mode === "items") {
      return scope.items.map((i) => truncate(i.title || i.item_key, 48)).join(" · ");
    }
    if (scope.mode === "collection" && scope.collection)
      return `${scope.collection.name || scope.collection.key}, with its sub-collections`;
    return "Every indexed paper in your library";
  }

  function renderScope(state) {
    const scope = state.scope;
    const available = S.availableModes(scope);
    const buttons = ["items", "collection", "library"].map((mode) => {
      const enabled = available.includes(mode);
      const checked = scope.mode === mode;
      let label = MODE_LABELS[mode];
      if (mode === "items" && scope.items.length) label = `Selected (${scope.items.length})`;
      const why =
        mode === "items"
          ? "Select papers in Zotero (or open one) to ask about them"
          : mode === "collection"
            ? "Select a collection in Zotero to ask about it"
            : "";
      return h(
        "button",
        {
          type: "button",
          role: "radio",
          class: "zc-seg",
          "data-mode": mode,
          "aria-checked": String(checked),
          tabindex: checked ? "0" : "-1",
          disabled: !enabled,
          title: enabled
            ? mode === "collection" && scope.collection
              ? `Collection: ${scope.collection.name}`
              : MODE_LABELS[mode]
            : why,
          on: { click: () => controller.setMode(mode) },
        },
        [label],
      );
    });
    const key = JSON.stringify([
      scope.mode,
      available,
      scope.items.map((i) => i.item_key),
      scope.collection?.key,
    ]);
    if (scopeEl.zcKey === key) return;
    const hadFocus = scopeEl.contains(doc.activeElement);
    scopeEl.zcKey = key;
    fill(h, scopeEl, [
      h("div", { class: "zc-scope-row" }, [
        h("span", { class: "zc-scope-label", id: "zc-scope-label" }, ["Ask about"]),
        h(
          "div",
          {
            class: "zc-segmented",
            role: "radiogroup",
            "aria-labelledby": "zc-scope-label",
            on: {
              keydown: (e) => {
                if (e.key !== "ArrowRight" && e.key !== "ArrowLeft") return;
                e.preventDefault();
                const modes = available;
                const k = modes.indexOf(scope.mode) + (e.key === "ArrowRight" ? 1 : -1);
                controller.setMode(modes[(k + modes.length) % modes.length]);
              },
            },
          },
          buttons,
        ),
      ]),
      h("div", { class: "zc-scope-detail", title: scopeDetail(scope) }, [scopeDetail(scope)]),
    ]);
    if (hadFocus) scopeEl.querySelector(".zc-seg[aria-checked='true']")?.focus();
  }

  function renderSnippets(state) {
    const scope = state.scope;
    const offer = state.readerSelection;
    const key = JSON.stringify([scope.snippets, offer]);
    if (snippetsEl.zcKey === key) return;
    snippetsEl.zcKey = key;
    const chips = scope.snippets.map((s, k) =>
      h("span", { class: "zocrates-snippet-chip", title: s.text }, [
        icon(doc, "pin", { size: 12 }),
        h("span", { class: "zc-chip-text" }, [`“${truncate(s.text, 60)}”`]),
        s.page ? h("span", { class: "zc-chip-page" }, [`p. ${s.page}`]) : null,
        h(
          "button",
          {
            type: "button",
            class: "zc-chip-remove",
            "aria-label": "Unpin this passage",
            title: "Unpin",
            on: { click: () => controller.removeSnippet(k) },
          },
          [icon(doc, "x", { size: 11 })],
        ),
      ]),
    );
    const offerNode = offer
      ? h(
          "button",
          {
            type: "button",
            class: "zc-offer",
            title: "Pin the text selected in the reader: the question will focus on it",
            on: {
              click: () => {
                controller.pinSnippet(offer);
                textarea.focus();
              },
            },
          },
          [
            icon(doc, "plus", { size: 12 }),
            h("span", {}, [
              `Pin selected text${offer.page ? ` (p. ${offer.page})` : ""}: “${truncate(offer.text, 50)}”`,
            ]),
          ],
        )
      : null;
    snippetsEl.hidden = !chips.length && !offerNode;
    fill(h, snippetsEl, [...chips, offerNode]);
  }

  function renderComposer(state) {
    const streaming = !!state.streaming;
    // The textarea is never disabled: you can write the next question while an answer streams.
    textarea.disabled = false;
    if (state.composer.version !== ui.composerVersion) {
      ui.composerVersion = state.composer.version;
      if (textarea.value !== state.composer.text) textarea.value = state.composer.text;
      autoGrow();
      if (state.composer.focus) textarea.focus();
    }
    stopBtn.hidden = !streaming;
    sendBtn.hidden = streaming;
    fill(h, hintEl, [
      streaming
        ? `Answering… Esc or Stop to interrupt`
        : state.editing
          ? `${shortcut()} to replace · Esc to cancel`
          : `${shortcut()} to ask`,
    ]);
    editingEl.hidden = !state.editing;
    if (state.editing && !editingEl.firstChild) {
      fill(h, editingEl, [
        icon(doc, "pencil", { size: 13 }),
        h("span", {}, [
          "Editing an earlier question: sending replaces it and everything after it.",
        ]),
        h(
          "button",
          { type: "button", class: "zc-link-btn", on: { click: () => controller.cancelEdit() } },
          ["Cancel"],
        ),
      ]);
    } else if (!state.editing) clear(editingEl);
    renderScope(state);
    renderSnippets(state);
  }

  function autoGrow() {
    textarea.style.height = "auto";
    const max = Math.max(120, Math.round((root.clientHeight || 600) * 0.35));
    textarea.style.height = `${Math.min(max, textarea.scrollHeight + 2)}px`;
  }

  // ---------------------------------------------------------------- render

  function render() {
    const state = controller.state;
    const before = messagesEl.scrollHeight;
    const nearBottom = before - messagesEl.scrollTop - messagesEl.clientHeight < 120;
    pane.setAttribute("data-phase", state.phase);
    pane.toggleAttribute("data-streaming", !!state.streaming);
    renderHeader(state);
    renderSessions(state);
    renderNotice(state);
    renderEmpty(state);
    const created = renderMessages(state);
    renderComposer(state);
    if (state.reveal && state.reveal.version !== ui.revealVersion) {
      ui.revealVersion = state.reveal.version;
      const node = ui.nodes.get(state.reveal.id)?.node;
      const target = node?.querySelector(".hitl-checkpoint-card") || node;
      if (target) {
        // the card's head at the top when it fits, else as much of it as possible
        messagesEl.scrollTop = Math.max(0, offsetWithin(target, messagesEl) - 12);
        return;
      }
    }
    // Follow the answer as it grows, when the reader is at the bottom; never move otherwise
    // (a click must land where it was aimed).
    if (created || (nearBottom && messagesEl.scrollHeight > before))
      messagesEl.scrollTop = messagesEl.scrollHeight;
  }

  function offsetWithin(el, ancestor) {
    let y = 0;
    for (let n = el; n && n !== ancestor; n = n.offsetParent) y += n.offsetTop;
    return y;
  }

  return {
    render,
    focusComposer: () => textarea.focus(),
    elements: { pane, textarea, messagesEl, sessionsEl, noticeEl },
    destroy() {
      doc.removeEventListener("mousedown", onDocMouseDown, true);
      clear(root);
      ui.nodes.clear();
    },
  };
}
