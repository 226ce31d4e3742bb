/**
 * Small pure helpers of the pane: numbers, sizes, times, titles, the offline-model notice,
 * the checkpoint's covered summary, library-sync progress. No DOM, no Zotero.
 */

const NUMBER = new Intl.NumberFormat("en-US");
export const number = (n) => NUMBER.format(Number(n) || 0);
export const plural = (n, one, many = `${one}s`) => `${number(n)} ${Number(n) === 1 ? one : many}`;

/** 1536 -> "1.5 KB"; 0 -> "0 B". */
export function formatBytes(bytes) {
  let n = Number(bytes) || 0;
  const units = ["B", "KB", "MB", "GB", "TB"];
  let k = 0;
  while (Math.abs(n) >= 1024 && k < units.length - 1) {
    n /= 1024;
    k += 1;
  }
  const digits = k === 0 || Math.abs(n) >= 100 ? 0 : 1;
  return `${n.toFixed(digits)} ${units[k]}`;
}

/**
 * "just now", "5 min ago", "3 h ago", "yesterday", "4 days ago", else a date.
 * @param {number} seconds epoch seconds (the gateway's timestamps)
 * @param {number} nowMs Date.now()
 */
export function relativeTime(seconds, nowMs = Date.now()) {
  const t = Number(seconds);
  if (!Number.isFinite(t) || t <= 0) return "";
  const diff = Math.max(0, nowMs / 1000 - t);
  if (diff < 45) return "just now";
  if (diff < 3600) return `${Math.max(1, Math.round(diff / 60))} min ago`;
  if (diff < 86400) return `${Math.round(diff / 3600)} h ago`;
  if (diff < 2 * 86400) return "yesterday";
  if (diff < 14 * 86400) return `${Math.round(diff / 86400)} days ago`;
  const d = new Date(t * 1000);
  return d.toISOString().slice(0, 10);
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

/** US dollars, to a precision that says something: 1.23, 0.042, 0.00031. */
export function formatCost(usd) {
  const v = Math.max(0, Number(usd) || 0);
  if (v >= 1) return v.toFixed(2);
  if (v >= 0.01) return v.toFixed(3);
  if (v === 0) return "0";
  return String(Number(v.toPrecision(2)));
}

/** Seconds -> "45 s", "3 min", "1 h 5 min". */
export function formatDuration(seconds) {
  const s = Math.max(0, Math.round(Number(seconds) || 0));
  if (s < 60) return `${s} s`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
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
 * button labels already carry the +calls / +words numbers). */
export function cardCosts(model) {
  const found = model.stats.evidenceCount;
  const left = Math.max(0, model.maxExtensions - model.extensionNumber);
  const chunks = model.nextCeilings.maxChunks;
  const after =
    left === 0
      ? "This is the last extension."
      : `${plural(left, "more extension")} possible after this one.`;
  return {
    grant: model.primary.disabled
      ? "No extensions left for this question."
      : `Another search pass, steered by your guidance, then the answer${chunks ? ` from up to ${plural(chunks, "passage")}` : ""}. ${after}`,
    synthesize: `No more searching: answers now from the ${plural(found, "passage")} found so far.`,
  };
}

/** Fractions for the card's budget meters (0..1). */
export function cardMeters(model) {
  const s = model.stats;
  const frac = (a, b) => (b > 0 ? Math.max(0, Math.min(1, a / b)) : 0);
  return [
    {
      id: "searches",
      label: "Searches",
      used: s.toolCallsUsed,
      of: s.budget,
      fraction: frac(s.toolCallsUsed, s.budget),
    },
    {
      id: "words",
      label: "Words read",
      used: s.wordsRetrieved,
      of: s.wordCeiling,
      fraction: frac(s.wordsRetrieved, s.wordCeiling),
    },
  ];
}

// ---------------------------------------------------------------- library sync

/**
 * A `progress` / `done` event of POST /library/sync as the progress bar shows it.
 * @returns {{phase, percent: number | null, label: string, detail: string, done: boolean}}
 */
export function syncProgress(data = {}) {
  const phase = String(data.phase || "");
  const pagesDone = Number(data.pages_done) || 0;
  const pagesTotal = Number(data.pages_total) || 0;
  const itemsDone = Number(data.items_done) || 0;
  const itemsTotal = Number(data.items_total) || 0;
  // "searchable" (the keyword phase is over) and "embedding" end the keyword bar too.
  const done = phase === "done" || phase === "searchable" || phase === "embedding";
  let percent = null;
  if (done) percent = 100;
  else if (pagesTotal > 0)
    percent = Math.max(0, Math.min(100, Math.round((pagesDone / pagesTotal) * 100)));
  let label;
  if (done && phase !== "done")
    label =
      pagesTotal > 0
        ? `Searchable: ${plural(pagesTotal, "page")} indexed by keyword`
        : "Searchable: nothing new to index";
  else if (done)
    label =
      pagesTotal > 0 ? `Done: ${plural(pagesTotal, "page")} indexed` : "Done: nothing new to index";
  else if (pagesTotal > 0)
    label = `Indexing: ${number(pagesDone)} of ${plural(pagesTotal, "page")} (${percent}%)`;
  else if (phase === "scanning") label = "Reading your Zotero library…";
  else label = data.message || "Indexing…";
  const bits = [];
  if (!done && itemsTotal > 0) bits.push(`${number(itemsDone)} of ${plural(itemsTotal, "paper")}`);
  if (!done && Number(data.pages_per_second) > 0)
    bits.push(`${Number(data.pages_per_second).toFixed(1)} pages/s`);
  if (!done && Number(data.eta_seconds) > 0)
    bits.push(`about ${formatDuration(data.eta_seconds)} left`);
  if (!done && data.current) bits.push(truncate(data.current, 60));
  return { phase, percent, label, detail: bits.join(" · "), done };
}

/**
 * The embedding phase (a sync's `embedding` field, or GET /library/status's
 * `embedding_phase`) as a second bar: passages with their vector of all passages.
 * @returns {{percent: number|null, label: string, detail: string, done: boolean, hidden: boolean}}
 */
export function embeddingProgress(embedding = {}) {
  const total = Number(embedding.chunks_total) || 0;
  const done = Number(embedding.chunks_embedded) || 0;
  const pending = Number(embedding.chunks_pending) || 0;
  if (!total) return { percent: null, label: "", detail: "", done: false, hidden: true };
  const percent = Math.max(0, Math.min(100, Math.floor((done / total) * 100)));
  const finished = pending === 0;
  const label = finished
    ? `Meaning search ready: ${plural(total, "passage")} embedded`
    : `Embedding for meaning search: ${number(done)} of ${plural(total, "passage")} (${percent}%)`;
  const bits = [];
  if (!finished) bits.push(`${number(pending)} pending`);
  if (!finished && Number(embedding.chunks_per_second) > 0)
    bits.push(`${Number(embedding.chunks_per_second).toFixed(1)} passages/s`);
  if (!finished && Number(embedding.eta_seconds) > 0)
    bits.push(`about ${formatDuration(embedding.eta_seconds)} left`);
  if (embedding.error) bits.push(`stalled: ${truncate(embedding.error, 80)}`);
  else if (!finished) bits.push("keyword search covers the rest meanwhile");
  return { percent, label, detail: bits.join(" · "), done: finished, hidden: false };
}

/** GET /library/status in one line. */
export function libraryStatusLine(status, nowMs = Date.now()) {
  if (!status) return "";
  const bits = [
    plural(status.items || 0, "paper"),
    plural(status.pages || 0, "page"),
    plural(status.chunks || 0, "passage"),
  ];
  let line = `${bits.join(" · ")} indexed`;
  if (status.last_sync_at) line += ` · last indexed ${relativeTime(status.last_sync_at, nowMs)}`;
  if (status.syncing) line += " · indexing now";
  const pending = Number(status.embedding_phase?.chunks_pending) || 0;
  if (pending) line += ` · ${plural(pending, "passage")} waiting for embeddings`;
  return line;
}

/** The PDFs that are not (fully) searchable, from GET /library/status, one line each. */
export function problemLines(status) {
  const states = status?.attachment_states || {};
  const lines = [];
  const count = (n, what) => (n ? `${plural(n, "PDF")} ${what}` : "");
  const summary = [
    count(states.no_text, "without a text layer (need OCR)"),
    count(states.failed, "unreadable"),
    count(states.missing, "missing"),
  ].filter(Boolean);
  if (summary.length) lines.push(summary.join(" · "));
  for (const p of status?.problems || []) {
    const name = p.title || (p.path || "").split(/[\\/]/).pop() || p.attachment_key;
    const what =
      p.state === "indexed"
        ? `${plural(p.pages_without_text, "page")} without text`
        : p.reason || p.state;
    lines.push(`${truncate(name, 60)}: ${truncate(what, 120)}`);
  }
  return lines;
}

// ---------------------------------------------------------------- sessions storage

/** GET /sessions/storage_stats in one line. */
export function storageLine(stats) {
  if (!stats) return "";
  const free = Number(stats.freelist_ratio) || 0;
  const bits = [
    `Database ${formatBytes(stats.size_bytes)}`,
    plural(stats.session_count || 0, "chat"),
    plural(stats.event_count || 0, "event"),
  ];
  if (free > 0) bits.push(`${Math.round(free * 100)}% free space`);
  return bits.join(" · ");
}

const VACUUM_REASONS = {
  below_threshold: "not enough free space to be worth compacting",
  chat_in_progress: "a chat is running",
  insufficient_disk: "not enough free disk space",
  database_busy: "the database is busy",
  failed: "compacting failed (the database is unchanged)",
};

/** POST /sessions/maintenance report as a sentence. */
export function maintenanceLine(report) {
  if (!report) return "";
  const deleted = Number(report.deleted) || 0;
  const parts = [];
  if (deleted) {
    const why = [];
    if (report.deleted_empty) why.push(`${number(report.deleted_empty)} empty`);
    if (report.deleted_expired) why.push(`${number(report.deleted_expired)} expired`);
    if (report.deleted_over_cap) why.push(`${number(report.deleted_over_cap)} over the limit`);
    parts.push(`Deleted ${plural(deleted, "chat")} (${why.join(", ")}).`);
  } else parts.push("No chat needed deleting.");
  if (report.skipped_active) parts.push(`${plural(report.skipped_active, "running chat")} kept.`);
  if (report.vacuumed) {
    const saved = Math.max(0, (Number(report.size_before) || 0) - (Number(report.size_after) || 0));
    parts.push(
      `Compacted the database: ${formatBytes(report.size_before)} → ${formatBytes(report.size_after)} (${formatBytes(saved)} reclaimed).`,
    );
  } else {
    const reason = VACUUM_REASONS[report.vacuum_skipped_reason] || report.vacuum_skipped_reason;
    parts.push(reason ? `Not compacted: ${reason}.` : "Not compacted.");
  }
  if (report.duration_ms != null) parts.push(`(${Math.round(Number(report.duration_ms))} ms)`);
  return parts.join(" ");
}
