/**
 * "Copy with citations": an answer as Markdown or as plain text, its markers kept as they read
 * (`[1, p. 10]`), its sources listed under it.
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

// ---------------------------------------------------------------- Markdown

const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;

/** Every ATX heading one level down (h6 stays), fenced code left alone. */
function demoteHeadings(markdown) {
  let open = null;
  return markdown
    .split("\n")
    .map((line) => {
      const fence = FENCE.exec(line);
      if (fence) {
        const run = fence[1];
        if (!open) open = run;
        else if (run[0] === open[0] && run.length >= open.length && !fence[2].trim()) open = null;
        return line;
      }
      return open ? line : line.replace(/^( {0,3})(#{1,5})(?=[ \t]|$)/, "$1#$2");
    })
    .join("\n");
}

const mdText = (s) => String(s).replace(/[\\[\]*_`<]/g, (ch) => `\\${ch}`);

/**
 * The answer as Markdown, markers as they are (`[1, p. 10]`), then its sources:
 * `- [n] [source](zotero://open-pdf/...) "quote"` (the link when `linkFor` gives one). The
 * sources lines read `... Item KEY, p. X.`, so citations.js reads them back.
 * @param {{question?: string, answer?: string, citations?: object[], linkFor?: Function,
 *          labels?: object}} options
 * @returns {string}
 */
export function answerToMarkdown({
  question = "",
  answer = "",
  citations = [],
  linkFor = null,
  labels = {},
} = {}) {
  const words = { ...DEFAULT_LABELS, ...labels };
  const { body, sources } = readAnswer(answer, citations);
  const q = String(question ?? "")
    .replace(/\s+/g, " ")
    .trim();
  const parts = [];
  if (q) parts.push(`# ${mdText(q)}`);
  if (body) parts.push(q ? demoteHeadings(body) : body);
  if (sources.length) {
    parts.push(`${q ? "##" : "#"} ${mdText(words.sources)}`);
    const lines = sources.map((c) => {
      const href = linkOf(linkFor, c);
      const target = href && href.replace(/[()]/g, (ch) => encodeURIComponent(ch));
      const what = href ? `[${mdText(describe(c))}](${target})` : mdText(describe(c));
      const quote = c.quote ? ` \u201c${String(c.quote).replace(/\s+/g, " ").trim()}\u201d` : "";
      const note = verificationNote(c, words);
      return `- [${c.n}] ${what}${quote}${note ? ` (${mdText(note)})` : ""}`;
    });
    parts.push(lines.join("\n"));
  }
  return parts.join("\n\n");
}

// ---------------------------------------------------------------- plain text

const indentLines = (text, first, rest) =>
  text
    .split("\n")
    .map((line, i) => (i === 0 ? first : rest) + line)
    .join("\n");

function plainInline(nodes) {
  return nodes
    .map((n) => {
      if (n.type === "text" || n.type === "citation") return n.text;
      if (n.tag === "br") return "\n";
      const inner = plainInline(n.children);
      const href = n.tag === "a" ? n.attrs.href || "" : "";
      if (href && href.replace(/\/$/, "") !== inner.replace(/\/$/, "")) return `${inner} (${href})`;
      return inner;
    })
    .join("");
}

function plainFlow(children) {
  const out = [];
  let run = [];
  const flush = () => {
    if (run.length) out.push(plainInline(run));
    run = [];
  };
  for (const c of children) {
    if (isInline(c)) run.push(c);
    else {
      flush();
      out.push(plainBlock(c));
    }
  }
  flush();
  return out.join("\n");
}

function plainTable(table) {
  const rows = [];
  for (const part of table.children)
    for (const tr of part.children)
      rows.push(tr.children.map((cell) => plainFlow(cell.children).replace(/\s+/g, " ").trim()));
  const widths = [];
  for (const row of rows)
    row.forEach((cell, k) => (widths[k] = Math.max(widths[k] || 0, cell.length)));
  return rows
    .map((row) =>
      row
        .map((cell, k) => cell.padEnd(widths[k]))
        .join(" | ")
        .trimEnd(),
    )
    .join("\n");
}

function plainBlock(n) {
  if (isInline(n)) return plainInline([n]);
  switch (n.tag) {
    case "pre":
      return indentLines(textOf(n.children), "    ", "    ");
    case "blockquote":
      return n.children
        .map(plainBlock)
        .join("\n\n")
        .split("\n")
        .map((line) => (line ? `> ${line}` : ">"))
        .join("\n");
    case "ul":
    case "ol": {
      const start = Number(n.attrs.start || 1);
      return n.children
        .map((li, i) => {
          const marker = n.tag === "ol" ? `${start + i}. ` : "\u2022 ";
          return indentLines(plainFlow(li.children), marker, " ".repeat(marker.length));
        })
        .join("\n");
    }
    case "hr":
      return "\u2014\u2014\u2014";
    case "table":
      return plainTable(n);
    default:
      return plainFlow(n.children || []);
  }
}

/**
 * The answer as plain text: no Markdown left (lists as "•" / "1." lines, quotes as "> ",
 * code indented, links as "text (url)"), markers as they are, then `[n] source "quote"` lines.
 * @param {{question?: string, answer?: string, citations?: object[], labels?: object}} options
 * @returns {string}
 */
export function answerToPlainText({
  question = "",
  answer = "",
  citations = [],
  labels = {},
} = {}) {
  const words = { ...DEFAULT_LABELS, ...labels };
  const { nodes, sources } = readAnswer(answer, citations);
  const parts = [];
  const q = String(question ?? "").trim();
  if (q) parts.push(q);
  for (const n of nodes) {
    const text = plainBlock(n);
    if (text.trim()) parts.push(text);
  }
  if (sources.length) {
    parts.push(words.sources);
    const lines = sources.map((c) => {
      const quote = c.quote ? ` \u201c${quoteText(c.quote)}\u201d` : "";
      const note = verificationNote(c, words);
      return `[${c.n}] ${describe(c)}${quote}${note ? ` (${note})` : ""}`;
    });
    parts.push(lines.join("\n"));
  }
  return parts.join("\n\n");
}
