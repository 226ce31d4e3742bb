/**
 * DOM building for the pane: elements are made with createElementNS in the XHTML namespace
 * (Zotero's main window is a XUL document, where createElement would make XUL elements) and
 * text always goes in as text nodes. No HTML string is ever parsed.
 *
 * `createH(doc)` returns `h(tag, attrs, children)`, the same signature markdown.js's
 * renderMarkdown takes, so answers render through it too:
 *
 * - attrs: strings become attributes (`class`, `role`, `aria-*`, `data-*`, ...); `on` is an
 *   object of event listeners; `props` sets properties (value, checked, open, ...); `style` an
 *   object of CSS custom properties or declarations (`{"--pct": "40%"}`); null / false skip.
 * - children: strings (text nodes), nodes, nested arrays; null, false and undefined skip.
 * - `l10n`: a Fluent id, or `[id, args]`: the element gets `data-zc-l10n` (and
 *   `data-zc-l10n-args`), its text is the message's value (when it has one and no children are
 *   given) and its attributes the message's attributes (`.title`, `.aria-label`,
 *   `.placeholder`), formatted by the localization given to `createH` (l10n.js).
 */

export const XHTML_NS = "http://www.w3.org/1999/xhtml";

export function createH(doc, l10n = null) {
  function append(el, child) {
    if (child === null || child === undefined || child === false || child === true) return;
    if (Array.isArray(child)) {
      for (const c of child) append(el, c);
      return;
    }
    if (typeof child === "string" || typeof child === "number") {
      el.appendChild(doc.createTextNode(String(child)));
      return;
    }
    el.appendChild(child);
  }

  function localize(el, spec, hasChildren) {
    const [id, args] = Array.isArray(spec) ? spec : [spec, undefined];
    el.setAttribute("data-zc-l10n", id);
    if (args && Object.keys(args).length)
      el.setAttribute("data-zc-l10n-args", JSON.stringify(args));
    else el.removeAttribute("data-zc-l10n-args");
    if (!l10n) return;
    const { value, attributes } = l10n.message(id, args);
    for (const [name, text] of Object.entries(attributes)) el.setAttribute(name, text);
    if (value !== null && !hasChildren) el.textContent = value;
  }

  function h(tag, attrs = {}, children = []) {
    const el = doc.createElementNS(XHTML_NS, tag);
    const hasChildren = Array.isArray(children)
      ? children.some((c) => c != null && c !== false)
      : !!children;
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "l10n") {
        localize(el, value, hasChildren);
      } else if (key === "on") {
        for (const [type, fn] of Object.entries(value)) if (fn) el.addEventListener(type, fn);
      } else if (key === "props") {
        for (const [prop, v] of Object.entries(value)) el[prop] = v;
      } else if (key === "style") {
        for (const [prop, v] of Object.entries(value))
          if (v !== null && v !== undefined) el.style.setProperty(prop, String(v));
      } else {
        el.setAttribute(key, value === true ? "" : String(value));
      }
    }
    append(el, children);
    return el;
  }

  h.text = (s) => doc.createTextNode(String(s ?? ""));
  /** Re-point an existing element at another message (a status that changes). */
  h.localize = (el, spec) => localize(el, spec, false);
  /** A message's text, for strings that are not an element's own (joined labels, tooltips). */
  h.t = (id, args) => (l10n ? l10n.t(id, args) : id);
  h.l10n = l10n;
  h.append = append;
  return h;
}

/** Remove every child of `el`. */
export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

/** Replace the children of `el` with `children` (strings become text nodes). */
export function fill(h, el, children) {
  clear(el);
  h.append(el, children);
  return el;
}

/** Whether a keyboard event is Ctrl+Enter (Cmd+Enter on macOS). */
export function isSendShortcut(event, isMac = false) {
  if (event.key !== "Enter") return false;
  return isMac ? !!event.metaKey && !event.ctrlKey : !!(event.ctrlKey || event.metaKey);
}
