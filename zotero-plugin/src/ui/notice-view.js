/**
 * The notice above the composer (an error or a note, with its actions), and the pane's empty
 * states: connecting, offline (Zocrates not reachable) and a new chat's examples.
 */
import { renderMarkdown } from "../markdown.js";
import { fill } from "./dom.js";
import { icon } from "./icons.js";

const ACTIONS = ["retry", "settings", "show-card", "discard-paused", "reload", "new-chat"];
const EXAMPLES = [
  "zocrates-example-findings",
  "zocrates-example-methods",
  "zocrates-example-limitations",
];

/** @param {object} ctx the view's context (view.js) */
export function createNoticeView(ctx) {
  const { doc, h, controller, env } = ctx;
  const noticeEl = h("div", { class: "zc-notice", hidden: true });
  const emptyEl = h("div", { class: "zc-empty" });

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

  function actionButton(a, k) {
    const known = ACTIONS.includes(a);
    return h(
      "button",
      {
        type: "button",
        class: `zc-btn zc-btn-small${k === 0 ? " zc-btn-accent" : ""}`,
        "data-action": a,
        l10n: known ? `zocrates-action-${a}` : null,
        on: {
          click: () => (a === "settings" ? env.openPreferences?.() : controller.runAction(a)),
        },
      },
      known ? [] : [a],
    );
  }

  /** The icon, text and actions of a notice (also an answer's error). */
  function noticeBody(notice, { compact = false } = {}) {
    return [
      icon(doc, notice.level === "error" ? "alert" : "info", { className: "zc-notice-icon" }),
      h("div", { class: "zc-notice-body" }, [
        h("div", { class: "zc-notice-text" }, inlineText(notice.message)),
        notice.actions?.length
          ? h("div", { class: "zc-notice-actions" }, notice.actions.map(actionButton))
          : null,
      ]),
      compact
        ? null
        : h(
            "button",
            {
              type: "button",
              class: "zc-icon-btn zc-notice-close",
              l10n: "zocrates-notice-dismiss",
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

  function offlineCard(state) {
    return h(
      "div",
      {
        class: "zc-empty-card zc-offline",
        role: "alert",
        "data-code": state.notice?.code || "",
      },
      [
        h("h2", { l10n: "zocrates-empty-offline" }),
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
    );
  }

  function example(id) {
    const button = h("button", {
      type: "button",
      class: "zc-example",
      l10n: id,
      on: { click: () => ctx.setDraft(button.textContent) },
    });
    return h("li", {}, [button]);
  }

  function renderEmpty(state) {
    const show = state.phase === "offline" || (!state.messages.length && !state.loadingSession);
    emptyEl.hidden = !show;
    if (!show) return;
    const key = `${state.phase}|${state.notice?.message || ""}|${state.session?.id || ""}`;
    if (emptyEl.zcKey === key) return;
    emptyEl.zcKey = key;
    if (state.phase === "offline") {
      fill(h, emptyEl, [offlineCard(state)]);
      return;
    }
    if (state.phase === "starting") {
      fill(h, emptyEl, [
        h("div", { class: "zc-empty-card zc-loading" }, [
          h("span", { class: "zc-spinner" }),
          h("span", { l10n: "zocrates-empty-connecting" }),
        ]),
      ]);
      return;
    }
    fill(h, emptyEl, [
      h("div", { class: "zc-empty-card" }, [
        h("h2", { l10n: "zocrates-empty-heading" }),
        h("p", { class: "zc-muted", l10n: "zocrates-empty-intro" }),
        h("ul", { class: "zc-examples" }, EXAMPLES.map(example)),
      ]),
    ]);
  }

  return {
    noticeEl,
    emptyEl,
    noticeBody,
    render(state) {
      renderNotice(state);
      renderEmpty(state);
    },
  };
}
