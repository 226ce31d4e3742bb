/**
 * The pane's header (the current chat's title, which opens the chats list; new chat;
 * settings; hide) and the chats list: open, rename (F2), delete (Del) with a confirmation,
 * arrow keys to move.
 */
import { clear, fill } from "./dom.js";
import { DEFAULT_TITLE, relativeTimeMessage, truncate } from "./format.js";
import { icon } from "./icons.js";

/**
 * @param {object} ctx the view's context (view.js): doc, h, controller, env, ui, now, render,
 *   focusComposer
 */
export function createSessionsView(ctx) {
  const { doc, h, controller, env, ui } = ctx;
  // Chats are created as "New Chat" on the server; shown in the pane's language.
  const titleOf = (s) =>
    !s.title || s.title === DEFAULT_TITLE ? h.t("zocrates-sessions-default-title") : s.title;

  const titleText = h("span", { class: "zc-title-text" });
  const titleBtn = h(
    "button",
    {
      type: "button",
      class: "zc-title-btn",
      "aria-haspopup": "listbox",
      "aria-expanded": "false",
      l10n: "zocrates-sidebar-chats-button",
      on: { click: () => toggle() },
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
          l10n: "zocrates-sidebar-new-chat-button",
          on: { click: () => newChat() },
        },
        [icon(doc, "plus"), h("span", { l10n: "zocrates-sidebar-new-chat" })],
      ),
      env.openPreferences
        ? h(
            "button",
            {
              type: "button",
              class: "zc-icon-btn zc-open-settings",
              l10n: "zocrates-sidebar-settings",
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
              l10n: "zocrates-sidebar-collapse",
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
    l10n: "zocrates-sessions-list",
    hidden: true,
  });

  function toggle(open = !ui.sessionsOpen) {
    ui.sessionsOpen = open;
    ui.renamingId = null;
    ui.confirmDeleteId = null;
    if (open) controller.refreshSessions();
    ctx.render();
    if (open) sessionsEl.querySelector(".zc-session[aria-selected='true'], .zc-session")?.focus();
  }

  async function newChat() {
    toggle(false);
    await controller.newSession();
    ctx.focusComposer();
  }

  function renderHeader(state) {
    fill(h, titleText, [state.session ? titleOf(state.session) : "Zocrates"]);
    titleBtn.setAttribute("aria-expanded", String(ui.sessionsOpen));
  }

  function smallButton(l10n, onClick, { danger = false } = {}) {
    return h("button", {
      type: "button",
      class: `zc-btn zc-btn-small${danger ? " zc-danger" : ""}`,
      l10n,
      on: { click: onClick },
    });
  }

  function renamingRow(s, current) {
    const input = h("input", {
      type: "text",
      class: "zc-rename-input",
      maxlength: "200",
      l10n: "zocrates-sessions-rename-input",
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
            ctx.render();
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
        smallButton("zocrates-sessions-save", async () => {
          ui.renamingId = null;
          await controller.renameSession(s.id, input.value);
        }),
      ],
    );
    Promise.resolve().then(() => {
      input.focus();
      input.select();
    });
    return row;
  }

  function confirmRow(s, current) {
    return h(
      "div",
      {
        class: "zc-session zc-confirm",
        "data-session-id": s.id,
        role: "option",
        "aria-selected": String(current),
      },
      [
        h("span", {
          class: "zc-confirm-text",
          l10n: ["zocrates-sessions-confirm-delete", { title: truncate(titleOf(s), 40) }],
        }),
        smallButton(
          "zocrates-sessions-delete",
          async () => {
            ui.confirmDeleteId = null;
            await controller.deleteSession(s.id);
          },
          { danger: true },
        ),
        smallButton("zocrates-sidebar-cancel", () => {
          ui.confirmDeleteId = null;
          ctx.render();
        }),
      ],
    );
  }

  function onRowKey(e, s, open) {
    if (e.target !== e.currentTarget) return;
    if (e.key === "Enter") {
      e.preventDefault();
      open();
    } else if (e.key === "F2") {
      e.preventDefault();
      ui.renamingId = s.id;
      ctx.render();
    } else if (e.key === "Delete" || e.key === "Backspace") {
      e.preventDefault();
      ui.confirmDeleteId = s.id;
      ctx.render();
    } else if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      const rows = [...sessionsEl.querySelectorAll(".zc-session[tabindex]")];
      const k = rows.indexOf(e.currentTarget) + (e.key === "ArrowDown" ? 1 : -1);
      rows[Math.max(0, Math.min(rows.length - 1, k))]?.focus();
    }
  }

  function sessionRow(s, state) {
    const current = state.session?.id === s.id;
    if (ui.renamingId === s.id) return renamingRow(s, current);
    if (ui.confirmDeleteId === s.id) return confirmRow(s, current);
    const open = () => {
      toggle(false);
      controller.openSession(s.id).then(() => ctx.focusComposer());
    };
    const when = relativeTimeMessage(s.updated_at, ctx.now());
    const iconButton = (cls, l10n, name, onClick) =>
      h("button", { type: "button", class: `zc-icon-btn ${cls}`, l10n, on: { click: onClick } }, [
        icon(doc, name, { size: 14 }),
      ]);
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
          keydown: (e) => onRowKey(e, s, open),
        },
      },
      [
        h("div", { class: "zc-session-main" }, [
          h("span", { class: "zc-session-title" }, [titleOf(s)]),
          Array.isArray(when)
            ? h("span", { class: "zc-session-meta", l10n: when })
            : h("span", { class: "zc-session-meta" }, [when?.text || ""]),
        ]),
        h("div", { class: "zc-session-actions" }, [
          iconButton("zc-rename", "zocrates-sessions-rename-button", "pencil", () => {
            ui.renamingId = s.id;
            ctx.render();
          }),
          iconButton("zc-delete", "zocrates-sessions-delete-button", "trash", () => {
            ui.confirmDeleteId = s.id;
            ctx.render();
          }),
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
        h("span", { l10n: "zocrates-sessions-heading" }),
        h("span", {
          class: "zc-muted",
          l10n: ["zocrates-sessions-count", { count: state.sessions.length }],
        }),
        h("span", { class: "zc-spacer" }),
        h("span", { class: "zc-muted zc-keys", l10n: "zocrates-sessions-keys" }),
      ]),
      state.sessions.length
        ? h(
            "div",
            { class: "zc-session-list" },
            state.sessions.map((s) => sessionRow(s, state)),
          )
        : h("p", { class: "zc-muted zc-sessions-empty", l10n: "zocrates-sessions-empty" }),
    ]);
    if (focused)
      sessionsEl.querySelector(`.zc-session[data-session-id="${focused}"][tabindex]`)?.focus();
  }

  return {
    header,
    titleBtn,
    sessionsEl,
    toggle,
    newChat,
    render(state) {
      renderHeader(state);
      renderSessions(state);
    },
    destroy: () => clear(sessionsEl),
  };
}
