/**
 * The chat pane's DOM, rendered from the controller's state (controller.js). The parts each
 * build and update their own piece with dom.js's h (createElementNS + text nodes; every
 * string a Fluent message, l10n.js): the header and chats list (sessions-view.js), the
 * notice and empty states (notice-view.js), the messages (message-view.js) and the composer
 * (composer-view.js). This file lays them out, routes clicks on citations and links, and
 * keeps the scroll where the reader expects it.
 */
import { CITATION_CLASS } from "../markdown.js";
import { createComposerView } from "./composer-view.js";
import { clear, createH } from "./dom.js";
import { createMessagesView } from "./message-view.js";
import { createNoticeView } from "./notice-view.js";
import { createSessionsView } from "./sessions-view.js";

/**
 * @param {{doc: Document, root: Element, controller: object, env: object}} options
 *   env: {openCitation({itemKey, page, quote}), openURL?(url), openPreferences?(), isMac?,
 *         canCollapse?, onCollapse?(), prefs?, now?(), l10n? (l10n.js; ids are shown without
 *         it), copyText?(text, {format}), saveNote?({question, answer, citations}),
 *         setTimeout?, log?(msg)}
 */
export function createPaneView({ doc, root, controller, env = {} }) {
  const h = createH(doc, env.l10n || null);
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
  const ctx = {
    doc,
    h,
    controller,
    env,
    ui,
    root,
    now: env.now || (() => Date.now()),
    render: () => render(),
    focusComposer: () => composer.textarea.focus(),
    setDraft: (text) => composer.setDraft(text),
  };

  const sessions = createSessionsView(ctx);
  const notice = createNoticeView(ctx);
  const messages = createMessagesView(ctx, { noticeBody: notice.noticeBody });
  const composer = createComposerView(ctx);

  const messagesEl = h("div", {
    class: "zc-messages",
    role: "log",
    "aria-live": "polite",
    "aria-relevant": "additions",
    tabindex: "-1",
  });
  messagesEl.append(notice.emptyEl, messages.listEl);

  // The notice sits right above the composer, where the eyes are when an action fails.
  const pane = h("div", { class: "zocrates-pane", "data-phase": "starting" }, [
    sessions.header,
    sessions.sessionsEl,
    messagesEl,
    notice.noticeEl,
    composer.composer,
  ]);
  if (env.l10n?.locale) pane.setAttribute("lang", env.l10n.locale);
  clear(root);
  root.appendChild(pane);

  messagesEl.addEventListener("click", onMessagesClick);
  messagesEl.addEventListener("keydown", onMessagesKey);
  pane.addEventListener("keydown", onPaneKey);
  // A click anywhere outside the chat list closes it.
  const onDocMouseDown = (e) => {
    if (
      ui.sessionsOpen &&
      !sessions.sessionsEl.contains(e.target) &&
      !sessions.titleBtn.contains(e.target)
    )
      sessions.toggle(false);
  };
  doc.addEventListener("mousedown", onDocMouseDown, true);

  function onPaneKey(e) {
    if (e.key === "Escape" && ui.sessionsOpen) {
      e.preventDefault();
      sessions.toggle(false);
      sessions.titleBtn.focus();
    }
  }

  function activate(target) {
    const cite = target.closest?.(`a.${CITATION_CLASS}, a.zc-paper-link, .zc-step-link`);
    if (cite) {
      const itemKey = cite.getAttribute("data-item-key");
      const page = Number(cite.getAttribute("data-page")) || null;
      const quote = cite.getAttribute("data-quote") || "";
      const attachmentKey = cite.getAttribute("data-attachment-key") || "";
      // What the user wrote (a highlight, a comment, a note) opens itself.
      const origin = cite.getAttribute("data-origin") || "";
      const sourceKey = cite.getAttribute("data-source-key") || "";
      if (itemKey) env.openCitation?.({ itemKey, attachmentKey, page, quote, origin, sourceKey });
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

  function render() {
    const state = controller.state;
    const before = messagesEl.scrollHeight;
    const nearBottom = before - messagesEl.scrollTop - messagesEl.clientHeight < 120;
    pane.setAttribute("data-phase", state.phase);
    pane.toggleAttribute("data-streaming", !!state.streaming);
    sessions.render(state);
    notice.render(state);
    const created = messages.render(state);
    composer.render(state);
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
    focusComposer: ctx.focusComposer,
    elements: {
      pane,
      textarea: composer.textarea,
      messagesEl,
      sessionsEl: sessions.sessionsEl,
      noticeEl: notice.noticeEl,
    },
    destroy() {
      doc.removeEventListener("mousedown", onDocMouseDown, true);
      clear(root);
      ui.nodes.clear();
    },
  };
}
