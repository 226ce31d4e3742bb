/**
 * An answer read for keeping it outside the chat (notes.js, answer-text.js): its body, its
 * sources, the links of its citations and the item it cites most.
 *
 * Links open the cited page in Zotero's reader. Zotero's protocol handler
 * (`ZoteroProtocolHandler.mjs`, OpenExtension, the same in 7.0 to 10.0) takes
 * `zotero://open-pdf/library/items/KEY?page=N` (the user's library) and
 * `zotero://open-pdf/groups/GROUPID/items/KEY?page=N` (GROUPID is the group's id, not its
 * libraryID); KEY must be a file attachment's: for a regular item Zotero only logs "is not a
 * file attachment" and opens nothing. `page` is 1-based. So each output takes
 * `linkFor(citation)`, which knows each item's attachments and library: the PDF the quote
 * came from (the citation's `attachment_key`), else the item's best attachment.
 */

import { citationIndex, citedSourcesFromText, withoutCitedSources } from "./citations.js";
import { parseMarkdown, safeHref, textContent } from "./markdown.js";

/** The words the outputs add; the pane passes its localized ones. */
export const DEFAULT_LABELS = Object.freeze({
  sources: "Sources",
  quoteOnPage: (page) => `the quote is on p. ${page}`,
  quoteNotFound: "the quote was not found on the cited page",
});

const ITEM_KEY = /^[A-Z0-9]{8}$/;

/**
 * The link that opens an attachment in Zotero's reader.
 * @param {{key: string, page?: number | null, groupID?: number | null}} target
 *   key: the attachment's; groupID: null for the user's library
 * @returns {string | null} null for a malformed key or group id
 */
export function openPdfURL({ key, page = null, groupID = null, annotation = "" }) {
  if (!ITEM_KEY.test(String(key ?? ""))) return null;
  const library = libraryPath(groupID);
  if (library == null) return null;
  const params = [];
  if (Number.isInteger(page) && page >= 1) params.push(`page=${page}`);
  // The reader opens at the annotation (OpenExtension's `annotation` parameter).
  if (annotation && ITEM_KEY.test(String(annotation))) params.push(`annotation=${annotation}`);
  const query = params.length ? `?${params.join("&")}` : "";
  return `zotero://open-pdf/${library}/items/${key}${query}`;
}

/**
 * The link that selects an item (a note) in Zotero's items pane, where Zotero shows it:
 * `zotero://select/library/items/KEY` or `zotero://select/groups/GROUPID/items/KEY`.
 * @returns {string | null} null for a malformed key or group id
 */
export function selectURL({ key, groupID = null }) {
  if (!ITEM_KEY.test(String(key ?? ""))) return null;
  const library = libraryPath(groupID);
  return library == null ? null : `zotero://select/${library}/items/${key}`;
}

function libraryPath(groupID) {
  if (groupID == null) return "library";
  if (!Number.isInteger(Number(groupID)) || Number(groupID) < 1) return null;
  return `groups/${Number(groupID)}`;
}

/**
 * A `linkFor` over resolved targets: the PDF the citation's evidence came from when it is
 * known (`attachment_key`, one of the item's attachments), else the item's best attachment.
 * @param {Map<string, {key?: string, groupID?: number | null, pdf?: boolean,
 *          attachments?: Map<string, {key: string, groupID?: number | null, pdf?: boolean}>}>} targets
 *   item_key -> its best attachment (`pdf: false`: not a PDF, so the link names no page) and
 *   the cited attachments found, by key
 * @returns {(citation: {item_key: string, attachment_key?: string, page: number | null})
 *   => string | null}
 */
export function linkResolver(targets) {
  return (citation) => {
    const entry = targets.get(citation.item_key);
    // What the user wrote opens itself: a note is selected, an annotation opens in its PDF.
    if (citation.origin === "note" && citation.source_key)
      return selectURL({ key: citation.source_key, groupID: entry?.groupID ?? null });
    const source = citation.attachment_key && entry?.attachments?.get(citation.attachment_key);
    const target = source || entry;
    if (!target?.key) return null;
    return openPdfURL({
      key: target.key,
      groupID: target.groupID ?? null,
      page: target.pdf === false ? null : citation.page,
      annotation:
        source && citation.origin && citation.origin !== "note" ? citation.source_key : "",
    });
  };
}

/**
 * The page a citation opens: the marker's, or where the quote was found when the agent did not
 * find it on the page it cites (that check is about the citation's own page, not other pages a
 * marker with the same n names).
 */
function openPage(c, entry) {
  const checked = c.verified === false && c.foundOnPage != null;
  return checked && (!entry || c.page === entry.page) ? c.foundOnPage : c.page;
}

/**
 * An answer read once for every output: its body (without its own `# Cited Sources` list),
 * the body's Markdown tree with the markers resolved, and its sources in order of n, each
 * with the answer's own line for it when there is one.
 */
export function readAnswer(answer, citations) {
  const text = String(answer ?? "").replace(/\r\n?/g, "\n");
  const index = citationIndex(citations, text);
  // The answer's own source lines ("Bates et al. (2015). Title. Item KEY, p. 3.") name authors
  // and year, which the done event's titles lack.
  const lines = new Map();
  const parsed = citedSourcesFromText(text);
  const sharing = new Map(); // a line for several passages of one paper: how many share it
  for (const c of parsed) sharing.set(c.title, (sharing.get(c.title) || 0) + 1);
  for (const c of parsed) if (!lines.has(c.n)) lines.set(c.n, c.title);
  const body = withoutCitedSources(text);
  const wire = [...index.values()].map((c) => ({ ...c, found_on_page: c.foundOnPage }));
  const nodes = parseMarkdown(body, { citations: wire });
  const sources = [...index.values()]
    .sort((a, b) => a.n - b.n)
    .map((c) => {
      let line = lines.get(c.n) || "";
      // Listed one by one, a passage of a paper's shared line names its own page only.
      if (sharing.get(line) > 1 && c.page != null)
        line = line.replace(/\b(?:pp?\.)\s*\d{1,5}(?:\s*[,\u2013-]\s*\d{1,5})*/i, `p. ${c.page}`);
      return { ...c, line: line.toUpperCase().includes(c.item_key) ? line : "" };
    });
  return { body, index, nodes, sources };
}

function* walk(nodes) {
  for (const n of nodes) {
    yield n;
    if (n.children) yield* walk(n.children);
  }
}

/** "Title. Item KEY, p. 3." (or the answer's own line for that source). */
export function describe(c) {
  if (c.line) return c.line;
  const title = (c.title || c.item_key).trim();
  const page = c.page != null ? `, p. ${c.page}` : "";
  return `${title}${/[.?!]$/.test(title) ? "" : "."} Item ${c.item_key}${page}.`;
}

/** The word that a source's quote is not on its cited page ("" when it is, or unchecked). */
export function verificationNote(c, labels) {
  if (c.verified !== false) return "";
  return c.foundOnPage != null ? labels.quoteOnPage(c.foundOnPage) : labels.quoteNotFound;
}

/** A quote as text (quotes are sentences of the answer, Markdown included). */
export const quoteText = (quote) => textContent(parseMarkdown(quote)).replace(/\s+/g, " ").trim();

/** The checked link of a citation (a marker node or a source), or null. */
export function linkOf(linkFor, c, index) {
  if (typeof linkFor !== "function") return null;
  const page = openPage(c, index && index.get(c.n));
  const item_key = c.itemKey ?? c.item_key;
  const attachment_key = c.attachmentKey ?? c.attachment_key ?? "";
  const origin = c.origin ?? "";
  const source_key = c.sourceKey ?? c.source_key ?? "";
  // What the user wrote (a highlight, a comment, a note) names itself.
  const own = origin && source_key ? { origin, source_key } : {};
  return safeHref(linkFor({ n: c.n, item_key, attachment_key, page, ...own }));
}

/**
 * The item keys the answer's markers cite, most cited first (ties: first cited).
 * @returns {string[]}
 */
export function citedItemKeys(citations, answer) {
  const counts = new Map();
  for (const n of walk(readAnswer(answer, citations).nodes))
    if (n.type === "citation") counts.set(n.itemKey, (counts.get(n.itemKey) || 0) + 1);
  // Map keeps first-cited order and sort is stable: ties stay in that order.
  return [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([key]) => key);
}

/** The item the answer cites most often (ties: the first cited), or null. */
export function mostCitedItemKey(citations, answer) {
  return citedItemKeys(citations, answer)[0] ?? null;
}

/** Inline elements of markdown.js's tree (the rest are blocks). */
const INLINE = new Set(["strong", "em", "del", "code", "a", "br", "span"]);
export const isInline = (n) => n.type !== "element" || INLINE.has(n.tag);
export const textOf = (nodes) =>
  nodes.map((n) => (n.type === "text" ? n.text : textOf(n.children || []))).join("");
