/**
 * The preferences pane's model (pure): how GET /config's `config` and `reference` become
 * grouped form fields, and how a field's text becomes the value PUT /config takes.
 *
 * Its words are Fluent ids (preferences.ftl, zocrates-pref-*) the view formats: a group's
 * title and intro, a field's label and help (`<label id>-help`), a refused value's sentence.
 */

/** The form's groups: Fluent ids of the title and intro, and the keys in order. */
export const CONFIG_GROUPS = Object.freeze([
  {
    id: "models",
    titleId: "zocrates-pref-models",
    introId: "zocrates-pref-models-intro",
    keys: [
      "coordinator_model",
      "subagent_model",
      "synthesizer_model",
      "synthesizer_thinking",
      "model_api_base",
      "model_tool_calling",
      "model_context_window",
    ],
  },
  {
    id: "research",
    titleId: "zocrates-pref-research",
    introId: "zocrates-pref-research-intro",
    keys: [
      "hitl_enabled",
      "max_retrieval_tools",
      "hard_word_ceiling",
      "max_rerank_chunks",
      "extension_call_increment",
      "extension_word_increment",
      "extension_chunk_increment",
      "max_extensions",
      "online_search_enabled",
    ],
  },
  {
    id: "compaction",
    titleId: "zocrates-pref-compaction",
    introId: "zocrates-pref-compaction-intro",
    keys: [
      "enable_adaptive_compaction",
      "compaction_summarizer_model",
      "adaptive_compaction_retention_turns",
      "adaptive_compaction_min_turns",
      "adaptive_compaction_token_floor",
      "adaptive_compaction_token_ceiling",
      "adaptive_compaction_threshold",
      "adaptive_compaction_decision_model",
    ],
  },
  {
    id: "storage",
    titleId: "zocrates-pref-sessions",
    introId: "zocrates-pref-sessions-intro",
    keys: ["session_retention_days", "max_saved_sessions"],
  },
]);

/** Each known key's label (a Fluent id; its help text is the id with "-help"). */
export const FIELD_LABELS = Object.freeze({
  coordinator_model: "zocrates-pref-coordinator-model",
  subagent_model: "zocrates-pref-subagent-model",
  synthesizer_model: "zocrates-pref-synthesizer-model",
  synthesizer_thinking: "zocrates-pref-synthesizer-thinking",
  model_api_base: "zocrates-pref-model-api-base",
  model_tool_calling: "zocrates-pref-model-tool-calling",
  model_context_window: "zocrates-pref-model-context-window",
  hitl_enabled: "zocrates-pref-hitl-enabled",
  max_retrieval_tools: "zocrates-pref-max-retrieval-tools",
  hard_word_ceiling: "zocrates-pref-hard-word-ceiling",
  max_rerank_chunks: "zocrates-pref-max-rerank-chunks",
  extension_call_increment: "zocrates-pref-extension-call-increment",
  extension_word_increment: "zocrates-pref-extension-word-increment",
  extension_chunk_increment: "zocrates-pref-extension-chunk-increment",
  max_extensions: "zocrates-pref-max-extensions",
  online_search_enabled: "zocrates-pref-online-search-enabled",
  enable_adaptive_compaction: "zocrates-pref-enable-adaptive-compaction",
  compaction_summarizer_model: "zocrates-pref-compaction-summarizer-model",
  adaptive_compaction_retention_turns: "zocrates-pref-compaction-retention-turns",
  adaptive_compaction_min_turns: "zocrates-pref-compaction-min-turns",
  adaptive_compaction_token_floor: "zocrates-pref-compaction-token-floor",
  adaptive_compaction_token_ceiling: "zocrates-pref-compaction-token-ceiling",
  adaptive_compaction_threshold: "zocrates-pref-compaction-threshold",
  adaptive_compaction_decision_model: "zocrates-pref-compaction-decision-model",
  session_retention_days: "zocrates-pref-retention-days",
  max_saved_sessions: "zocrates-pref-max-sessions",
});

export const MODEL_SUGGESTIONS = Object.freeze([
  "offline",
  "gemini-2.5-flash",
  "gemini-2.5-pro",
  "openrouter/google/gemini-2.5-flash",
  "openrouter/anthropic/claude-sonnet-4",
  "ollama_chat/llama3.1",
  "openai/gpt-4o-mini",
]);

/** The roles' model fields: each offers the model server's models and a Test model button. */
export const MODEL_KEYS = new Set([
  "coordinator_model",
  "subagent_model",
  "synthesizer_model",
  "compaction_summarizer_model",
]);

/** The key of the model server's base URL (GET /models/local lists what it serves). */
export const API_BASE_KEY = "model_api_base";

/** The values whose labels are Fluent messages (`<prefix><value>`), by key. */
const CHOICE_LABELS = Object.freeze({
  synthesizer_thinking: ["zocrates-pref-thinking-", ["off", "low", "medium", "high"]],
  model_tool_calling: ["zocrates-pref-tool-calling-", ["auto", "on", "off"]],
});

/** The values of a reference `type` that lists them (`Literal['off', 'low']`), else null. */
export function fieldChoices(type) {
  const m = /^Literal\[(.*)\]$/.exec(String(type || "").trim());
  if (!m) return null;
  const values = [...m[1].matchAll(/'([^']*)'|"([^"]*)"/g)].map((v) => v[1] ?? v[2]);
  return values.length ? values : null;
}

/** The Fluent id of a choice's label, for the values the plugin knows (null: show the value). */
export function choiceLabelId(key, value) {
  const known = CHOICE_LABELS[key];
  return known && known[1].includes(value) ? `${known[0]}${value}` : null;
}

/** The control a reference `type` gets. */
export function fieldKind(type, key = "") {
  const t = String(type || "").replace(/\s+/g, "");
  if (fieldChoices(type)) return "choice";
  if (t === "bool") return "bool";
  if (t === "int") return "int";
  if (t === "int|None" || t === "None|int") return "int-nullable";
  if (t === "float") return "float";
  if (MODEL_KEYS.has(key)) return "model";
  return "text";
}

function humanize(key) {
  const s = key.replace(/_/g, " ");
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/**
 * Groups of fields for the form.
 * @param {{config: object, reference: {key, type, default, description}[]}} body GET /config
 * @returns {{id, titleId, introId, fields: {key, labelId, helpId, label, kind, value,
 *            defaultValue, description}[]}[]}
 *   labelId / helpId: Fluent ids of a key the plugin knows (null for a newer gateway's key,
 *   which shows `label`, its key made readable, and `description`, the gateway's)
 */
export function configGroups({ config = {}, reference = [] } = {}) {
  const byKey = new Map(reference.map((r) => [r.key, r]));
  const used = new Set();
  const field = (key) => {
    const ref = byKey.get(key) || { key, type: typeof config[key] === "boolean" ? "bool" : "str" };
    used.add(key);
    const labelId = FIELD_LABELS[key] || null;
    return {
      key,
      labelId,
      helpId: labelId && `${labelId}-help`,
      label: humanize(key),
      kind: fieldKind(ref.type, key),
      choices: fieldChoices(ref.type),
      value: config[key],
      defaultValue: ref.default,
      description: ref.description || "",
    };
  };
  const groups = CONFIG_GROUPS.map((g) => ({
    id: g.id,
    titleId: g.titleId,
    introId: g.introId,
    fields: g.keys.filter((k) => k in config || byKey.has(k)).map(field),
  }));
  const rest = [...new Set([...Object.keys(config), ...byKey.keys()])].filter((k) => !used.has(k));
  if (rest.length)
    groups.push({
      id: "other",
      titleId: "zocrates-pref-other",
      introId: null,
      fields: rest.map(field),
    });
  return groups.filter((g) => g.fields.length || g.id === "storage");
}

/**
 * A field's input as the value to save. Throws a RangeError whose message is the Fluent id
 * of the sentence to show when the text is not a valid value (the gateway validates again).
 */
export function parseFieldValue(kind, raw) {
  switch (kind) {
    case "bool":
      return !!raw;
    case "int":
    case "int-nullable": {
      const s = String(raw ?? "").trim();
      if (!s) {
        if (kind === "int-nullable") return null;
        throw new RangeError("zocrates-pref-invalid-whole-number");
      }
      if (!/^-?\d+$/.test(s)) throw new RangeError("zocrates-pref-invalid-whole-number");
      const n = Number(s);
      if (n < 0) throw new RangeError("zocrates-pref-invalid-negative");
      return n;
    }
    case "float": {
      const s = String(raw ?? "")
        .trim()
        .replace(",", ".");
      const n = Number(s);
      if (!s || !Number.isFinite(n)) throw new RangeError("zocrates-pref-invalid-number");
      return n;
    }
    default:
      return String(raw ?? "").trim();
  }
}

/** The text an input shows for a value. */
export function formatFieldValue(kind, value) {
  if (kind === "bool") return !!value;
  if (value === null || value === undefined) return "";
  return String(value);
}

// ---------------------------------------------------------------- a model server's models

/** Whether a model field's value can be tested: a name, not the built-in offline model. */
export function canTestModel(value) {
  const name = String(value ?? "").trim();
  return name !== "" && name.toLowerCase() !== "offline";
}

/**
 * A model field's list of suggestions: the models the server at the base URL lists (GET
 * /models/local's `models`; their `model` is the name a role's field takes), then the usual
 * names it does not already hold.
 * @returns {{value: string, label: [string, object] | null}[]} label: a Fluent message with
 *   the server's id and context size, null for the usual names
 */
export function modelOptions(serverModels = []) {
  const out = [];
  const seen = new Set();
  for (const m of serverModels || []) {
    const value = typeof m?.model === "string" ? m.model.trim() : "";
    if (!value || seen.has(value)) continue;
    seen.add(value);
    const id = String(m.id ?? value);
    const tokens = Number(m.context_window);
    out.push({
      value,
      label:
        Number.isFinite(tokens) && tokens > 0
          ? ["zocrates-pref-local-model-context", { id, tokens }]
          : ["zocrates-pref-local-model", { id }],
    });
  }
  for (const value of MODEL_SUGGESTIONS) if (!seen.has(value)) out.push({ value, label: null });
  return out;
}

/** A reply on one line, at most `max` characters (cut at a word when one ends near there). */
export function clipReply(text, max = 120) {
  const line = String(text ?? "")
    .replace(/\s+/g, " ")
    .trim();
  if (line.length <= max) return line;
  const cut = line.slice(0, max - 1);
  const space = cut.lastIndexOf(" ");
  return `${(space > max * 0.6 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/**
 * POST /models/test's result as the parts of its one line (Fluent messages, joined by " · "):
 * the reply, seconds, tokens per second, context size, whether the model calls tools.
 * @returns {[string, object?][]}
 */
export function modelTestParts(result = {}) {
  const num = (v) => (v === null || v === undefined || v === "" ? NaN : Number(v));
  const reply = clipReply(result.reply);
  const parts = [
    reply ? ["zocrates-pref-model-test-reply", { reply }] : ["zocrates-pref-model-test-no-reply"],
  ];
  const seconds = num(result.seconds);
  if (Number.isFinite(seconds)) parts.push(["zocrates-pref-model-test-seconds", { seconds }]);
  const rate = num(result.tokens_per_second);
  if (Number.isFinite(rate) && rate > 0) parts.push(["zocrates-pref-model-test-rate", { rate }]);
  const tokens = num(result.context_window);
  parts.push(
    Number.isFinite(tokens) && tokens > 0
      ? ["zocrates-pref-model-test-context", { tokens }]
      : ["zocrates-pref-model-test-context-unknown"],
  );
  parts.push(
    result.tool_calling === true
      ? ["zocrates-pref-model-test-tools-yes"]
      : result.tool_calling === false
        ? ["zocrates-pref-model-test-tools-no"]
        : ["zocrates-pref-model-test-tools-unknown"],
  );
  return parts;
}

/**
 * Whether a failure of GET /models/local or POST /models/test means that the gateway has no
 * such route (a Zocrates from before them): its plain 404.
 */
export function isMissingRoute(err) {
  return err?.status === 404 && ["not_found", "http_404"].includes(err?.code);
}

/**
 * Whether a gateway URL is one the gateway answers (loopback only: it checks Host).
 * @returns {{ok: true, url: string} | {ok: false, error: string}} error: a Fluent id
 */
export function checkGatewayURL(url) {
  let u;
  try {
    u = new URL(String(url || "").trim());
  } catch {
    return { ok: false, error: "zocrates-pref-url-invalid" };
  }
  if (u.protocol !== "http:" && u.protocol !== "https:")
    return { ok: false, error: "zocrates-pref-url-scheme" };
  const host = u.hostname.replace(/^\[|\]$/g, "");
  if (!["127.0.0.1", "localhost", "::1"].includes(host))
    return { ok: false, error: "zocrates-pref-url-not-local" };
  return { ok: true, url: u.href.replace(/\/+$/, "") };
}
