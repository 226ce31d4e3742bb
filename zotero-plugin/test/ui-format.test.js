import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { buildCardModel } from "../src/card.js";
import {
  cardCosts,
  cardMeters,
  formatBytes,
  formatDuration,
  embeddingProgress,
  libraryStatusLine,
  problemLines,
  maintenanceLine,
  parseCovered,
  parsePaper,
  relativeTime,
  sortSessions,
  splitOfflineNotice,
  storageLine,
  syncProgress,
  titleFromPrompt,
  truncate,
} from "../src/ui/format.js";
import {
  checkGatewayURL,
  configGroups,
  fieldKind,
  formatFieldValue,
  parseFieldValue,
} from "../src/ui/prefs-model.js";
import { clampWidth, MAX_WIDTH, MIN_WIDTH } from "../src/ui/resizer.js";
import { liveActivity, stepRows, stepsHeadline, toolArgs } from "../src/ui/steps.js";
import { localization } from "./l10n-fixture.js";
import { PAYLOAD } from "./fixtures.js";

// The settings pane's sentences are Fluent messages: formatted here with the shipped files.
const en = localization("en-US");
const de = localization("de");

describe("format", () => {
  test("sizes, durations, relative times", () => {
    assert.equal(formatBytes(0), "0 B");
    assert.equal(formatBytes(1536), "1.5 KB");
    assert.equal(formatBytes(2592768), "2.5 MB");
    assert.equal(formatBytes(2592768, "de"), "2,5 MB");
    assert.equal(formatDuration(42, en), "42 s");
    assert.equal(formatDuration(180, en), "3 min");
    assert.equal(formatDuration(3900, en), "1 h 5 min");
    assert.equal(formatDuration(3900, de), "1 Std. 5 Min.");
    const now = 1_800_000_000_000;
    const ago = (s) => relativeTime(now / 1000 - s, now, en.t);
    assert.equal(ago(10), "just now");
    assert.equal(ago(300), "5 min ago");
    assert.equal(ago(3 * 3600), "3 h ago");
    assert.equal(ago(30 * 3600), "yesterday");
    assert.equal(ago(4 * 86400), "4 days ago");
    assert.match(ago(40 * 86400), /^\d{4}-\d\d-\d\d$/);
    assert.equal(relativeTime(null, now, en.t), "");
  });

  test("a chat title from the first question", () => {
    assert.equal(
      titleFromPrompt("  How does lmer choose its optimizer?\nMore."),
      "How does lmer choose its optimizer?",
    );
    const long = titleFromPrompt(
      "How does lmer choose its optimizer, and how does brms fit the same kind of model?",
    );
    assert.ok(long.length <= 60 && long.endsWith("…"), long);
    assert.ok(!/[ ,]…$/.test(long));
    assert.equal(titleFromPrompt("   "), "New Chat");
  });

  test("sessions newest first; truncate", () => {
    assert.deepEqual(
      sortSessions([
        { id: "a", updated_at: 1 },
        { id: "b", updated_at: 3 },
        { id: "c", updated_at: 2 },
      ]).map((s) => s.id),
      ["b", "c", "a"],
    );
    assert.equal(truncate("a  b\nc", 10), "a b c");
    assert.equal(truncate("abcdefghij", 5), "abcd…");
  });

  test("the offline model's first line becomes a notice", () => {
    const answer =
      "*Offline extractive answer: Zocrates' built-in model quotes sentences.*\n\n**How?**\n- quote [1, p. 2]";
    const split = splitOfflineNotice(answer);
    assert.equal(split.offline, true);
    assert.equal(
      split.notice,
      "Offline extractive answer: Zocrates' built-in model quotes sentences.",
    );
    assert.ok(split.body.startsWith("**How?**"));
    // mid-stream, before the line is complete
    const partial = splitOfflineNotice("*Offline extractive answer: Zocrates' built-in ");
    assert.equal(partial.offline, true);
    assert.equal(partial.body, "");
    const normal = splitOfflineNotice("lme4 uses bobyqa [1, p. 3].");
    assert.deepEqual(normal, { offline: false, notice: "", body: "lme4 uses bobyqa [1, p. 3]." });
  });

  test("the checkpoint's covered summary, papers, costs and meters", () => {
    const covered = parseCovered(
      'Fitting Linear Mixed-Effects Models Using lme4 (GQ53K66Z) p. 24: 4.\nRcppEigen (M46FM26E) p. 1: "quoted" text\nfree text line',
    );
    assert.deepEqual(covered[0], {
      title: "Fitting Linear Mixed-Effects Models Using lme4",
      itemKey: "GQ53K66Z",
      page: 24,
      text: "4.",
    });
    assert.equal(covered[1].text, '"quoted" text');
    assert.deepEqual(covered[2], { title: "", itemKey: "", page: null, text: "free text line" });
    assert.deepEqual(parsePaper("Getting Things in Order (TAQUML3F)"), {
      title: "Getting Things in Order",
      itemKey: "TAQUML3F",
    });
    const model = buildCardModel({
      interruptId: "interrupt_ext_1",
      invocationId: "e-1",
      payload: PAYLOAD,
    });
    const costs = cardCosts(model);
    assert.match(costs.grant, /from up to 20 passages/);
    assert.match(costs.grant, /1 more extension possible/);
    assert.match(costs.synthesize, /6 passages found so far/);
    const last = cardCosts(
      buildCardModel({
        interruptId: "i2",
        invocationId: "e",
        payload: { ...PAYLOAD, extension_number: 2 },
      }),
    );
    assert.match(last.grant, /last extension/);
    const meters = cardMeters(model);
    assert.deepEqual(
      meters.map((m) => [m.id, m.used, m.of]),
      [
        ["searches", 10, 10],
        ["words", 5200, 7500],
      ],
    );
    assert.equal(meters[0].fraction, 1);
  });

  test("library sync progress for the progress bar", () => {
    assert.equal(syncProgress({ phase: "scanning" }, en).percent, null);
    const mid = syncProgress(
      {
        phase: "indexing",
        items_done: 1,
        items_total: 2,
        pages_done: 51,
        pages_total: 87,
        pages_per_second: 19.55,
        eta_seconds: 1.8,
        current: "Fitting",
      },
      en,
    );
    assert.equal(mid.percent, 59);
    assert.equal(mid.label, "Indexing: 51 of 87 pages (59%)");
    assert.match(mid.detail, /1 of 2 papers · 19.6 pages\/s · about 2 s left · Fitting/);
    const done = syncProgress(
      {
        phase: "done",
        pages_total: 87,
        pages_done: 87,
        message: "indexed 2",
      },
      en,
    );
    assert.equal(done.done, true);
    assert.equal(done.percent, 100);
    assert.equal(done.label, "Done: 87 pages indexed");
    assert.equal(syncProgress({ phase: "done" }, en).label, "Done: nothing new to index");
  });

  test("status lines: library, storage, maintenance", () => {
    const now = 1_800_000_000_000;
    assert.equal(
      libraryStatusLine(
        { items: 37, pages: 1015, chunks: 1885, last_sync_at: now / 1000 - 120 },
        now,
        en,
      ),
      "37 papers · 1,015 pages · 1,885 passages indexed · last indexed 2 min ago",
    );
    assert.equal(
      storageLine(
        {
          size_bytes: 2592768,
          session_count: 7,
          event_count: 448,
          freelist_ratio: 0.02,
        },
        en,
      ),
      "Database 2.5 MB · 7 chats · 448 events · 2% free space",
    );
    assert.equal(
      maintenanceLine(
        {
          deleted: 0,
          vacuumed: false,
          vacuum_skipped_reason: "below_threshold",
          duration_ms: 10.2,
        },
        en,
      ),
      "No chat needed deleting. Not compacted: not enough free space to be worth compacting. (10 ms)",
    );
    assert.equal(
      maintenanceLine(
        {
          deleted: 3,
          deleted_empty: 1,
          deleted_expired: 2,
          vacuumed: true,
          size_before: 4 * 1024 * 1024,
          size_after: 1024 * 1024,
          skipped_active: 1,
        },
        en,
      ),
      "Deleted 3 chats (1 empty, 2 expired). 1 running chat kept. Compacted the database: 4.0 MB → 1.0 MB (3.0 MB reclaimed).",
    );
  });
});

describe("steps", () => {
  const steps = [
    {
      type: "call",
      name: "search_library",
      args: { request: "How does lmer choose?" },
      author: "coordinator",
    },
    { type: "thought", text: "Look for lme4.", author: "search_subagent", open: false },
    {
      type: "call",
      name: "search_corpus",
      args: { query: "lmer optimizer", k: 8 },
      author: "search_subagent",
    },
    {
      type: "result",
      name: "search_corpus",
      status: "success",
      count: 8,
      items: ["A", "B", "C", "D"],
      author: "search_subagent",
    },
    {
      type: "call",
      name: "read_document",
      args: { item_key: "GQ53K66Z", start_page: 20, end_page: 21 },
      author: "search_subagent",
    },
    {
      type: "result",
      name: "read_document",
      status: "success",
      pages: [20, 21],
      title: "lme4",
      author: "search_subagent",
    },
    {
      type: "call",
      name: "conclude_search",
      args: '{"summary": "lme4 uses \\"bobyqa',
      author: "search_subagent",
    },
    {
      type: "checkpoint",
      interruptId: "interrupt_ext_1",
      extensionNumber: 1,
      maxExtensions: 2,
      gaps: 1,
    },
    { type: "decision", action: "extend_budget", guidance: "photonic", extensionNumber: 1 },
    { type: "call", name: "search_corpus", args: { query: "photonic" }, author: "search_subagent" },
  ];

  test("calls merge with their results, in words", () => {
    const rows = stepRows(steps);
    assert.deepEqual(
      rows.map((r) => r.kind),
      ["research", "thought", "search", "read", "conclude", "checkpoint", "decision", "search"],
    );
    assert.equal(rows[2].label, "Searched “lmer optimizer”");
    assert.equal(rows[2].detail, "8 passages · A; B and 2 more");
    assert.equal(rows[3].label, "Read pp. 20–21");
    assert.deepEqual(rows[3].link, { itemKey: "GQ53K66Z", page: 20 });
    assert.equal(rows[5].label, "Paused for your decision: extension 1 of 2 offered");
    assert.equal(rows[6].label, "You granted extension 1");
    assert.equal(rows[6].detail, "Guidance: “photonic”");
    assert.equal(rows[7].running, true, "no result yet");
    assert.equal(rows[2].running, false);
    // Headline and live line are Fluent messages; in words through the English file.
    const en = localization("en-US");
    const say = (m) => (Array.isArray(m) ? en.t(...m) : m.text);
    assert.equal(
      stepsHeadline(rows).map(say).join(" · "),
      "2 searches · 1 reading · 1 thought · 1 extension",
    );
    assert.equal(say(liveActivity(rows)), "Searched “photonic”…");
    assert.equal(say(liveActivity(rows, { answering: true })), "Writing the answer…");
    assert.equal(say(liveActivity([])), "Starting…");
    const de = localization("de");
    const germanRows = stepRows(steps, de.t);
    assert.equal(germanRows[2].label, "„lmer optimizer“ gesucht");
    assert.equal(germanRows[3].label, "S. 20–21 gelesen");
    assert.equal(germanRows[6].label, "Sie haben Erweiterung 1 gewährt");
    const german = stepsHeadline(rows).map(([id, args]) => de.t(id, args));
    assert.equal(german.length, 4);
    assert.match(german[0], /^2 /);
    assert.notEqual(german.join(" · "), "2 searches · 1 reading · 1 thought · 1 extension");
  });

  test("tool arguments cut by the gateway still give their fields", () => {
    assert.deepEqual(toolArgs({ query: "x" }), { query: "x" });
    assert.deepEqual(toolArgs('{"query": "lmer"}'), { query: "lmer" });
    assert.equal(toolArgs('{"summary": "Getting \\"Least').summary, 'Getting "Least');
    assert.deepEqual(toolArgs(null), {});
  });

  test("a failed tool result shows its error", () => {
    const rows = stepRows([
      {
        type: "call",
        name: "read_document",
        args: { item_key: "GQ53K66Z", start_page: 2 },
        author: "s",
      },
      {
        type: "result",
        name: "read_document",
        status: "error",
        message: "no such page",
        author: "s",
      },
    ]);
    assert.equal(rows[0].error, "no such page");
  });
});

describe("preferences model", () => {
  const reference = [
    { key: "session_retention_days", type: "int | None", default: 180, description: "days" },
    { key: "hitl_enabled", type: "bool", default: true, description: "pause" },
    { key: "coordinator_model", type: "str", default: "offline", description: "model" },
    { key: "adaptive_compaction_threshold", type: "float", default: 0.75, description: "t" },
    { key: "max_retrieval_tools", type: "int", default: 10, description: "n" },
    { key: "brand_new_key", type: "str", default: "", description: "future" },
  ];
  const config = {
    session_retention_days: 180,
    hitl_enabled: true,
    coordinator_model: "offline",
    adaptive_compaction_threshold: 0.75,
    max_retrieval_tools: 10,
    brand_new_key: "x",
  };

  test("fields are grouped, typed and labelled; unknown keys land in Other", () => {
    const groups = configGroups({ config, reference });
    assert.deepEqual(
      groups.map((g) => g.id),
      ["models", "research", "compaction", "storage", "other"],
    );
    const storage = groups.find((g) => g.id === "storage");
    assert.equal(en.t(storage.titleId), "Chat Sessions & Storage");
    assert.equal(storage.fields[0].labelId, "zocrates-pref-retention-days");
    assert.equal(groups.at(-1).fields[0].labelId, null, "a newer gateway's key has no message");
    assert.equal(groups.at(-1).fields[0].label, "Brand new key");
    assert.deepEqual(
      storage.fields.map((f) => [f.key, f.kind, f.value]),
      [["session_retention_days", "int-nullable", 180]],
    );
    assert.equal(groups[0].fields[0].kind, "model");
    assert.equal(groups.at(-1).fields[0].key, "brand_new_key");
    assert.equal(fieldKind("bool"), "bool");
    assert.equal(fieldKind("float"), "float");
    assert.equal(fieldKind("int"), "int");
  });

  test("field values are parsed before PUT /config", () => {
    assert.equal(parseFieldValue("int", " 12 "), 12);
    // the RangeError's message is the Fluent id of the sentence shown next to the field
    const refusal = (kind, raw) => {
      try {
        parseFieldValue(kind, raw);
      } catch (err) {
        assert.ok(err instanceof RangeError);
        return en.t(err.message);
      }
      return null;
    };
    assert.match(refusal("int", "1.5"), /whole number/);
    assert.match(refusal("int", "-3"), /0 or more/);
    assert.match(refusal("int", ""), /whole number/);
    assert.equal(parseFieldValue("int-nullable", ""), null);
    assert.equal(parseFieldValue("float", "0,8"), 0.8);
    assert.equal(refusal("float", "abc"), "Enter a number.");
    assert.equal(parseFieldValue("bool", 1), true);
    assert.equal(parseFieldValue("model", "  gemini-2.5-flash "), "gemini-2.5-flash");
    assert.equal(formatFieldValue("int-nullable", null), "");
    assert.equal(formatFieldValue("bool", 0), false);
  });

  test("the gateway address must be local", () => {
    assert.deepEqual(checkGatewayURL("http://127.0.0.1:8765/"), {
      ok: true,
      url: "http://127.0.0.1:8765",
    });
    assert.equal(checkGatewayURL("http://localhost:9000").ok, true);
    assert.equal(checkGatewayURL("http://[::1]:8765").ok, true);
    const refusal = (url) => en.t(checkGatewayURL(url).error);
    assert.match(refusal("http://example.org"), /only answers on this computer/);
    assert.match(refusal("ftp://127.0.0.1"), /http/);
    assert.match(refusal("nonsense"), /URL/);
  });

  test("the pane's width stays usable", () => {
    assert.equal(clampWidth(100, 1600), MIN_WIDTH);
    assert.equal(clampWidth(5000, 4000), MAX_WIDTH);
    assert.equal(clampWidth(800, 1000), 680, "leaves room for Zotero");
    assert.equal(clampWidth(420, 1600), 420);
  });
});

describe("the two indexing phases and the PDFs that need care", () => {
  test("the keyword bar ends at 'searchable'; the embedding bar counts passages", () => {
    const searchable = syncProgress({ phase: "searchable", pages_done: 80, pages_total: 80 }, en);
    assert.equal(searchable.percent, 100);
    assert.equal(searchable.label, "Searchable: 80 pages indexed by keyword");
    const running = embeddingProgress(
      {
        chunks_total: 2000,
        chunks_embedded: 500,
        chunks_pending: 1500,
        chunks_per_second: 42.5,
        eta_seconds: 35,
      },
      en,
    );
    assert.equal(running.percent, 25);
    assert.equal(running.label, "Embedding for meaning search: 500 of 2,000 passages (25%)");
    assert.match(
      running.detail,
      /^1,500 pending · 42\.5 passages\/s · about .* left · keyword search covers the rest meanwhile$/,
    );
    assert.equal(
      embeddingProgress({ chunks_total: 3, chunks_embedded: 3, chunks_pending: 0 }, en).label,
      "Meaning search ready: 3 passages embedded",
    );
    assert.match(
      embeddingProgress(
        {
          chunks_total: 3,
          chunks_embedded: 1,
          chunks_pending: 2,
          error: "ConnectionError: down",
        },
        en,
      ).detail,
      /stalled: ConnectionError: down/,
    );
    assert.equal(embeddingProgress({}, en).hidden, true);
  });

  test("the status line says what waits for embeddings; problems name the PDFs and why", () => {
    assert.match(
      libraryStatusLine(
        {
          items: 3,
          pages: 10,
          chunks: 40,
          embedding_phase: { chunks_pending: 12 },
        },
        undefined,
        en,
      ),
      /· 12 passages waiting for embeddings$/,
    );
    assert.match(
      libraryStatusLine(
        { items: 3, pages: 10, chunks: 47, passages: { text: 40, highlight: 4, note: 3 } },
        undefined,
        en,
      ),
      /47 passages indexed · 7 of your highlights, comments and notes$/,
    );
    const lines = problemLines(
      {
        attachment_states: { indexed: 3, no_text: 1, failed: 1, missing: 0 },
        ocr_phase: {
          available: false,
          pages_pending: 7,
          pages_per_second: 0,
          error: "Tesseract is not installed. Install Tesseract OCR to read them.",
        },
        problems: [
          {
            state: "failed",
            title: "",
            path: "/z/storage/AB/corrupt.pdf",
            reason: "Cannot read corrupt.pdf: it is not a PDF",
          },
          {
            state: "no_text",
            title: "Scanned book",
            path: "/z/b.pdf",
            reason: "no text layer: 0 words in 3 pages",
          },
          {
            state: "indexed",
            title: "Half scanned",
            path: "/z/c.pdf",
            reason: "",
            pages_without_text: 4,
          },
          {
            state: "indexed",
            title: "Huge report",
            path: "/z/d.pdf",
            reason:
              "partly indexed: the text past 25,000,000 characters (from page 9001 on) was left out",
            pages_without_text: 0,
          },
        ],
      },
      en,
    );
    assert.deepEqual(lines, [
      "1 PDF without a text layer (scanned) · 1 PDF unreadable",
      "7 pages of scanned PDFs wait for OCR: Tesseract is not installed. Install Tesseract OCR to read them.",
      "corrupt.pdf: Cannot read corrupt.pdf: it is not a PDF",
      "Scanned book: no text layer: 0 words in 3 pages",
      "Half scanned: 4 pages without text",
      "Huge report: partly indexed: the text past 25,000,000 characters (from page 9001 on) was left out",
    ]);
    assert.deepEqual(problemLines({ attachment_states: { indexed: 5 }, problems: [] }, en), []);
    const reading = { available: true, pages_pending: 12, pages_per_second: 0.125, error: "" };
    assert.deepEqual(problemLines({ attachment_states: {}, ocr_phase: reading }, en), [
      "OCR is reading 12 pages of scanned PDFs (0.13 pages/s)",
    ]);
  });
});
