/**
 * A small, safe Markdown renderer for answers.
 *
 * `parseMarkdown(text, {citations})` returns a tree of plain objects:
 *   {type: "element", tag, attrs, children} | {type: "text", text} |
 *   {type: "citation", n, itemKey, page, title, text}
 * `renderMarkdown(text, {citations, h})` walks that tree through an injected
 * `h(tag, attrs, children)` (children are h's results or plain strings for text), so the
 * pane builds DOM with createElementNS/createTextNode and never parses HTML.
 *
 * Supported: paragraphs (single line breaks kept), ATX headings, fenced code blocks, block
 * quotes, bullet and numbered lists (nested by indentation), horizontal rules, simple pipe
 * tables, **bold**, *italic*, ~~strikethrough~~, `inline code`, links and autolinks whose
 * scheme is http, https or zotero, and citation markers `[n, p. X]` resolved against the
 * turn's citations (an unknown n stays text). Everything else — HTML included — is text.
 * Tags come from a fixed list and attributes from a fixed set; `href` is always checked.
 * Blocks are parsed in markdown-blocks.js, the text inside them in markdown-inline.js.
 */

import { citationIndex } from "./citations.js";
import { parseBlocks } from "./markdown-blocks.js";

export { parseInline, SAFE_SCHEMES, safeHref } from "./markdown-inline.js";

export const TAGS = Object.freeze([
  "p",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "ul",
  "ol",
  "li",
  "blockquote",
  "pre",
  "code",
  "strong",
  "em",
  "del",
  "a",
  "br",
  "hr",
  "table",
  "thead",
  "tbody",
  "tr",
  "th",
  "td",
  "span",
]);
export const CITATION_CLASS = "zocrates-citation";
/** Added to a citation whose quoted sentence the agent did not find on the cited page. */
export const UNVERIFIED_CLASS = "zocrates-citation-unverified";

/**
 * Markdown to a tree of plain objects.
 * @param {string} text
 * @param {{citations?: Array<{n, item_key, title, page}>}} [options]
 *   citations: the `done` event's; the text's own `# Cited Sources` section fills gaps.
 */
export function parseMarkdown(text, { citations = [] } = {}) {
  const source = String(text ?? "")
    .replace(/\r\n?/g, "\n")
    // eslint-disable-next-line no-control-regex -- NUL is replaced, as CommonMark says
    .replace(/\u0000/g, "\ufffd");
  const ctx = { citations: citationIndex(citations, source) };
  return parseBlocks(source.split("\n"), ctx);
}

const ENGLISH_TITLES = {
  "zocrates-citation-title": ({ title }) => title,
  "zocrates-citation-title-page": ({ title, page }) => `${title}, p. ${page}`,
  "zocrates-citation-quote-elsewhere": ({ cited, page }) => `${cited} (the quote is on p. ${page})`,
  "zocrates-citation-quote-missing": ({ cited }) =>
    `${cited} (the quote was not found on this page)`,
  "zocrates-citation-title-note": ({ title }) => `Your note in ${title}`,
  "zocrates-citation-title-highlight": ({ title, page }) =>
    `Your highlight in ${title}, p. ${page}`,
  "zocrates-citation-title-comment": ({ title, page }) => `Your comment in ${title}, p. ${page}`,
};
const OWN_ORIGINS = new Set(["note", "highlight", "comment"]);

/**
 * The attributes of a citation element (what the pane reads to open the PDF).
 * @param {object} node a citation node
 * @param {(id: string, args: object) => string} [t] the pane's strings (sidebar.ftl
 *   zocrates-citation-*); English without it
 */
export function citationAttrs(node, t = null) {
  const say = (id, args) => (t ? t(id, args) : ENGLISH_TITLES[id](args));
  const attrs = {
    class: CITATION_CLASS,
    role: "link",
    tabindex: "0",
    "data-n": String(node.n),
    "data-item-key": node.itemKey,
  };
  if (node.attachmentKey) attrs["data-attachment-key"] = node.attachmentKey;
  if (node.page != null) attrs["data-page"] = String(node.page);
  const title = node.title || node.itemKey;
  attrs.title =
    node.page != null
      ? say("zocrates-citation-title-page", { title, page: node.page })
      : say("zocrates-citation-title", { title });
  if (OWN_ORIGINS.has(node.origin) && node.sourceKey) {
    // What the user wrote in Zotero: the click opens the annotation or the note itself.
    attrs["data-origin"] = node.origin;
    attrs["data-source-key"] = node.sourceKey;
    attrs.title =
      node.origin === "note" || node.page == null
        ? say("zocrates-citation-title-note", { title })
        : say(`zocrates-citation-title-${node.origin}`, { title, page: node.page });
  }
  if (node.quote) attrs["data-quote"] = node.quote.slice(0, 400);
  if (node.verified === true) attrs["data-verified"] = "true";
  if (node.verified === false) {
    // The quoted sentence is not on the cited page: say so, and open where it is, if known.
    attrs.class = `${CITATION_CLASS} ${UNVERIFIED_CLASS}`;
    attrs["data-verified"] = "false";
    if (node.foundOnPage != null) {
      attrs["data-page"] = String(node.foundOnPage);
      attrs.title = say("zocrates-citation-quote-elsewhere", {
        cited: attrs.title,
        page: node.foundOnPage,
      });
    } else attrs.title = say("zocrates-citation-quote-missing", { cited: attrs.title });
  }
  return attrs;
}

/** The default `h`: plain `{tag, attrs, children}` objects (strings stay strings). */
export const treeH = (tag, attrs, children) => ({ tag, attrs, children });

/**
 * Render through `h`. Text becomes plain strings in `children`; citations become
 * `h("a", {class: "zocrates-citation", "data-item-key", "data-page", ...}, [label])`.
 * @returns {Array} h's results for the top-level blocks
 */
export function renderMarkdown(text, { citations = [], h = treeH } = {}) {
  const walk = (node) => {
    if (node.type === "text") return node.text;
    if (node.type === "citation")
      return h("a", citationAttrs(node, h.l10n ? h.t : null), [node.text]);
    return h(node.tag, { ...node.attrs }, node.children.map(walk));
  };
  return parseMarkdown(text, { citations }).map(walk);
}

/** The text a tree shows (for tests, copy-to-clipboard and accessibility labels). */
export function textContent(nodes) {
  const list = Array.isArray(nodes) ? nodes : [nodes];
  return list
    .map((n) => {
      if (typeof n === "string") return n;
      if (n.type === "text") return n.text;
      if (n.type === "citation") return n.text;
      if (n.tag === "br" || n.tag === "hr") return "\n";
      return textContent(n.children || []);
    })
    .join("");
}
