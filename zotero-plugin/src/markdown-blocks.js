/**
 * Block Markdown (markdown.js): paragraphs (single line breaks kept), ATX headings, fenced code
 * blocks, block quotes, bullet and numbered lists (nested by indentation, tight or loose),
 * horizontal rules and simple pipe tables; the text inside them goes to markdown-inline.js.
 */
import { el, parseInline, txt } from "./markdown-inline.js";

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

/** Lines of Markdown to block nodes (`ctx.citations`: the citation index). */
export function parseBlocks(lines, ctx, depth = 0) {
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
