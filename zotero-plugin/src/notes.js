/**
 * An answer as a Zotero note, and "copy with citations" (answer-text.js): what the pane calls
 * to keep an answer. Pure functions; src/zotero/notes.js saves and copies.
 *
 * The note is what Zotero's note editor (zotero/note-editor, `src/core/schema/`) reads and
 * writes: `<div data-schema-version="N">` around the blocks. Zotero 7 to 10 ship schema 10
 * and write `data-schema-version="9"` for a note without underline annotations
 * (`schema/utils.js` buildToHTML; an older client opens a note of a newer version read-only),
 * so these notes say 9. The editor keeps p, h1-h6, pre, blockquote, hr, ol (start), ul, li,
 * table/tr/th/td (cells hold blocks), br, strong, em, del, code and a[href]; an <li> holding one
 * paragraph is written without the <p>, a code block is a bare <pre> (no marks inside). Each
 * citation marker links to its PDF page (answer-export.js says which link).
 */

import {
  DEFAULT_LABELS,
  describe,
  isInline,
  linkOf,
  quoteText,
  readAnswer,
  textOf,
  verificationNote,
} from "./answer-export.js";
import { safeHref } from "./markdown.js";

export {
  DEFAULT_LABELS,
  citedItemKeys,
  linkResolver,
  mostCitedItemKey,
  openPdfURL,
  selectURL,
} from "./answer-export.js";
export { answerToMarkdown, answerToPlainText } from "./answer-text.js";

/** What Zotero 7 to 10's note editor writes for notes without underline annotations. */
export const NOTE_SCHEMA_VERSION = 9;

// eslint-disable-next-line no-control-regex -- what Zotero's setNote strips
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/g;
const ENTITIES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
const esc = (s) =>
  String(s)
    .replace(CONTROL, "")
    .replace(/[&<>]/g, (ch) => ENTITIES[ch]);
const escAttr = (s) =>
  String(s)
    .replace(CONTROL, "")
    .replace(/[&<>"']/g, (ch) => ENTITIES[ch]);

function inlineHTML(nodes, ctx) {
  return nodes.map((n) => inlineNode(n, ctx)).join("");
}

function inlineNode(n, ctx) {
  if (n.type === "text") return esc(n.text);
  if (n.type === "citation") {
    const href = linkOf(ctx.linkFor, n, ctx.index);
    return href ? `<a href="${escAttr(href)}">${esc(n.text)}</a>` : esc(n.text);
  }
  const inner = () => inlineHTML(n.children, ctx);
  switch (n.tag) {
    case "br":
      return "<br>";
    case "code":
      return `<code>${esc(textOf(n.children))}</code>`;
    case "a": {
      const href = safeHref(n.attrs.href);
      return href ? `<a href="${escAttr(href)}">${inner()}</a>` : inner();
    }
    case "strong":
    case "em":
    case "del":
      return `<${n.tag}>${inner()}</${n.tag}>`;
    default:
      return inner();
  }
}

/** The inside of a node whose content is blocks (li, th, td, blockquote). */
function flowHTML(children, ctx) {
  const out = [];
  let run = [];
  const flush = () => {
    if (run.length) out.push(`<p>${inlineHTML(run, ctx)}</p>`);
    run = [];
  };
  for (const c of children) {
    if (isInline(c)) run.push(c);
    else {
      flush();
      out.push(blockHTML(c, ctx));
    }
  }
  flush();
  return out.length ? out.join("\n") : "<p></p>";
}

function itemHTML(li, ctx) {
  const kids = li.children;
  if (kids.every(isInline)) return `<li>${inlineHTML(kids, ctx)}</li>`;
  if (kids.length === 1 && kids[0].tag === "p")
    return `<li>${inlineHTML(kids[0].children, ctx)}</li>`;
  return `<li>\n${flowHTML(kids, ctx)}\n</li>`;
}

function tableHTML(table, ctx) {
  const rows = [];
  for (const part of table.children) for (const tr of part.children) rows.push(tr);
  const cells = (tr) =>
    tr.children.map((cell) => `<${cell.tag}>${flowHTML(cell.children, ctx)}</${cell.tag}>`);
  const body = rows.map((tr) => `<tr>\n${cells(tr).join("\n")}\n</tr>`).join("\n");
  return `<table>\n<tbody>\n${body}\n</tbody>\n</table>`;
}

function blockHTML(n, ctx) {
  if (isInline(n)) return `<p>${inlineNode(n, ctx)}</p>`;
  const heading = /^h([1-6])$/.exec(n.tag);
  if (heading) {
    const level = Math.min(6, Number(heading[1]) + ctx.shift);
    return `<h${level}>${inlineHTML(n.children, ctx)}</h${level}>`;
  }
  switch (n.tag) {
    case "p":
      return `<p>${inlineHTML(n.children, ctx)}</p>`;
    case "pre":
      return `<pre>${esc(textOf(n.children))}</pre>`;
    case "blockquote":
      return `<blockquote>\n${flowHTML(n.children, ctx)}\n</blockquote>`;
    case "ul":
    case "ol": {
      const start = n.tag === "ol" && n.attrs.start ? ` start="${escAttr(n.attrs.start)}"` : "";
      const items = n.children.map((li) => itemHTML(li, ctx)).join("\n");
      return `<${n.tag}${start}>\n${items}\n</${n.tag}>`;
    }
    case "hr":
      return "<hr>";
    case "table":
      return tableHTML(n, ctx);
    default:
      return flowHTML(n.children || [], ctx);
  }
}

/**
 * The HTML of a Zotero note: the question as the heading (under `title`, when given), the
 * answer (its headings one level below the question's, its `# Cited Sources` section left out)
 * with each marker linked by `linkFor`, then a "Sources" list: `[n]` the source (linked), the
 * quoted sentence, and a word when the quote is not on the cited page.
 * @param {{question?: string, answer?: string, citations?: object[], title?: string,
 *          linkFor?: (citation: {n: number, item_key: string, page: number | null})
 *            => string | null, labels?: Partial<typeof DEFAULT_LABELS>}} options
 * @returns {string}
 */
export function answerToNoteHTML({
  question = "",
  answer = "",
  citations = [],
  title = "",
  linkFor = null,
  labels = {},
} = {}) {
  const words = { ...DEFAULT_LABELS, ...labels };
  const { index, nodes, sources } = readAnswer(answer, citations);
  const heading = String(title ?? "")
    .replace(/\s+/g, " ")
    .trim();
  const lines = String(question ?? "")
    .trim()
    .split(/\r\n?|\n/)
    .map((l) => l.trim())
    .filter(Boolean);
  const blocks = [];
  let shift = 0;
  if (heading) blocks.push(`<h${++shift}>${esc(heading)}</h${shift}>`);
  if (lines.length) blocks.push(`<h${++shift}>${lines.map(esc).join("<br>")}</h${shift}>`);
  const ctx = { linkFor, shift, index };
  for (const n of nodes) blocks.push(blockHTML(n, ctx));
  if (sources.length) {
    const level = Math.min(6, shift + 1);
    blocks.push(`<h${level}>${esc(words.sources)}</h${level}>`);
    const items = sources.map((c) => {
      const href = linkOf(linkFor, c);
      const what = href ? `<a href="${escAttr(href)}">${esc(describe(c))}</a>` : esc(describe(c));
      const quote = c.quote ? ` <em>\u201c${esc(quoteText(c.quote))}\u201d</em>` : "";
      const note = verificationNote(c, words);
      return `<li>[${c.n}] ${what}${quote}${note ? ` (${esc(note)})` : ""}</li>`;
    });
    blocks.push(`<ul>\n${items.join("\n")}\n</ul>`);
  }
  return `<div data-schema-version="${NOTE_SCHEMA_VERSION}">\n${blocks.join("\n")}\n</div>`.normalize(
    "NFC",
  );
}
