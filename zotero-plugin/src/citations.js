/**
 * Citation markers in answers, and the `# Cited Sources` section.
 *
 * Answers cite evidence as `[n, p. X]` (also `[n]`, `[n, pp. X-Y]`, and several at once as
 * `[1, p. 3; 2, p. 7]`). A live turn's `done` event maps each n to `{n, item_key, title, page}`;
 * a chat reloaded from GET /sessions/{id} has no such map, so it is rebuilt from the answer's
 * `# Cited Sources` section, whose lines read `[n] Authors (year). Title. Item KEY, p. X.`
 * A live turn's citations also say whether the quoted sentence is on the cited page
 * (`verified`) and where else it was found (`found_on_page`).
 */

const ONE = String.raw`(\d{1,3})(?:\s*,\s*(?:pp?\.?|pages?)\s*(\d{1,5})(?:\s*[-\u2013]\s*(\d{1,5}))?)?`;
const ONE_RE = new RegExp(`^\\s*${ONE}\\s*$`, "i");
/** The inside of a citation bracket: one or more `n[, p. X]` separated by `;`. */
export const MARKER_BODY_RE = new RegExp(
  String.raw`^\s*\d{1,3}(?:\s*,\s*(?:pp?\.?|pages?)\s*\d{1,5}(?:\s*[-\u2013]\s*\d{1,5})?)?(?:\s*;\s*\d{1,3}(?:\s*,\s*(?:pp?\.?|pages?)\s*\d{1,5}(?:\s*[-\u2013]\s*\d{1,5})?)?)*\s*$`,
  "i",
);

/**
 * The references in a bracket's inside text, or null when it is not a citation marker.
 * @param {string} inner text between `[` and `]`
 * @returns {{n: number, page: number | null, pageEnd: number | null, text: string}[] | null}
 */
export function parseMarker(inner) {
  if (!MARKER_BODY_RE.test(inner)) return null;
  return inner.split(";").map((piece) => {
    const m = ONE_RE.exec(piece);
    return {
      n: Number(m[1]),
      page: m[2] ? Number(m[2]) : null,
      pageEnd: m[3] ? Number(m[3]) : null,
      text: piece.trim(),
    };
  });
}

// Zotero's key alphabet has no 0, 1 or O; the explicit "Item KEY" form accepts any [A-Z0-9].
const EXPLICIT_KEY = /\bitem(?:\s+key)?\s*[:#]?\s*[`*_]*([A-Z0-9]{8})\b/i;
const LOOSE_KEY = /(?<![A-Za-z0-9])([2-9A-NP-Z]{8})(?![A-Za-z0-9])/;
const PAGE = /\b(?:pp?\.|pages?)\s*(\d{1,5})/i;
// "[1] Title ..." or, for a paper cited as several passages, "[1], [2], [3] Title ...".
const SOURCE_LINE =
  /^\s*(?:[-*+]\s+|\d+[.)]\s+)?((?:\[\d{1,3}\]\s*[,;]?\s*)+?)[:.\-\u2013]?\s*(?!\[\d)(.*)$/;
const PAGES = /\b(?:pp?\.|pages?)\s*(\d{1,5}(?:\s*[,\u2013-]\s*\d{1,5})*)/i;
const CITED_HEADING =
  /^\s{0,3}#{1,6}\s*(?:\*\*)?\s*(?:cited\s+sources|sources\s+cited|references|sources)\b/i;
const ANY_HEADING = /^\s{0,3}#{1,6}\s/;

/**
 * Citations listed in the answer's `# Cited Sources` section (any heading level; also
 * "References" / "Sources").
 * @returns {{n: number, item_key: string, title: string, page: number | null}[]}
 */
export function citedSourcesFromText(text) {
  const out = [];
  if (!text) return out;
  let inSection = false;
  for (const line of String(text).split(/\r\n|\r|\n/)) {
    if (CITED_HEADING.test(line)) {
      inSection = true;
      continue;
    }
    if (!inSection) continue;
    if (ANY_HEADING.test(line)) {
      inSection = false;
      continue;
    }
    const m = SOURCE_LINE.exec(line);
    if (!m) continue;
    const rest = m[2];
    const key = (EXPLICIT_KEY.exec(rest) || LOOSE_KEY.exec(rest) || [])[1];
    if (!key) continue;
    const numbers = [...m[1].matchAll(/\d{1,3}/g)].map((d) => Number(d[0]));
    const page = PAGE.exec(rest);
    // A line for several passages lists their pages together ("pp. 9, 10"): which passage is
    // on which page is in the answer's own markers, so a page is kept only when it is one.
    const pages = PAGES.exec(rest);
    const several = pages && /,/.test(pages[1]);
    for (const n of numbers)
      out.push({
        n,
        item_key: key.toUpperCase(),
        title: rest.replace(/[*_`]/g, "").trim(),
        page: page && !(numbers.length > 1 && several) ? Number(page[1]) : null,
      });
  }
  return out;
}

/**
 * The answer without its `# Cited Sources` section (the heading and its lines, up to the next
 * heading), for the outputs that list the sources themselves (notes.js).
 * @returns {string}
 */
export function withoutCitedSources(text) {
  const kept = [];
  let inSection = false;
  for (const line of String(text ?? "").split(/\r\n|\r|\n/)) {
    if (CITED_HEADING.test(line)) {
      inSection = true;
      continue;
    }
    if (inSection && ANY_HEADING.test(line)) inSection = false;
    if (!inSection) kept.push(line);
  }
  return kept.join("\n").trim();
}

/**
 * One entry per n: the `done` event's citations first, then those parsed from the text.
 * @returns {Map<number, {n: number, item_key: string, title: string, page: number | null}>}
 */
export function citationIndex(citations = [], text = "") {
  const index = new Map();
  // What the agent checked of one citation: the quoted sentence, and whether it is on the
  // cited page (true / false; null or absent: not checked).
  const checkOf = (c) => ({
    quote: c.quote ? String(c.quote) : "",
    verified: typeof c.verified === "boolean" ? c.verified : null,
    foundOnPage:
      Number.isInteger(Number(c.found_on_page)) && c.found_on_page != null
        ? Number(c.found_on_page)
        : null,
  });
  for (const c of citations || []) {
    if (!(c && Number.isInteger(Number(c.n)) && c.item_key)) continue;
    const n = Number(c.n);
    // A note has no page (0 from the agent).
    const page = c.page == null || Number(c.page) < 1 ? null : Number(c.page);
    if (!index.has(n)) {
      index.set(n, {
        n,
        item_key: String(c.item_key),
        // The PDF the evidence came from (an item may have several); empty: the item's own.
        attachment_key: c.attachment_key ? String(c.attachment_key) : "",
        // What the user wrote: "highlight", "comment" or "note", and its key.
        origin: c.origin ? String(c.origin) : "",
        source_key: c.source_key ? String(c.source_key) : "",
        title: c.title ? String(c.title) : "",
        page,
        ...checkOf(c),
        // Each cited page of evidence n keeps its own check: [1, p. 4] is not [1, p. 3].
        pages: new Map(),
      });
    }
    const pages = index.get(n).pages;
    if (page != null && pages && !pages.has(page)) pages.set(page, checkOf(c));
  }
  if (text) {
    for (const c of citedSourcesFromText(text)) if (!index.has(c.n)) index.set(c.n, c);
  }
  return index;
}

/**
 * A short, distinctive piece of a quote for the reader's find bar: its first words (a whole
 * sentence rarely matches a PDF's text layer exactly: line breaks, hyphens, ligatures).
 * @param {string} quote
 * @returns {string}
 */
export function findPhrase(quote, words = 8) {
  const clean = String(quote || "")
    .replace(/[\u201c\u201d"]/g, "")
    .replace(/\s+/g, " ")
    .trim();
  // Up to the first formula-looking or bracketed part, which text layers render differently.
  const head = clean.split(/[([{=\u2212]/, 1)[0].trim();
  return head.split(" ").slice(0, words).join(" ");
}
