/**
 * Small pure helpers of the pane: numbers, sizes, times, titles, the offline-model notice,
 * the checkpoint's covered summary, library-sync progress. No DOM, no Zotero.
 *
 * The settings pane's sentences (sync progress, library status, storage, maintenance) are
 * Fluent messages `zocrates-pref-*` (preferences.ftl): those helpers take the localization
 * (l10n.js, `{t, locale}`). The checkpoint card's take card.js's `t` (English by default).
 */

import { englishT } from "../card.js";

const NUMBER = new Intl.NumberFormat("en-US");
export const number = (n) => NUMBER.format(Number(n) || 0);
export const plural = (n, one, many = `${one}s`) => `${number(n)} ${Number(n) === 1 ? one : many}`;

/** 1536 -> "1.5 KB"; 0 -> "0 B" (the decimal separator of `locale`). */
export function formatBytes(bytes, locale = "en-US") {
  let n = Number(bytes) || 0;
  const units = ["B", "KB", "MB", "GB", "TB"];
  let k = 0;
  while (Math.abs(n) >= 1024 && k < units.length - 1) {
    n /= 1024;
    k += 1;
  }
  const digits = k === 0 || Math.abs(n) >= 100 ? 0 : 1;
  const format = new Intl.NumberFormat(locale, {
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
    useGrouping: false,
  });
  return `${format.format(n)} ${units[k]}`;
}

/**
 * How long ago, as a Fluent message: `[id, args]` (sidebar.ftl `zocrates-time-*`), or the
 * ISO date as plain text (`{text}`) beyond two weeks; null without a time.
 */
export function relativeTimeMessage(seconds, nowMs = Date.now()) {
  const t = Number(seconds);
  if (!Number.isFinite(t) || t <= 0) return null;
  const diff = Math.max(0, nowMs / 1000 - t);
  if (diff < 45) return ["zocrates-time-just-now"];
  if (diff < 3600) return ["zocrates-time-minutes", { n: Math.max(1, Math.round(diff / 60)) }];
  if (diff < 86400) return ["zocrates-time-hours", { n: Math.round(diff / 3600) }];
  if (diff < 2 * 86400) return ["zocrates-time-yesterday"];
  if (diff < 14 * 86400) return ["zocrates-time-days", { n: Math.round(diff / 86400) }];
  return { text: new Date(t * 1000).toISOString().slice(0, 10) };
}

/** relativeTimeMessage as text ("5 min ago"), "" without a time. */
export function relativeTime(seconds, nowMs, t) {
  const m = relativeTimeMessage(seconds, nowMs);
  if (!m) return "";
  return Array.isArray(m) ? t(...m) : m.text;
}

/** US dollars, to a precision that says something: 1.23, 0.042, 0.00031. */
export function formatCost(usd) {
  const v = Math.max(0, Number(usd) || 0);
  if (v >= 1) return v.toFixed(2);
  if (v >= 0.01) return v.toFixed(3);
  if (v === 0) return "0";
  return String(Number(v.toPrecision(2)));
}

/** Seconds -> "45 s", "3 min", "1 h 5 min". */
export function formatDuration(seconds, { t }) {
  const s = Math.max(0, Math.round(Number(seconds) || 0));
  if (s < 60) return t("zocrates-pref-duration-seconds", { s });
  const m = Math.round(s / 60);
  if (m < 60) return t("zocrates-pref-duration-minutes", { m });
  return t("zocrates-pref-duration-hours", { h: Math.floor(m / 60), m: m % 60 });
}

export const DEFAULT_TITLE = "New Chat";

/** A session title from the first question: its first line, at most `max` characters, cut
 * at a word boundary. */
export function titleFromPrompt(prompt, max = 60) {
  const line = String(prompt ?? "")
    .trim()
    .split(/\r?\n/)[0]
    .replace(/\s+/g, " ")
    .trim();
  if (line.length <= max) return line || DEFAULT_TITLE;
  const cut = line.slice(0, max - 1);
  const space = cut.lastIndexOf(" ");
  return `${(space > max * 0.5 ? cut.slice(0, space) : cut).replace(/[\s,;:.!?-]+$/, "")}…`;
}

/** Sessions newest first (by updated_at, then created_at). */
export function sortSessions(sessions) {
  return [...(sessions || [])].sort(
    (a, b) =>
      (Number(b.updated_at) || 0) - (Number(a.updated_at) || 0) ||
      (Number(b.created_at) || 0) - (Number(a.created_at) || 0),
  );
}

/** Shorten to `max` characters with an ellipsis. */
export function truncate(text, max = 80) {
  const s = String(text ?? "")
    .replace(/\s+/g, " ")
    .trim();
  return s.length <= max ? s : `${s.slice(0, max - 1).trimEnd()}…`;
}

// ---------------------------------------------------------------- the offline model's notice

const OFFLINE_RE = /^\s*([*_])(Offline extractive answer\b[\s\S]*?)\1[ \t]*(?:\r?\n|$)/;

/**
 * The built-in model's answers start with an italic line "*Offline extractive answer: ...*".
 * @returns {{offline: boolean, notice: string, body: string}} body: the answer without it
 */
export function splitOfflineNotice(answer) {
  const text = String(answer ?? "");
  const m = OFFLINE_RE.exec(text);
  if (m)
    return {
      offline: true,
      notice: m[2].trim(),
      body: text.slice(m[0].length).replace(/^\s*\n/, ""),
    };
  // While streaming, the first line may not be complete yet.
  if (/^\s*[*_]Offline extractive answer/.test(text) && !/\n/.test(text)) {
    return { offline: true, notice: text.trim().replace(/^[*_]|[*_]$/g, ""), body: "" };
  }
  return { offline: false, notice: "", body: text };
}

// ---------------------------------------------------------------- checkpoint card

const COVERED_LINE = /^\s*(.+?)\s+\(([A-Z0-9]{8})\)\s+p\.\s*(\d{1,5})\s*:\s*(.*)$/;

/**
 * The checkpoint's covered summary, one entry per line `Title (KEY) p. N: quote` when it has
 * that shape (the research pipeline's format), else the line as text.
 * @returns {{title: string, itemKey: string, page: number | null, text: string}[]}
 */
export function parseCovered(summary) {
  const out = [];
  for (const raw of String(summary ?? "").split(/\r?\n/)) {
    const line = raw.trim();
    if (!line) continue;
    const m = COVERED_LINE.exec(line);
    if (m) out.push({ title: m[1], itemKey: m[2], page: Number(m[3]), text: m[4].trim() });
    else out.push({ title: "", itemKey: "", page: null, text: line });
  }
  return out;
}

/** "Title (KEY)" from the card's papers list -> {title, itemKey}. */
export function parsePaper(entry) {
  const m = /^(.*?)\s*\(([A-Z0-9]{8})\)\s*$/.exec(String(entry ?? ""));
  return m ? { title: m[1], itemKey: m[2] } : { title: String(entry ?? ""), itemKey: "" };
}

/** What granting and synthesizing cost, in words a researcher reads at a glance (the
 * button labels already carry the +calls / +words numbers). `t` as card.js's (card keys). */
export function cardCosts(model, t = englishT) {
  const found = model.stats.evidenceCount;
  const left = Math.max(0, model.maxExtensions - model.extensionNumber);
  const chunks = model.nextCeilings.maxChunks;
  const after = left === 0 ? t("cost-last-extension") : t("cost-more-extensions", { count: left });
  const pass = chunks ? t("cost-grant-chunks", { chunks }) : t("cost-grant");
  return {
    grant: model.primary.disabled ? t("cost-none-left") : `${pass} ${after}`,
    synthesize: t("cost-synthesize", { count: found }),
  };
}

/** Fractions for the card's budget meters (0..1). */
export function cardMeters(model, t = englishT) {
  const s = model.stats;
  const frac = (a, b) => (b > 0 ? Math.max(0, Math.min(1, a / b)) : 0);
  return [
    {
      id: "searches",
      label: t("meter-searches"),
      used: s.toolCallsUsed,
      of: s.budget,
      fraction: frac(s.toolCallsUsed, s.budget),
    },
    {
      id: "words",
      label: t("meter-words"),
      used: s.wordsRetrieved,
      of: s.wordCeiling,
      fraction: frac(s.wordsRetrieved, s.wordCeiling),
    },
  ];
}

// ---------------------------------------------------------------- library sync

/**
 * A `progress` / `done` event of POST /library/sync as the progress bar shows it.
 * @param {{t: Function}} l10n the localization (l10n.js)
 * @returns {{phase, percent: number | null, label: string, detail: string, done: boolean}}
 */
export function syncProgress(data = {}, l10n) {
  const { t } = l10n;
  const phase = String(data.phase || "");
  const pagesDone = Number(data.pages_done) || 0;
  const pagesTotal = Math.max(0, Number(data.pages_total) || 0);
  const itemsDone = Number(data.items_done) || 0;
  const itemsTotal = Number(data.items_total) || 0;
  // "searchable" (the keyword phase is over) and "embedding" end the keyword bar too.
  const done = phase === "done" || phase === "searchable" || phase === "embedding";
  let percent = null;
  if (done) percent = 100;
  else if (pagesTotal > 0)
    percent = Math.max(0, Math.min(100, Math.round((pagesDone / pagesTotal) * 100)));
  let label;
  if (done && phase !== "done") label = t("zocrates-pref-sync-searchable", { pages: pagesTotal });
  else if (done) label = t("zocrates-pref-sync-done", { pages: pagesTotal });
  else if (pagesTotal > 0)
    label = t("zocrates-pref-sync-indexing", { done: pagesDone, total: pagesTotal, percent });
  else if (phase === "scanning") label = t("zocrates-pref-sync-scanning");
  else label = data.message || t("zocrates-pref-sync-working");
  const bits = [];
  if (!done && itemsTotal > 0)
    bits.push(t("zocrates-pref-sync-papers", { done: itemsDone, total: itemsTotal }));
  if (!done && Number(data.pages_per_second) > 0)
    bits.push(t("zocrates-pref-sync-rate", { rate: Number(data.pages_per_second) }));
  if (!done && Number(data.eta_seconds) > 0)
    bits.push(t("zocrates-pref-time-left", { duration: formatDuration(data.eta_seconds, l10n) }));
  if (!done && data.current) bits.push(truncate(data.current, 60));
  return { phase, percent, label, detail: bits.join(" · "), done };
}

/**
 * The embedding phase (a sync's `embedding` field, or GET /library/status's
 * `embedding_phase`) as a second bar: passages with their vector of all passages.
 * @param {{t: Function}} l10n the localization (l10n.js)
 * @returns {{percent: number|null, label: string, detail: string, done: boolean, hidden: boolean}}
 */
export function embeddingProgress(embedding = {}, l10n) {
  const { t } = l10n;
  const total = Number(embedding.chunks_total) || 0;
  const done = Number(embedding.chunks_embedded) || 0;
  const pending = Number(embedding.chunks_pending) || 0;
  if (!total) return { percent: null, label: "", detail: "", done: false, hidden: true };
  const percent = Math.max(0, Math.min(100, Math.floor((done / total) * 100)));
  const finished = pending === 0;
  const label = finished
    ? t("zocrates-pref-embedding-ready", { total })
    : t("zocrates-pref-embedding-progress", { done, total, percent });
  const bits = [];
  if (!finished) bits.push(t("zocrates-pref-embedding-pending", { count: pending }));
  if (!finished && Number(embedding.chunks_per_second) > 0)
    bits.push(t("zocrates-pref-embedding-rate", { rate: Number(embedding.chunks_per_second) }));
  if (!finished && Number(embedding.eta_seconds) > 0)
    bits.push(
      t("zocrates-pref-time-left", { duration: formatDuration(embedding.eta_seconds, l10n) }),
    );
  if (embedding.error)
    bits.push(t("zocrates-pref-embedding-stalled", { error: truncate(embedding.error, 80) }));
  else if (!finished) bits.push(t("zocrates-pref-embedding-meanwhile"));
  return { percent, label, detail: bits.join(" · "), done: finished, hidden: false };
}

/** GET /library/status in one line. */
export function libraryStatusLine(status, nowMs, l10n) {
  if (!status) return "";
  const { t } = l10n;
  const bits = [
    t("zocrates-pref-library-papers", { count: status.items || 0 }),
    t("zocrates-pref-library-pages", { count: status.pages || 0 }),
    t("zocrates-pref-library-passages", { count: status.chunks || 0 }),
  ];
  if (status.last_sync_at)
    bits.push(
      t("zocrates-pref-library-last-sync", { when: relativeTime(status.last_sync_at, nowMs, t) }),
    );
  // What the user wrote in Zotero (highlights, comments, notes), indexed beside the papers.
  const passages = status.passages || {};
  const own = ["highlight", "comment", "note"].reduce((n, k) => n + (Number(passages[k]) || 0), 0);
  if (own) bits.push(t("zocrates-pref-library-own", { count: own }));
  if (status.syncing) bits.push(t("zocrates-pref-library-syncing"));
  const pending = Number(status.embedding_phase?.chunks_pending) || 0;
  if (pending) bits.push(t("zocrates-pref-library-waiting", { count: pending }));
  return bits.join(" · ");
}

/** The PDFs that are not (fully) searchable, from GET /library/status, one line each. */
export function problemLines(status, l10n) {
  const { t } = l10n;
  const states = status?.attachment_states || {};
  const lines = [];
  const count = (n, id) => (n ? t(id, { count: n }) : "");
  const summary = [
    count(states.no_text, "zocrates-pref-pdfs-no-text"),
    count(states.failed, "zocrates-pref-pdfs-failed"),
    count(states.missing, "zocrates-pref-pdfs-missing"),
  ].filter(Boolean);
  if (summary.length) lines.push(summary.join(" · "));
  // Scanned pages: being read by OCR, or waiting for Tesseract (the service says how).
  const ocr = status?.ocr_phase;
  const waiting = Number(ocr?.pages_pending) || 0;
  if (ocr && waiting && ocr.available)
    lines.push(
      t("zocrates-pref-ocr-reading", {
        count: waiting,
        rate: Number(ocr.pages_per_second) || 0,
      }),
    );
  else if (ocr && waiting)
    lines.push(t("zocrates-pref-ocr-unavailable", { count: waiting, error: ocr.error || "" }));
  for (const p of status?.problems || []) {
    const name = p.title || (p.path || "").split(/[\\/]/).pop() || p.attachment_key;
    // An indexed PDF is listed for its pages without text, or, indexed in part (cut at a
    // size limit), for the reason the agent recorded.
    const missingPages = Number(p.pages_without_text) || 0;
    const what =
      p.state === "indexed" && (missingPages || !p.reason)
        ? t("zocrates-pref-pages-without-text", { count: missingPages })
        : p.reason || p.state;
    lines.push(t("zocrates-pref-problem", { name: truncate(name, 60), what: truncate(what, 120) }));
  }
  return lines;
}

// ---------------------------------------------------------------- sessions storage

/** GET /sessions/storage_stats in one line. */
export function storageLine(stats, l10n) {
  if (!stats) return "";
  const { t, locale } = l10n;
  const free = Number(stats.freelist_ratio) || 0;
  const bits = [
    t("zocrates-pref-storage-database", { size: formatBytes(stats.size_bytes, locale) }),
    t("zocrates-pref-storage-chats", { count: stats.session_count || 0 }),
    t("zocrates-pref-storage-events", { count: stats.event_count || 0 }),
  ];
  if (free > 0) bits.push(t("zocrates-pref-storage-free", { percent: Math.round(free * 100) }));
  return bits.join(" · ");
}

/** Why the database was not compacted (the report's vacuum_skipped_reason). */
const VACUUM_REASONS = {
  below_threshold: "zocrates-pref-vacuum-below-threshold",
  chat_in_progress: "zocrates-pref-vacuum-chat-in-progress",
  insufficient_disk: "zocrates-pref-vacuum-insufficient-disk",
  database_busy: "zocrates-pref-vacuum-database-busy",
  failed: "zocrates-pref-vacuum-failed",
};

/** POST /sessions/maintenance report as a sentence. */
export function maintenanceLine(report, l10n) {
  if (!report) return "";
  const { t, locale } = l10n;
  const bytes = (n) => formatBytes(n, locale);
  const deleted = Number(report.deleted) || 0;
  const parts = [];
  if (deleted) {
    const why = [];
    const add = (n, id) => n && why.push(t(id, { count: Number(n) }));
    add(report.deleted_empty, "zocrates-pref-clean-empty");
    add(report.deleted_expired, "zocrates-pref-clean-expired");
    add(report.deleted_over_cap, "zocrates-pref-clean-over-cap");
    parts.push(t("zocrates-pref-clean-deleted", { count: deleted, why: why.join(", ") }));
  } else parts.push(t("zocrates-pref-clean-none"));
  if (report.skipped_active)
    parts.push(t("zocrates-pref-clean-kept-running", { count: Number(report.skipped_active) }));
  if (report.vacuumed) {
    const saved = Math.max(0, (Number(report.size_before) || 0) - (Number(report.size_after) || 0));
    parts.push(
      t("zocrates-pref-clean-compacted", {
        before: bytes(report.size_before),
        after: bytes(report.size_after),
        saved: bytes(saved),
      }),
    );
  } else {
    const code = report.vacuum_skipped_reason;
    const reason = VACUUM_REASONS[code] ? t(VACUUM_REASONS[code]) : code;
    parts.push(
      reason
        ? t("zocrates-pref-clean-not-compacted-because", { reason })
        : t("zocrates-pref-clean-not-compacted"),
    );
  }
  if (report.duration_ms != null)
    parts.push(t("zocrates-pref-clean-duration", { ms: Math.round(Number(report.duration_ms)) }));
  return parts.join(" ");
}
