/**
 * The collapsed "research steps" of an assistant bubble, in words: a bubble's `steps`
 * (messages.js: call, result, thought, note, checkpoint, decision) become display rows, a
 * function call merged with its result ("Searched “lmer optimizer” · 8 passages"). Pure.
 */
import { truncate } from "./format.js";

const n = (v) => new Intl.NumberFormat("en-US").format(v);
const many = (count, one, other) => `${n(count)} ${count === 1 ? one : other}`;

/** English, for when no localization is given; keys are sidebar.ftl's zocrates-step-* ids. */
export const ENGLISH = Object.freeze({
  "zocrates-step-research": () => "Research the library",
  "zocrates-step-searched": ({ query }) => `Searched “${query}”`,
  "zocrates-step-searched-library": () => "Searched the library",
  "zocrates-step-passages": ({ count }) => many(count, "passage", "passages"),
  "zocrates-step-items-more": ({ items, more }) => `${items} and ${n(more)} more`,
  "zocrates-step-page": ({ page }) => `p. ${page}`,
  "zocrates-step-pages": ({ start, end }) => `pp. ${start}–${end}`,
  "zocrates-step-read": ({ where }) => `Read ${where}`,
  "zocrates-step-read-paper": () => "Read a paper",
  "zocrates-step-toc": () => "Looked at the table of contents",
  "zocrates-step-conclude": () => "Concluded the search",
  "zocrates-step-extend": () => "Asked for more room to search",
  "zocrates-step-openalex": ({ query }) => `Searched OpenAlex for “${query}”`,
  "zocrates-step-openalex-any": () => "Searched OpenAlex",
  "zocrates-step-works": ({ count }) => many(count, "work", "works"),
  "zocrates-step-failed": ({ tool }) => `${tool} failed`,
  "zocrates-step-thought": () => "Thought",
  "zocrates-step-note": () => "Note",
  "zocrates-step-paused": ({ number, max }) =>
    `Paused for your decision: extension ${number} of ${max} offered`,
  "zocrates-step-paused-final": () => "Paused for your decision: no extension left",
  "zocrates-step-gaps": ({ count }) =>
    `${many(count, "part", "parts")} of the question without evidence`,
  "zocrates-step-granted": ({ number }) => `You granted extension ${number}`,
  "zocrates-step-granted-any": () => "You granted an extension",
  "zocrates-step-synthesize": () => "You chose to synthesize with the evidence found",
  "zocrates-step-guidance": ({ text }) => `Guidance: “${text}”`,
});

/** The English text of a zocrates-step-* message (the default `t` of stepRows). */
export function englishStep(id, args = {}) {
  const f = ENGLISH[id];
  return f ? f(args) : id;
}

/** Tool arguments arrive as an object, or (when long) as a JSON string the gateway cut. */
export function toolArgs(args) {
  if (args && typeof args === "object") return args;
  if (typeof args === "string") {
    try {
      const parsed = JSON.parse(args);
      if (parsed && typeof parsed === "object") return parsed;
    } catch {
      // a truncated JSON string: read the few fields the rows show
      const out = {};
      for (const key of ["query", "request", "item_key", "summary", "justification"]) {
        const m = new RegExp(`"${key}"\\s*:\\s*"((?:[^"\\\\]|\\\\.)*)`).exec(args);
        if (m) out[key] = m[1].replace(/\\"/g, '"').replace(/\\\\/g, "\\");
      }
      return out;
    }
  }
  return {};
}

function pages(a, b, t) {
  const s = Number(a);
  const e = Number(b);
  if (!Number.isInteger(s) || s < 1) return "";
  return Number.isInteger(e) && e > s
    ? t("zocrates-step-pages", { start: s, end: e })
    : t("zocrates-step-page", { page: s });
}

function itemsText(result, t) {
  const items = Array.isArray(result?.items) ? result.items.map(String).filter(Boolean) : [];
  if (!items.length) return "";
  const shown = items.slice(0, 2).map((x) => truncate(x, 48));
  return items.length > 2
    ? t("zocrates-step-items-more", { items: shown.join("; "), more: items.length - 2 })
    : shown.join("; ");
}

function describeCall(call, result, t) {
  const a = toolArgs(call.args);
  const row = {
    kind: "tool",
    name: call.name,
    author: call.author || "",
    label: call.name.replace(/_/g, " "),
    detail: "",
    link: null,
    running: !result,
    error: result && result.status === "error" ? result.message || result.code || "failed" : "",
  };
  switch (call.name) {
    case "search_library":
      row.kind = "research";
      row.label = t("zocrates-step-research");
      row.detail = a.request ? truncate(a.request, 140) : "";
      break;
    case "search_corpus": {
      row.kind = "search";
      row.label = a.query
        ? t("zocrates-step-searched", { query: truncate(a.query, 70) })
        : t("zocrates-step-searched-library");
      if (result && result.count != null) {
        const found = t("zocrates-step-passages", { count: result.count });
        const items = itemsText(result, t);
        row.detail = items ? `${found} · ${items}` : found;
      }
      break;
    }
    case "read_document": {
      row.kind = "read";
      const where = pages(a.start_page ?? a.page, a.end_page, t);
      row.label = where ? t("zocrates-step-read", { where }) : t("zocrates-step-read-paper");
      row.detail = result?.title ? truncate(result.title, 90) : a.item_key || "";
      if (a.item_key)
        row.link = { itemKey: String(a.item_key), page: Number(a.start_page ?? a.page) || null };
      break;
    }
    case "get_document_toc":
      row.kind = "toc";
      row.label = t("zocrates-step-toc");
      row.detail = result?.title ? truncate(result.title, 90) : a.item_key || "";
      if (a.item_key) row.link = { itemKey: String(a.item_key), page: null };
      break;
    case "conclude_search":
      row.kind = "conclude";
      row.label = t("zocrates-step-conclude");
      break;
    case "request_search_extension":
      row.kind = "extend-request";
      row.label = t("zocrates-step-extend");
      row.detail = a.justification ? truncate(a.justification, 140) : "";
      break;
    case "search_online_literature":
      row.kind = "search";
      row.label = a.query
        ? t("zocrates-step-openalex", { query: truncate(a.query, 60) })
        : t("zocrates-step-openalex-any");
      if (result && result.count != null)
        row.detail = t("zocrates-step-works", { count: result.count });
      break;
    default:
      break;
  }
  if (result?.notice)
    row.detail = row.detail ? `${row.detail} · ${result.notice}` : String(result.notice);
  if (result?.budgetNotice)
    row.detail = row.detail
      ? `${row.detail} · ${result.budgetNotice}`
      : String(result.budgetNotice);
  return row;
}

/**
 * Display rows for a bubble's steps.
 * @returns {{kind, label, detail, link, running, error, author}[]}
 */
export function stepRows(steps = [], t = englishStep) {
  const rows = [];
  const open = []; // indexes of call rows still waiting for their result
  for (const step of steps) {
    switch (step.type) {
      case "call": {
        rows.push({ ...describeCall(step, null, t), call: step });
        open.push(rows.length - 1);
        break;
      }
      case "result": {
        let k = -1;
        for (let j = open.length - 1; j >= 0; j--) {
          const r = rows[open[j]];
          if (r.name === step.name && r.author === (step.author || "")) {
            k = j;
            break;
          }
        }
        if (k === -1) {
          for (let j = open.length - 1; j >= 0; j--) {
            if (rows[open[j]].name === step.name) {
              k = j;
              break;
            }
          }
        }
        if (k !== -1) {
          const index = open[k];
          open.splice(k, 1);
          rows[index] = { ...describeCall(rows[index].call, step, t), call: rows[index].call };
        } else if (step.status === "error") {
          rows.push({
            kind: "tool",
            name: step.name,
            author: step.author || "",
            label: t("zocrates-step-failed", { tool: step.name.replace(/_/g, " ") }),
            detail: step.message || "",
            link: null,
            running: false,
            error: step.message || "failed",
          });
        }
        break;
      }
      case "thought":
        rows.push({
          kind: "thought",
          author: step.author || "",
          label: t("zocrates-step-thought"),
          detail: String(step.text || "").trim(),
          link: null,
          running: !!step.open,
          error: "",
        });
        break;
      case "note":
        rows.push({
          kind: "note",
          author: step.author || "",
          label: t("zocrates-step-note"),
          detail: String(step.text || "").trim(),
          link: null,
          running: !!step.open,
          error: "",
        });
        break;
      case "checkpoint": {
        const k = step.extensionNumber;
        const max = step.maxExtensions;
        rows.push({
          kind: "checkpoint",
          author: "",
          label:
            k && max && k <= max
              ? t("zocrates-step-paused", { number: k, max })
              : t("zocrates-step-paused-final"),
          detail: step.gaps ? t("zocrates-step-gaps", { count: step.gaps }) : "",
          link: null,
          running: false,
          error: "",
        });
        break;
      }
      case "decision":
        rows.push({
          kind: "decision",
          author: "you",
          granted: step.action === "extend_budget",
          label:
            step.action !== "extend_budget"
              ? t("zocrates-step-synthesize")
              : step.extensionNumber != null
                ? t("zocrates-step-granted", { number: step.extensionNumber })
                : t("zocrates-step-granted-any"),
          detail: step.guidance
            ? t("zocrates-step-guidance", { text: truncate(step.guidance, 160) })
            : "",
          link: null,
          running: false,
          error: "",
        });
        break;
      default:
        break;
    }
  }
  // A call that never got its result is only running while the bubble still streams.
  return rows.map(({ call: _call, ...row }) => row);
}

/** The collapsed header, as Fluent messages: "3 searches · 2 readings · 1 extension". */
export function stepsHeadline(rows) {
  const count = (kind) => rows.filter((r) => r.kind === kind).length;
  const bits = [];
  const searches = count("search");
  const reads = count("read");
  const thoughts = count("thought");
  const extensions = rows.filter((r) => r.kind === "decision" && r.granted).length;
  if (searches) bits.push(["zocrates-steps-headline-searches", { count: searches }]);
  if (reads) bits.push(["zocrates-steps-headline-readings", { count: reads }]);
  if (thoughts) bits.push(["zocrates-steps-headline-thoughts", { count: thoughts }]);
  if (extensions) bits.push(["zocrates-steps-headline-extensions", { count: extensions }]);
  if (!bits.length) bits.push(["zocrates-sidebar-steps", { count: rows.length }]);
  return bits;
}

/** What the assistant is doing right now (a Fluent message, or a step's own label as `{text}`). */
export function liveActivity(rows, { answering = false } = {}) {
  if (answering) return ["zocrates-live-writing"];
  for (let k = rows.length - 1; k >= 0; k--) {
    const r = rows[k];
    if (r.kind === "decision")
      return [r.granted ? "zocrates-live-searching-further" : "zocrates-live-preparing"];
    if (r.kind === "conclude") return ["zocrates-live-ranking"];
    if (r.kind === "search" || r.kind === "read" || r.kind === "toc")
      return r.running ? { text: `${r.label}…` } : ["zocrates-live-searching"];
    if (r.kind === "research") return ["zocrates-live-searching"];
    if (r.kind === "thought") return ["zocrates-live-thinking"];
  }
  return ["zocrates-live-starting"];
}
