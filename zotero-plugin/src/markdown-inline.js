/**
 * Inline Markdown (markdown.js): emphasis, strikethrough, code spans, links and autolinks whose
 * scheme is http, https or zotero (`safeHref`), line breaks, and citation markers `[n, p. X]`
 * resolved against the turn's citations (an unknown n stays text). Also the tree's node
 * builders, which markdown-blocks.js shares.
 */
import { parseMarker } from "./citations.js";

export const SAFE_SCHEMES = Object.freeze(["http:", "https:", "zotero:"]);

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

/** A tree node: an element, or text. */
export const el = (tag, attrs = {}, children = []) => ({ type: "element", tag, attrs, children });
export const txt = (text) => ({ type: "text", text });

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
      origin: entry.origin || "",
      sourceKey: entry.source_key || "",
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
