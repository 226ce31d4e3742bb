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
 */

import { citationIndex, parseMarker } from "./citations.js";

export const SAFE_SCHEMES = Object.freeze(["http:", "https:", "zotero:"]);
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

/** The URL when its scheme is http, https or zotero; null otherwise. */
export function safeHref(raw) {
  if (typeof raw !== "string") return null;
  const value = raw.trim();
  // eslint-disable-next-line no-control-regex
  if (!value || /[\s\u0000-\u001f\u007f<>"'`\\]/.test(value)) return null;
  let url;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (!SAFE_SCHEMES.includes(url.protocol.toLowerCase())) return null;
  if (url.protocol !== "zotero:" && !url.hostname) return null;
  return url.href;
}

const el = (tag, attrs = {}, children = []) => ({ type: "element", tag, attrs, children });
const txt = (text) => ({ type: "text", text });

// ---------------------------------------------------------------- blocks

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)[^`]*$/;
const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const HR = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const QUOTE = /^ {0,3}>[ ]?/;
const LIST_ITEM = /^([ \t]*)([-*+]|\d{1,9}[.)])(?:[ \t]+(.*)|[ \t]*$)/;
const TABLE_SEP = /^\s*\|?\s*:?-{1,}:?\s*(?:\|\s*:?-{1,}:?\s*)*\|?\s*$/;

const indentOf = (s) => {
  let n = 0;
  for (const c of s) {
    if (c === " ") n += 1;
    else if (c === "\t") n += 4 - (n % 4);
    else break;
  }
  return n;
};
const isBlank = (s) => /^\s*$/.test(s);
const stripIndent = (s, n) => {
  let i = 0;
  let col = 0;
  while (i < s.length && col < n && (s[i] === " " || s[i] === "\t")) {
    col += s[i] === "\t" ? 4 - (col % 4) : 1;
    i++;
  }
  return s.slice(i);
};

function startsBlock(line) {
  return (
    FENCE.test(line) ||
    HEADING.test(line) ||
    HR.test(line) ||
    QUOTE.test(line) ||
    LIST_ITEM.test(line)
  );
}

function splitRow(line) {
  let s = line.trim();
  if (s.startsWith("|")) s = s.slice(1);
  if (s.endsWith("|") && !s.endsWith("\\|")) s = s.slice(0, -1);
  const cells = [];
  let cur = "";
  for (let i = 0; i < s.length; i++) {
    if (s[i] === "\\" && s[i + 1] === "|") {
      cur += "|";
      i++;
    } else if (s[i] === "|") {
      cells.push(cur.trim());
      cur = "";
    } else cur += s[i];
  }
  cells.push(cur.trim());
  return cells;
}

function parseBlocks(lines, ctx, depth = 0) {
  const out = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (isBlank(line)) {
      i++;
      continue;
    }
    let m;
    if ((m = FENCE.exec(line))) {
      const fence = m[1];
      const lang = m[2].replace(/[^A-Za-z0-9_+-]/g, "").slice(0, 30);
      const body = [];
      i++;
      const close = new RegExp(`^ {0,3}${fence[0] === "`" ? "`" : "~"}{${fence.length},}\\s*$`);
      while (i < lines.length && !close.test(lines[i])) body.push(lines[i++]);
      i++; // the closing fence (or the end of a still-streaming block)
      const codeAttrs = lang ? { class: `language-${lang}` } : {};
      out.push(el("pre", {}, [el("code", codeAttrs, [txt(body.join("\n"))])]));
      continue;
    }
    if ((m = HEADING.exec(line))) {
      out.push(el(`h${m[1].length}`, {}, parseInline(m[2] || "", ctx)));
      i++;
      continue;
    }
    if (HR.test(line)) {
      out.push(el("hr"));
      i++;
      continue;
    }
    if (QUOTE.test(line) && depth < 8) {
      const body = [];
      while (i < lines.length && !isBlank(lines[i])) {
        if (QUOTE.test(lines[i])) body.push(lines[i].replace(QUOTE, ""));
        else if (startsBlock(lines[i])) break;
        else body.push(lines[i]); // lazy continuation
        i++;
      }
      out.push(el("blockquote", {}, parseBlocks(body, ctx, depth + 1)));
      continue;
    }
    if (LIST_ITEM.test(line) && depth < 8) {
      const [node, next] = parseList(lines, i, ctx, depth);
      out.push(node);
      i = next;
      continue;
    }
    if (
      line.includes("|") &&
      i + 1 < lines.length &&
      TABLE_SEP.test(lines[i + 1]) &&
      lines[i + 1].includes("-")
    ) {
      const header = splitRow(line);
      if (header.length === splitRow(lines[i + 1]).length) {
        i += 2;
        const rows = [];
        while (i < lines.length && !isBlank(lines[i]) && lines[i].includes("|"))
          rows.push(splitRow(lines[i++]));
        const head = el("thead", {}, [
          el(
            "tr",
            {},
            header.map((c) => el("th", {}, parseInline(c, ctx))),
          ),
        ]);
        const body = el(
          "tbody",
          {},
          rows.map((r) =>
            el(
              "tr",
              {},
              header.map((_, k) => el("td", {}, parseInline(r[k] || "", ctx))),
            ),
          ),
        );
        out.push(el("table", {}, [head, body]));
        continue;
      }
    }
    // paragraph
    const para = [line.trim()];
    i++;
    while (i < lines.length && !isBlank(lines[i]) && !startsBlock(lines[i])) {
      if (lines[i].includes("|") && i + 1 < lines.length && TABLE_SEP.test(lines[i + 1])) break;
      para.push(lines[i].trim());
      i++;
    }
    out.push(el("p", {}, parseInline(para.join("\n"), ctx)));
  }
  return out;
}

function parseList(lines, start, ctx, depth) {
  const first = LIST_ITEM.exec(lines[start]);
  const baseIndent = indentOf(first[1]);
  const ordered = /\d/.test(first[2]);
  const bullet = ordered ? first[2].slice(-1) : first[2];
  const attrs = {};
  if (ordered) {
    const n = parseInt(first[2], 10);
    if (n !== 1) attrs.start = String(n);
  }
  const items = [];
  let loose = false;
  let i = start;
  while (i < lines.length) {
    const m = LIST_ITEM.exec(lines[i]);
    if (!m || indentOf(m[1]) !== baseIndent) break;
    const sameKind = ordered ? /\d/.test(m[2]) && m[2].slice(-1) === bullet : m[2] === bullet;
    if (!sameKind) break;
    const content = baseIndent + m[2].length + 1;
    const body = [m[3] || ""];
    i++;
    let sawBlank = false;
    while (i < lines.length) {
      const line = lines[i];
      if (isBlank(line)) {
        sawBlank = true;
        body.push("");
        i++;
        continue;
      }
      const ind = indentOf(line);
      if (ind > baseIndent) {
        body.push(stripIndent(line, Math.min(ind, content)));
        if (sawBlank) loose = true;
        sawBlank = false;
        i++;
        continue;
      }
      if (!sawBlank && !startsBlock(line)) {
        body.push(line.trim()); // lazy continuation of the item's paragraph
        i++;
        continue;
      }
      break;
    }
    // blank lines at the end of an item separate items, they do not make them loose
    while (body.length && isBlank(body[body.length - 1])) body.pop();
    if (sawBlank && i < lines.length) {
      const next = LIST_ITEM.exec(lines[i]);
      if (next && indentOf(next[1]) === baseIndent) loose = true;
    }
    items.push(parseBlocks(body, ctx, depth + 1));
  }
  const children = items.map((blocks) => {
    if (loose) return el("li", {}, blocks);
    const flat = [];
    for (const b of blocks) {
      if (b.type === "element" && b.tag === "p") flat.push(...b.children);
      else flat.push(b);
    }
    return el("li", {}, flat);
  });
  return [el(ordered ? "ol" : "ul", attrs, children), i];
}

// ---------------------------------------------------------------- inline

const PUNCT = /[!-/:-@[-`{-~]/;
const isSpace = (c) => c === undefined || /\s/.test(c);
const isAlnum = (c) => c !== undefined && /[\p{L}\p{N}]/u.test(c);
const BARE_URL = /^(?:https?:\/\/|zotero:\/\/)[^\s<>"'`]+/i;

function runLength(s, i, ch) {
  let j = i;
  while (s[j] === ch) j++;
  return j - i;
}

function findCloser(s, from, ch, len) {
  for (let j = from; j < s.length; j++) {
    if (s[j] === "\\") {
      j++;
      continue;
    }
    if (s[j] === "`") {
      const k = runLength(s, j, "`");
      const end = s.indexOf("`".repeat(k), j + k);
      if (end !== -1) {
        j = end + k - 1;
        continue;
      }
    }
    if (s[j] !== ch) continue;
    const run = runLength(s, j, ch);
    if (run === len && !isSpace(s[j - 1]) && !(ch === "_" && isAlnum(s[j + len]))) return j;
    j += run - 1;
  }
  return -1;
}

function findBracketEnd(s, open) {
  let level = 0;
  for (let j = open; j < s.length; j++) {
    if (s[j] === "\\") {
      j++;
      continue;
    }
    if (s[j] === "[") level++;
    else if (s[j] === "]") {
      level--;
      if (level === 0) return j;
    } else if (s[j] === "\n" && s[j + 1] === "\n") return -1;
  }
  return -1;
}

function findParenEnd(s, open) {
  let level = 0;
  for (let j = open; j < s.length; j++) {
    if (s[j] === "\\") {
      j++;
      continue;
    }
    if (s[j] === "(") level++;
    else if (s[j] === ")") {
      level--;
      if (level === 0) return j;
    } else if (s[j] === "\n") return -1;
  }
  return -1;
}

function citationNodes(inner, ctx) {
  const refs = parseMarker(inner);
  if (!refs) return null;
  const resolved = refs.map((r) => ({ ref: r, entry: ctx.citations.get(r.n) }));
  if (!resolved.some((x) => x.entry)) return null;
  const node = (r, entry, text) => {
    const page = r.page ?? entry.page ?? null;
    // The check of this page of the evidence, when the agent checked it; else the entry's.
    const check = (page != null && entry.pages?.get(page)) || entry;
    return {
      type: "citation",
      n: r.n,
      itemKey: entry.item_key,
      attachmentKey: entry.attachment_key || "",
      page,
      title: entry.title || "",
      quote: check.quote || "",
      verified: check.verified ?? null,
      foundOnPage: check.foundOnPage ?? null,
      text,
    };
  };
  if (resolved.length === 1) return [node(refs[0], resolved[0].entry, `[${inner.trim()}]`)];
  const out = [txt("[")];
  resolved.forEach(({ ref, entry }, k) => {
    if (k) out.push(txt("; "));
    out.push(entry ? node(ref, entry, ref.text) : txt(ref.text));
  });
  out.push(txt("]"));
  return out;
}

/** Inline Markdown to nodes. */
export function parseInline(src, ctx, depth = 0) {
  const out = [];
  let buf = "";
  const flush = () => {
    if (buf) out.push(txt(buf));
    buf = "";
  };
  const s = String(src);
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    if (c === "\\" && i + 1 < s.length && PUNCT.test(s[i + 1])) {
      buf += s[i + 1];
      i += 2;
      continue;
    }
    if (c === "\n") {
      flush();
      out.push(el("br"));
      i++;
      continue;
    }
    if (c === "`") {
      const k = runLength(s, i, "`");
      const end = s.indexOf("`".repeat(k), i + k);
      if (end !== -1 && runLength(s, end, "`") === k) {
        let code = s.slice(i + k, end).replace(/\n/g, " ");
        if (code.length > 2 && code.startsWith(" ") && code.endsWith(" ")) code = code.slice(1, -1);
        flush();
        out.push(el("code", {}, [txt(code)]));
        i = end + k;
        continue;
      }
      buf += "`".repeat(k);
      i += k;
      continue;
    }
    if (c === "[") {
      const close = findBracketEnd(s, i);
      if (close !== -1) {
        const inner = s.slice(i + 1, close);
        if (s[close + 1] !== "(") {
          const cites = citationNodes(inner, ctx);
          if (cites) {
            flush();
            out.push(...cites);
            i = close + 1;
            continue;
          }
        } else {
          const end = findParenEnd(s, close + 1);
          if (end !== -1) {
            const target = s
              .slice(close + 2, end)
              .trim()
              .replace(/\s+"[^"]*"$/, "");
            const href = safeHref(target.replace(/^<(.*)>$/, "$1"));
            if (href && depth < 4) {
              flush();
              out.push(el("a", { href }, parseInline(inner, ctx, depth + 1)));
              i = end + 1;
              continue;
            }
            buf += s.slice(i, end + 1); // unsafe or odd link: its source, as text
            i = end + 1;
            continue;
          }
        }
      }
      buf += c;
      i++;
      continue;
    }
    if (c === "<") {
      const end = s.indexOf(">", i);
      if (end !== -1) {
        const href = safeHref(s.slice(i + 1, end));
        if (href) {
          flush();
          out.push(el("a", { href }, [txt(s.slice(i + 1, end))]));
          i = end + 1;
          continue;
        }
      }
      buf += c;
      i++;
      continue;
    }
    if ((c === "h" || c === "H" || c === "z" || c === "Z") && !isAlnum(s[i - 1])) {
      const m = BARE_URL.exec(s.slice(i));
      if (m) {
        let url = m[0];
        while (/[.,;:!?)\]*_]$/.test(url)) {
          if (
            url.endsWith(")") &&
            (url.match(/\(/g) || []).length >= (url.match(/\)/g) || []).length
          )
            break;
          url = url.slice(0, -1);
        }
        const href = safeHref(url);
        if (href) {
          flush();
          out.push(el("a", { href }, [txt(url)]));
          i += url.length;
          continue;
        }
      }
    }
    if ((c === "*" || c === "_" || c === "~") && depth < 8) {
      const run = runLength(s, i, c);
      const okOpen = !isSpace(s[i + run]) && !(c === "_" && isAlnum(s[i - 1]));
      if (c === "~" ? run === 2 : okOpen && run <= 3) {
        const len = run;
        const close = okOpen ? findCloser(s, i + len, c, len) : -1;
        if (close > i + len) {
          const inner = parseInline(s.slice(i + len, close), ctx, depth + 1);
          let node;
          if (c === "~") node = el("del", {}, inner);
          else if (len === 1) node = el("em", {}, inner);
          else if (len === 2) node = el("strong", {}, inner);
          else node = el("strong", {}, [el("em", {}, inner)]);
          flush();
          out.push(node);
          i = close + len;
          continue;
        }
      }
      buf += c.repeat(run);
      i += run;
      continue;
    }
    buf += c;
    i++;
  }
  flush();
  return out;
}

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
};

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
