/**
 * The preferences pane's model (pure): how GET /config's `config` and `reference` become
 * grouped form fields, and how a field's text becomes the value PUT /config takes.
 */

export const CONFIG_GROUPS = Object.freeze([
  {
    id: "models",
    title: "Models",
    intro:
      "Each role runs the built-in offline model (no key, no network: it quotes your papers), a Gemini model (needs GOOGLE_API_KEY) or any model LiteLLM reaches (openrouter/…, ollama_chat/…, openai/… with a base URL). API keys are read from Zocrates's environment, never stored here.",
    keys: ["coordinator_model", "subagent_model", "synthesizer_model", "model_api_base"],
  },
  {
    id: "research",
    title: "Deep research",
    intro:
      "A question's first search pass works within these limits. When it leaves gaps, the chat pauses at a checkpoint where you grant an extension or answer with what was found.",
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
    title: "Long conversations",
    intro:
      "After a turn, long chats can be compacted: older turns are summarized, the latest ones kept word for word, so the model keeps the thread without re-reading everything.",
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
    title: "Chat Sessions & Storage",
    intro:
      "Chats are kept in sessions.db in your Zotero data directory. Old chats are removed by these rules when Zotero starts, or now with Clean Up Now; chats that are answering are never touched.",
    keys: ["session_retention_days", "max_saved_sessions"],
  },
]);

export const FIELD_LABELS = Object.freeze({
  coordinator_model: "Coordinator model",
  subagent_model: "Search model",
  synthesizer_model: "Answer model",
  model_api_base: "Model server URL",
  hitl_enabled: "Pause at a checkpoint when the search leaves gaps",
  max_retrieval_tools: "Searches in the first pass",
  hard_word_ceiling: "Words read in the first pass",
  max_rerank_chunks: "Passages given to the answer",
  extension_call_increment: "Searches added by an extension",
  extension_word_increment: "Words added by an extension",
  extension_chunk_increment: "Passages added by an extension",
  max_extensions: "Extensions per question",
  online_search_enabled: "Also search OpenAlex for literature beyond your library",
  enable_adaptive_compaction: "Compact long conversations",
  compaction_summarizer_model: "Summary model",
  adaptive_compaction_retention_turns: "Latest turns kept word for word",
  adaptive_compaction_min_turns: "Turns before compaction is considered",
  adaptive_compaction_token_floor: "Never compact below (tokens)",
  adaptive_compaction_token_ceiling: "Always compact above (tokens)",
  adaptive_compaction_threshold: "Decision threshold (0–1)",
  adaptive_compaction_decision_model: "Decision model",
  session_retention_days: "Delete chats not used for (days)",
  max_saved_sessions: "Keep at most (chats)",
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

const MODEL_KEYS = new Set([
  "coordinator_model",
  "subagent_model",
  "synthesizer_model",
  "compaction_summarizer_model",
]);

/** The control a reference `type` gets. */
export function fieldKind(type, key = "") {
  const t = String(type || "").replace(/\s+/g, "");
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
 * @returns {{id, title, intro, fields: {key, label, kind, value, defaultValue, description}[]}[]}
 */
export function configGroups({ config = {}, reference = [] } = {}) {
  const byKey = new Map(reference.map((r) => [r.key, r]));
  const used = new Set();
  const field = (key) => {
    const ref = byKey.get(key) || { key, type: typeof config[key] === "boolean" ? "bool" : "str" };
    used.add(key);
    return {
      key,
      label: FIELD_LABELS[key] || humanize(key),
      kind: fieldKind(ref.type, key),
      value: config[key],
      defaultValue: ref.default,
      description: ref.description || "",
    };
  };
  const groups = CONFIG_GROUPS.map((g) => ({
    id: g.id,
    title: g.title,
    intro: g.intro,
    fields: g.keys.filter((k) => k in config || byKey.has(k)).map(field),
  }));
  const rest = [...new Set([...Object.keys(config), ...byKey.keys()])].filter((k) => !used.has(k));
  if (rest.length)
    groups.push({ id: "other", title: "Other settings", intro: "", fields: rest.map(field) });
  return groups.filter((g) => g.fields.length || g.id === "storage");
}

/**
 * A field's input as the value to save. Throws a RangeError with a sentence when the text is
 * not a valid value (the gateway validates again).
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
        throw new RangeError("Enter a whole number.");
      }
      if (!/^-?\d+$/.test(s)) throw new RangeError("Enter a whole number.");
      const n = Number(s);
      if (n < 0) throw new RangeError("Enter 0 or more.");
      return n;
    }
    case "float": {
      const s = String(raw ?? "")
        .trim()
        .replace(",", ".");
      const n = Number(s);
      if (!s || !Number.isFinite(n)) throw new RangeError("Enter a number.");
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

/** Whether a gateway URL is one the gateway answers (loopback only: it checks Host). */
export function checkGatewayURL(url) {
  let u;
  try {
    u = new URL(String(url || "").trim());
  } catch {
    return { ok: false, message: "Enter a URL such as http://127.0.0.1:8765." };
  }
  if (u.protocol !== "http:" && u.protocol !== "https:")
    return { ok: false, message: "The URL must start with http:// or https://." };
  const host = u.hostname.replace(/^\[|\]$/g, "");
  if (!["127.0.0.1", "localhost", "::1"].includes(host)) {
    return {
      ok: false,
      message: "Zocrates only answers on this computer: use 127.0.0.1 or localhost with its port.",
    };
  }
  return { ok: true, message: "", url: u.href.replace(/\/+$/, "") };
}
