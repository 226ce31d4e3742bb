/**
 * The composer: the question box (never disabled: the next question can be written while an
 * answer streams), Ask / Stop, the shortcut hint, the "editing an earlier question" bar, what
 * to ask about (selected papers, collection, library) and the pinned passages and images (an
 * image's chip shows its thumbnail, or a placeholder while a restored one comes back).
 */
import { imageDataURL } from "../images.js";
import * as S from "../scope.js";
import { clear, fill, isSendShortcut } from "./dom.js";
import { truncate } from "./format.js";
import { icon } from "./icons.js";

const MODES = ["items", "collection", "library"];

/** @param {object} ctx the view's context (view.js) */
export function createComposerView(ctx) {
  const { doc, h, controller, env, ui, root } = ctx;
  const shortcut = () => (env.isMac ? "⌘↩" : "Ctrl+Enter");

  const textarea = h("textarea", {
    class: "zc-input",
    rows: "2",
    l10n: "zocrates-sidebar-input",
    on: {
      input: () => {
        controller.setDraft(textarea.value);
        autoGrow();
      },
      keydown: onKey,
    },
  });
  const sendBtn = h(
    "button",
    {
      type: "button",
      class: "zc-send",
      l10n: ["zocrates-sidebar-send-button", { shortcut: shortcut() }],
      on: { click: () => send() },
    },
    [icon(doc, "send"), h("span", { l10n: "zocrates-sidebar-send" })],
  );
  const stopBtn = h(
    "button",
    {
      type: "button",
      class: "zc-stop",
      l10n: "zocrates-sidebar-stop-button",
      hidden: true,
      on: { click: () => controller.stop() },
    },
    [icon(doc, "stop"), h("span", { l10n: "zocrates-sidebar-stop" })],
  );
  const hintEl = h("span", { class: "zc-hint" });
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

  function onKey(e) {
    if (isSendShortcut(e, env.isMac)) {
      e.preventDefault();
      send();
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

  async function send() {
    const text = textarea.value;
    if (!text.trim()) {
      textarea.focus();
      return;
    }
    await controller.send(text);
  }

  /** Put a question in the box (an example), ready to send. */
  function setDraft(text) {
    textarea.value = text;
    controller.setDraft(text);
    textarea.focus();
    autoGrow();
  }

  function autoGrow() {
    textarea.style.height = "auto";
    const max = Math.max(120, Math.round((root.clientHeight || 600) * 0.35));
    textarea.style.height = `${Math.min(max, textarea.scrollHeight + 2)}px`;
  }

  function scopeDetail(scope) {
    if (scope.mode === "items")
      return scope.items.map((i) => truncate(i.title || i.item_key, 48)).join(" · ");
    if (scope.mode === "collection" && scope.collection?.keys)
      return h.t("zocrates-scope-detail-collections", {
        names: scope.collection.name,
        count: scope.collection.items?.length || 0,
      });
    if (scope.mode === "collection" && scope.collection)
      return h.t("zocrates-scope-detail-collection", {
        name: scope.collection.name || scope.collection.key,
      });
    return h.t("zocrates-scope-detail-library");
  }

  function modeButton(mode, scope, available) {
    const enabled = available.includes(mode);
    const checked = scope.mode === mode;
    const label =
      mode === "items" && scope.items.length
        ? h.t("zocrates-scope-mode-items-count", { count: scope.items.length })
        : h.t(`zocrates-scope-mode-${mode}`);
    const title = !enabled
      ? mode === "library"
        ? ""
        : h.t(`zocrates-scope-why-${mode}`)
      : mode === "collection" && scope.collection
        ? h.t("zocrates-scope-collection", { name: scope.collection.name })
        : h.t(`zocrates-scope-mode-${mode}`);
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
        title,
        on: { click: () => controller.setMode(mode) },
      },
      [label],
    );
  }

  function renderScope(state) {
    const scope = state.scope;
    const available = S.availableModes(scope);
    const key = JSON.stringify([
      scope.mode,
      available,
      scope.items.map((i) => i.item_key),
      scope.collection?.key,
      scope.collection?.name,
      scope.collection?.keys,
      scope.collection?.items?.length,
    ]);
    if (scopeEl.zcKey === key) return;
    const hadFocus = scopeEl.contains(doc.activeElement);
    scopeEl.zcKey = key;
    fill(h, scopeEl, [
      h("div", { class: "zc-scope-row" }, [
        h("span", {
          class: "zc-scope-label",
          id: "zc-scope-label",
          l10n: "zocrates-scope-ask-about",
        }),
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
                const k = available.indexOf(scope.mode) + (e.key === "ArrowRight" ? 1 : -1);
                controller.setMode(available[(k + available.length) % available.length]);
              },
            },
          },
          MODES.map((mode) => modeButton(mode, scope, available)),
        ),
      ]),
      h("div", { class: "zc-scope-detail", title: scopeDetail(scope) }, [scopeDetail(scope)]),
    ]);
    if (hadFocus) scopeEl.querySelector(".zc-seg[aria-checked='true']")?.focus();
  }

  function renderSnippets(state) {
    const scope = state.scope;
    const offer = state.readerSelection;
    const key = JSON.stringify([scope.snippets.map(S.snippetSignature), offer]);
    if (snippetsEl.zcKey === key) return;
    snippetsEl.zcKey = key;
    const chips = scope.snippets.map((s, k) =>
      S.isImageSnippet(s)
        ? imageChip(s, k)
        : h("span", { class: "zocrates-snippet-chip", title: s.text }, [
            icon(doc, "pin", { size: 12 }),
            h("span", { class: "zc-chip-text" }, [`“${truncate(s.text, 60)}”`]),
            s.page
              ? h("span", {
                  class: "zc-chip-page",
                  l10n: ["zocrates-snippet-page", { page: s.page }],
                })
              : null,
            h(
              "button",
              {
                type: "button",
                class: "zc-chip-remove",
                l10n: "zocrates-snippet-unpin",
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
            l10n: "zocrates-snippet-offer",
            on: {
              click: () => {
                controller.pinSnippet(offer);
                textarea.focus();
              },
            },
          },
          [
            icon(doc, "plus", { size: 12 }),
            h("span", {
              l10n: offer.page
                ? [
                    "zocrates-snippet-offer-text-page",
                    { page: offer.page, text: truncate(offer.text, 50) },
                  ]
                : ["zocrates-snippet-offer-text", { text: truncate(offer.text, 50) }],
            }),
          ],
        )
      : null;
    snippetsEl.hidden = !chips.length && !offerNode;
    fill(h, snippetsEl, [...chips, offerNode]);
  }

  /** An image snippet: its thumbnail (a placeholder until its bytes are back), its comment
   * or "Image", its page. */
  function imageChip(s, k) {
    const src = imageDataURL(s.image);
    return h(
      "span",
      {
        class: "zocrates-snippet-chip zc-image-chip",
        "data-kind": "image",
        "data-loading": src ? null : "true",
        title: s.text || s.title || null,
      },
      [
        src
          ? h("img", { class: "zc-chip-thumb", src, alt: "" })
          : h(
              "span",
              { class: "zc-chip-thumb zc-chip-thumb-wait", l10n: "zocrates-snippet-image-wait" },
              [icon(doc, "image", { size: 14 })],
            ),
        h(
          "span",
          { class: "zc-chip-text" },
          s.text ? [`“${truncate(s.text, 40)}”`] : [h.t("zocrates-snippet-image-label")],
        ),
        s.page
          ? h("span", { class: "zc-chip-page", l10n: ["zocrates-snippet-page", { page: s.page }] })
          : null,
        h(
          "button",
          {
            type: "button",
            class: "zc-chip-remove",
            l10n: "zocrates-snippet-image-unpin",
            on: { click: () => controller.removeSnippet(k) },
          },
          [icon(doc, "x", { size: 11 })],
        ),
      ],
    );
  }

  function render(state) {
    const streaming = !!state.streaming;
    textarea.disabled = false;
    if (state.composer.version !== ui.composerVersion) {
      ui.composerVersion = state.composer.version;
      if (textarea.value !== state.composer.text) textarea.value = state.composer.text;
      autoGrow();
      if (state.composer.focus) textarea.focus();
    }
    stopBtn.hidden = !streaming;
    sendBtn.hidden = streaming;
    h.localize(
      hintEl,
      streaming
        ? "zocrates-sidebar-hint-streaming"
        : [
            state.editing ? "zocrates-sidebar-hint-replace" : "zocrates-sidebar-hint-ask",
            { shortcut: shortcut() },
          ],
    );
    editingEl.hidden = !state.editing;
    if (state.editing && !editingEl.firstChild) {
      fill(h, editingEl, [
        icon(doc, "pencil", { size: 13 }),
        h("span", { l10n: "zocrates-sidebar-editing" }),
        h("button", {
          type: "button",
          class: "zc-link-btn",
          l10n: "zocrates-sidebar-cancel",
          on: { click: () => controller.cancelEdit() },
        }),
      ]);
    } else if (!state.editing) clear(editingEl);
    renderScope(state);
    renderSnippets(state);
  }

  return { composer, textarea, send, setDraft, autoGrow, render };
}
