/** The settings pane (prefs-view.js) on linkedom, in German and English, with a fake client. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseHTML } from "linkedom";
import { Codes, GatewayError } from "../src/errors.js";
import {
  canTestModel,
  choiceLabelId,
  clipReply,
  configGroups,
  isMissingRoute,
  MODEL_SUGGESTIONS,
  modelOptions,
  modelTestParts,
} from "../src/ui/prefs-model.js";
import { mountPreferences } from "../src/ui/prefs-view.js";
import { localization } from "./l10n-fixture.js";

const BODY = {
  path: "/z/zocrates-data/zocrates_config.json",
  config: {
    coordinator_model: "offline",
    synthesizer_thinking: "medium",
    hitl_enabled: true,
    session_retention_days: 180,
  },
  reference: [
    { key: "coordinator_model", type: "str", default: "offline", description: "server text" },
    {
      key: "synthesizer_thinking",
      type: "Literal['off', 'low', 'medium', 'high']",
      default: "high",
      description: "server text",
    },
    { key: "hitl_enabled", type: "bool", default: true, description: "server text" },
    { key: "session_retention_days", type: "int | None", default: 180, description: "x" },
    { key: "brand_new_key", type: "str", default: "", description: "A newer gateway's key." },
  ],
};

function fakeClient(l10n, { down = false, body = BODY, extra = {} } = {}) {
  const context = { baseURL: "http://127.0.0.1:8765", tokenPath: "/z/gateway.token", t: l10n.t };
  const refuse = async () => {
    throw new GatewayError({ code: Codes.GATEWAY_DOWN, context });
  };
  return {
    baseURL: context.baseURL,
    health: down ? refuse : async () => ({ status: "ok" }),
    listSessions: async () => [{ id: "s1" }, { id: "s2" }],
    libraryStatus: down
      ? refuse
      : async () => ({ items: 3, pages: 1015, chunks: 40, attachment_states: { no_text: 1 } }),
    getConfig: down ? refuse : async () => structuredClone(body),
    storageStats: async () => ({ size_bytes: 2592768, session_count: 7, event_count: 448 }),
    maintenance: async () => ({ deleted: 0, vacuumed: false, duration_ms: 3 }),
    putConfig: async (changes) => ({ ...body.config, ...changes }),
    ...extra,
  };
}

async function mount(locale, options) {
  const { document } = parseHTML("<!doctype html><html><body><div id=root></div></body></html>");
  const l10n = localization(locale);
  const root = document.getElementById("root");
  const view = mountPreferences({
    doc: document,
    root,
    env: {
      getClient: () => fakeClient(l10n, options),
      getGatewayURL: () => "http://127.0.0.1:8765",
      tokenPath: "/z/gateway.token",
      l10n,
    },
  });
  for (let k = 0; k < 5; k++) await new Promise((r) => setTimeout(r, 0));
  const text = (sel) => root.querySelector(sel)?.textContent ?? null;
  return { root, view, text, l10n };
}

describe("the settings pane", () => {
  test("in German: groups, labels, help, status lines and buttons from the German file", async () => {
    const { root, text, view } = await mount("de");
    assert.equal(root.querySelector(".zocrates-prefs").getAttribute("lang"), "de");
    assert.equal(text("#zocrates-prefs-connection h2"), "Verbindung");
    assert.equal(text("#zocrates-pref-test-connection"), "Verbindung testen");
    assert.match(text(".zc-conn-status"), /^Verbunden: .* \(2 Chats\)\.$/);
    assert.equal(text("#zocrates-sync span"), "Neue und geänderte Artikel indexieren");
    assert.equal(
      root.querySelector("#zocrates-sync-full").getAttribute("title"),
      "Jedes PDF neu lesen (dauert bei einer großen Bibliothek einige Minuten)",
    );
    assert.equal(
      text("#zocrates-library-status"),
      "3 Artikel · 1.015 Seiten · 40 Textstellen indexiert",
    );
    assert.equal(text("#zocrates-library-problems li"), "1 PDF ohne Textebene (gescannt)");
    assert.equal(text('[data-group="models"] h2'), "Modelle");
    assert.equal(text('[data-key="coordinator_model"] label'), "Koordinationsmodell");
    assert.match(text('[data-key="coordinator_model"] .zc-field-help'), /plant die Suche/);
    assert.equal(
      root.querySelector('[data-key="coordinator_model"] input').getAttribute("placeholder"),
      "Standard: offline",
    );
    assert.match(text('[data-key="hitl_enabled"] .zc-check'), /^An einem Kontrollpunkt anhalten/);
    assert.equal(text("#zocrates-storage-stats"), "Datenbank 2,5 MB · 7 Chats · 448 Ereignisse");
    assert.equal(text("#zocrates-pref-clean-up span"), "Jetzt aufräumen");
    // a newer gateway's key: its name and the gateway's description
    assert.equal(text('[data-key="brand_new_key"] label'), "Brand new key");
    assert.equal(text('[data-key="brand_new_key"] .zc-field-help'), "A newer gateway's key.");
    assert.equal(
      root.querySelector(".zc-config-path code").textContent,
      "/z/zocrates-data/zocrates_config.json",
    );
    await view.cleanUp();
    assert.equal(
      text(".zc-clean-status"),
      "Kein Chat musste gelöscht werden. Nicht verdichtet. (3 ms)",
    );
    view.destroy();
  });

  test("a refused value and an unreachable gateway say so in the user's language", async () => {
    const { root, text, view } = await mount("de");
    const input = root.querySelector('[data-key="session_retention_days"] input');
    input.value = "-3";
    input.dispatchEvent(new root.ownerDocument.defaultView.Event("change"));
    assert.equal(
      text('[data-key="session_retention_days"] .zc-pref-status'),
      "Geben Sie 0 oder mehr ein.",
    );
    view.destroy();
    const down = await mount("de", { down: true });
    assert.match(down.text(".zc-conn-status"), /^Zocrates läuft nicht/);
    assert.match(down.text("#zocrates-library-status"), /^Zocrates läuft nicht/);
    down.view.destroy();
  });

  test("in English, the words the browser test looks for", async () => {
    const { text, view } = await mount("en-US");
    assert.equal(text("#zocrates-storage-stats"), "Database 2.5 MB · 7 chats · 448 events");
    assert.equal(
      text('[data-key="session_retention_days"] label'),
      "Delete chats not used for (days)",
    );
    view.destroy();
  });

  test("a setting with listed values is a choice, its values in the user's language", async () => {
    const { root } = await mount("de");
    const select = root.querySelector("#zocrates-config-synthesizer_thinking");
    assert.equal(select.tagName, "SELECT");
    assert.deepEqual(
      [...select.querySelectorAll("option")].map((o) => [o.value, o.textContent]),
      [
        ["off", "Aus (Voreinstellung des Modells)"],
        ["low", "Wenig"],
        ["medium", "Mittel"],
        ["high", "Viel"],
      ],
    );
    assert.equal(select.value, "medium");
  });
});

// ---------------------------------------------------------------- a local model server

const BASE = "http://127.0.0.1:8080/v1";
const MODELS_BODY = {
  path: "/z/zocrates-data/zocrates_config.json",
  config: {
    coordinator_model: "openai/smollm2",
    subagent_model: "offline",
    synthesizer_model: "",
    synthesizer_thinking: "off",
    model_api_base: BASE,
    model_tool_calling: "auto",
    model_context_window: 0,
    compaction_summarizer_model: "openai/smollm2",
  },
  reference: [
    { key: "coordinator_model", type: "str", default: "offline", description: "x" },
    { key: "subagent_model", type: "str", default: "offline", description: "x" },
    { key: "synthesizer_model", type: "str", default: "offline", description: "x" },
    { key: "model_api_base", type: "str", default: "", description: "x" },
    {
      key: "model_tool_calling",
      type: "Literal['auto', 'on', 'off']",
      default: "auto",
      description: "x",
    },
    { key: "model_context_window", type: "int", default: 0, description: "x" },
    { key: "compaction_summarizer_model", type: "str", default: "offline", description: "x" },
  ],
};
const LOCAL = {
  api_base: BASE,
  server: "openai",
  models: [
    { id: "smollm2", model: "openai/smollm2", context_window: 4096 },
    { id: "qwen2.5-0.5b", model: "openai/qwen2.5-0.5b", context_window: null },
  ],
};
const TESTED = {
  model: "openai/smollm2",
  reply: "Hello!",
  seconds: 1.23,
  prompt_tokens: 20,
  completion_tokens: 8,
  tokens_per_second: 41.2,
  context_window: 4096,
  tool_calling: false,
};

const tick = async (n = 5) => {
  for (let k = 0; k < n; k++) await new Promise((r) => setTimeout(r, 0));
};

function deferred() {
  let resolve, reject;
  const promise = new Promise((a, b) => ((resolve = a), (reject = b)));
  return { promise, resolve, reject };
}

/** The pane on MODELS_BODY, with /models/local and /models/test answered by `local` and
 * `tested` (functions of the call, or values) and every call recorded. */
async function mountModels(locale, { local = LOCAL, tested = TESTED, body = MODELS_BODY } = {}) {
  const calls = { local: [], test: [], put: [] };
  const answer = async (how, args) => {
    const value = typeof how === "function" ? await how(...args) : how;
    return structuredClone(value);
  };
  const extra = {
    localModels: async (...args) => {
      calls.local.push(args);
      return answer(local, args);
    },
    testModel: async (...args) => {
      calls.test.push(args);
      return answer(tested, args);
    },
    putConfig: async (changes) => {
      calls.put.push(changes);
      return { ...body.config, ...changes };
    },
  };
  const mounted = await mount(locale, { body, extra });
  const { root } = mounted;
  const Event = root.ownerDocument.defaultView.Event;
  const field = (key) => root.querySelector(`[data-key="${key}"]`);
  const options = (key) =>
    [...field(key).querySelectorAll("datalist option")].map((o) => [
      o.getAttribute("value"),
      o.getAttribute("label"),
    ]);
  const fire = (el, type) => el.dispatchEvent(new Event(type));
  return { ...mounted, calls, field, options, fire };
}

describe("the settings pane and a local model server", () => {
  test("the model group's new keys follow the base URL, in both languages", async () => {
    const groups = configGroups(MODELS_BODY);
    assert.deepEqual(
      groups[0].fields.map((f) => [f.key, f.kind]),
      [
        ["coordinator_model", "model"],
        ["subagent_model", "model"],
        ["synthesizer_model", "model"],
        ["synthesizer_thinking", "text"],
        ["model_api_base", "text"],
        ["model_tool_calling", "choice"],
        ["model_context_window", "int"],
      ],
    );
    assert.equal(choiceLabelId("model_tool_calling", "off"), "zocrates-pref-tool-calling-off");
    assert.equal(choiceLabelId("model_tool_calling", "sometimes"), null);
    assert.equal(choiceLabelId("synthesizer_thinking", "high"), "zocrates-pref-thinking-high");
    const { root, text, view } = await mountModels("de");
    assert.equal(text('[data-key="model_tool_calling"] label'), "Werkzeugaufrufe");
    assert.match(text('[data-key="model_tool_calling"] .zc-field-help'), /festen Ablauf/);
    const select = root.querySelector("#zocrates-config-model_tool_calling");
    assert.deepEqual(
      [...select.querySelectorAll("option")].map((o) => [o.value, o.textContent]),
      [
        ["auto", "Automatisch (das Modell einmal prüfen)"],
        ["on", "An"],
        ["off", "Aus (Zocrates sucht, das Modell schreibt)"],
      ],
    );
    assert.equal(text('[data-key="model_context_window"] label'), "Kontextfenster (Tokens)");
    assert.match(text('[data-key="model_context_window"] .zc-field-help'), /0 liest/);
    const keys = [...root.querySelectorAll('[data-group="models"] [data-key]')].map((el) =>
      el.getAttribute("data-key"),
    );
    assert.deepEqual(keys.slice(-3), [
      "model_api_base",
      "model_tool_calling",
      "model_context_window",
    ]);
    view.destroy();
    const en = await mountModels("en-US");
    assert.equal(en.text('[data-key="model_tool_calling"] label'), "Tool calling");
    assert.match(
      en.text('[data-key="model_tool_calling"] .zc-field-help'),
      /auto: probe the model once; .*off: the model only writes the answer and Zocrates searches with its fixed policy \(for small local models\)/,
    );
    assert.equal(
      en.text('[data-key="model_context_window"] .zc-field-help'),
      "Tokens the model's server holds; 0 reads it from the server.",
    );
    en.view.destroy();
  });

  test("the pure parts: suggestions, the reply clipped, the result's parts", () => {
    assert.equal(canTestModel(" openai/smollm2 "), true);
    assert.equal(canTestModel(""), false);
    assert.equal(canTestModel("  "), false);
    assert.equal(canTestModel("offline"), false);
    assert.equal(canTestModel("Offline"), false);
    const opts = modelOptions([
      ...LOCAL.models,
      { id: "again", model: "openai/smollm2" },
      { id: "nameless" },
      { id: "gpt", model: "openai/gpt-4o-mini", context_window: 128000 },
    ]);
    assert.deepEqual(opts.slice(0, 3), [
      {
        value: "openai/smollm2",
        label: ["zocrates-pref-local-model-context", { id: "smollm2", tokens: 4096 }],
      },
      {
        value: "openai/qwen2.5-0.5b",
        label: ["zocrates-pref-local-model", { id: "qwen2.5-0.5b" }],
      },
      {
        value: "openai/gpt-4o-mini",
        label: ["zocrates-pref-local-model-context", { id: "gpt", tokens: 128000 }],
      },
    ]);
    // then the usual names, without the one the server already listed
    assert.deepEqual(
      opts.slice(3).map((o) => o.value),
      MODEL_SUGGESTIONS.filter((m) => m !== "openai/gpt-4o-mini"),
    );
    assert.deepEqual(
      modelOptions([]).map((o) => o.value),
      [...MODEL_SUGGESTIONS],
    );
    assert.equal(clipReply("  Hello!\n\n  there "), "Hello! there");
    const long = clipReply("word ".repeat(60));
    assert.ok(long.length <= 120, long.length);
    assert.match(long, /^word word .*word…$/);
    assert.equal(clipReply("x".repeat(200)), `${"x".repeat(119)}…`);
    assert.deepEqual(modelTestParts(TESTED), [
      ["zocrates-pref-model-test-reply", { reply: "Hello!" }],
      ["zocrates-pref-model-test-seconds", { seconds: 1.23 }],
      ["zocrates-pref-model-test-rate", { rate: 41.2 }],
      ["zocrates-pref-model-test-context", { tokens: 4096 }],
      ["zocrates-pref-model-test-tools-no"],
    ]);
    assert.deepEqual(
      modelTestParts({ reply: "", seconds: 0.5, tokens_per_second: null, context_window: null }),
      [
        ["zocrates-pref-model-test-no-reply"],
        ["zocrates-pref-model-test-seconds", { seconds: 0.5 }],
        ["zocrates-pref-model-test-context-unknown"],
        ["zocrates-pref-model-test-tools-unknown"],
      ],
    );
    assert.deepEqual(modelTestParts({ tool_calling: true }).at(-1), [
      "zocrates-pref-model-test-tools-yes",
    ]);
    assert.equal(isMissingRoute({ status: 404, code: "not_found" }), true);
    assert.equal(isMissingRoute({ status: 404, code: "session_not_found" }), false);
    assert.equal(isMissingRoute({ status: 503, code: "model_server_error" }), false);
  });

  test("on open, every role's model field offers the server's models", async () => {
    const { calls, options, text, root, view } = await mountModels("en-US");
    assert.equal(calls.local.length, 1);
    assert.equal(calls.local[0][0], BASE);
    assert.ok(calls.local[0][1] && "signal" in calls.local[0][1]);
    for (const key of [
      "coordinator_model",
      "subagent_model",
      "synthesizer_model",
      "compaction_summarizer_model",
    ]) {
      const list = options(key);
      assert.deepEqual(list.slice(0, 2), [
        ["openai/smollm2", "smollm2 (model server, 4,096 tokens of context)"],
        ["openai/qwen2.5-0.5b", "qwen2.5-0.5b (model server)"],
      ]);
      assert.deepEqual(list[2], ["offline", null]);
      // the input is bound to its list
      const input = root.querySelector(`#zocrates-config-${key}`);
      const datalist = root.querySelector(`[data-key="${key}"] datalist`);
      assert.equal(input.getAttribute("list"), datalist.getAttribute("id"));
    }
    // the other fields have none, nor a Test model button
    for (const key of ["model_api_base", "model_tool_calling", "synthesizer_thinking"])
      assert.equal(root.querySelector(`[data-key="${key}"] .zc-model-test`), null, key);
    const status = root.querySelector('[data-key="model_api_base"] #zocrates-local-models-status');
    assert.equal(status.getAttribute("data-kind"), "ok");
    assert.equal(
      text("#zocrates-local-models-status"),
      "The model server (OpenAI-compatible) serves 2 models: pick one from a model field's list.",
    );
    view.destroy();
  });

  test("the list follows the base URL: changed, left, emptied; a stale answer is dropped", async () => {
    const slow = deferred();
    const answers = {
      [BASE]: LOCAL,
      "http://127.0.0.1:11434": slow.promise,
      "http://127.0.0.1:9000/v1": {
        api_base: "http://127.0.0.1:9000/v1",
        server: "ollama",
        models: [{ id: "llama3.2:1b", model: "ollama_chat/llama3.2:1b", context_window: 131072 }],
      },
    };
    const m = await mountModels("en-US", { local: (base) => answers[base] });
    const base = m.root.querySelector("#zocrates-config-model_api_base");
    // leaving the field unchanged asks nothing again
    m.fire(base, "blur");
    await tick();
    assert.equal(m.calls.local.length, 1);
    // a slow server, then another base URL before it answers: the later one's list stays
    base.value = "http://127.0.0.1:11434";
    m.fire(base, "change");
    await tick();
    assert.deepEqual(m.calls.put.at(-1), { model_api_base: "http://127.0.0.1:11434" });
    assert.equal(m.calls.local.at(-1)[0], "http://127.0.0.1:11434");
    assert.equal(
      m.root.querySelector("#zocrates-local-models-status").getAttribute("data-kind"),
      "busy",
    );
    base.value = "http://127.0.0.1:9000/v1";
    m.fire(base, "change");
    m.fire(base, "blur"); // the same lookup, not a second one
    await tick();
    assert.equal(m.calls.local.length, 3);
    slow.resolve(LOCAL);
    await tick();
    assert.deepEqual(m.options("synthesizer_model")[0], [
      "ollama_chat/llama3.2:1b",
      "llama3.2:1b (model server, 131,072 tokens of context)",
    ]);
    assert.equal(
      m.text("#zocrates-local-models-status"),
      "The model server (Ollama) serves 1 model: pick it from a model field's list.",
    );
    // no base URL: the usual names only, no line, no lookup
    base.value = "  ";
    m.fire(base, "change");
    await tick();
    assert.equal(m.calls.local.length, 3);
    assert.deepEqual(
      m.options("coordinator_model").map(([v]) => v),
      [...MODEL_SUGGESTIONS],
    );
    assert.equal(m.text("#zocrates-local-models-status"), "");
    m.view.destroy();
  });

  test("a lookup that fails shows the gateway's message under the base URL, and looks again", async () => {
    let fail = true;
    const message = "Nothing answers at http://127.0.0.1:8080/v1: is the model server running?";
    const m = await mountModels("de", {
      local: () => {
        if (!fail) return LOCAL;
        throw new GatewayError({ code: "model_server_unreachable", status: 503, message });
      },
    });
    const status = m.root.querySelector(
      '[data-key="model_api_base"] #zocrates-local-models-status',
    );
    assert.equal(status.getAttribute("data-kind"), "error");
    assert.equal(status.textContent, message);
    assert.deepEqual(
      m.options("coordinator_model").map(([v]) => v),
      [...MODEL_SUGGESTIONS],
    );
    // the user starts the server and leaves the field: it looks again
    fail = false;
    m.fire(m.root.querySelector("#zocrates-config-model_api_base"), "blur");
    await tick();
    assert.equal(m.calls.local.length, 2);
    assert.equal(status.getAttribute("data-kind"), "ok");
    assert.match(status.textContent, /^Der Modellserver \(OpenAI-kompatibel\) bietet 2 Modelle an/);
    m.view.destroy();
    // an older gateway without the route says what to do; the gateway down, its own words
    const old = await mountModels("en-US", {
      local: () => {
        throw new GatewayError({ code: "not_found", status: 404, message: "Not Found" });
      },
    });
    assert.match(
      old.text("#zocrates-local-models-status"),
      /cannot list or test models: update Zocrates/,
    );
    old.view.destroy();
    const down = await mountModels("en-US", {
      local: () => {
        throw new GatewayError({ code: Codes.GATEWAY_DOWN });
      },
    });
    assert.match(down.text("#zocrates-local-models-status"), /^Zocrates is not running/);
    down.view.destroy();
  });

  test("Test model: enabled for a model name, busy while it runs, then one line", async () => {
    const reply = deferred();
    const m = await mountModels("en-US", { tested: () => reply.promise });
    const button = (key) => m.root.querySelector(`[data-key="${key}"] .zc-model-test`);
    assert.equal(button("coordinator_model").textContent, "Test model");
    assert.match(button("coordinator_model").getAttribute("title"), /short reply/);
    assert.equal(button("coordinator_model").disabled, false);
    assert.equal(button("subagent_model").disabled, true, "offline cannot be tested");
    assert.equal(button("synthesizer_model").disabled, true, "an empty field cannot be tested");
    assert.equal(button("compaction_summarizer_model").disabled, false);
    // typing a name enables it, emptying disables it
    const synth = m.root.querySelector("#zocrates-config-synthesizer_model");
    synth.value = "openai/qwen2.5-0.5b";
    m.fire(synth, "input");
    assert.equal(button("synthesizer_model").disabled, false);
    synth.value = "";
    m.fire(synth, "input");
    assert.equal(button("synthesizer_model").disabled, true);
    // the test runs with the field's current value and the base URL in the form
    const coord = m.root.querySelector("#zocrates-config-coordinator_model");
    coord.value = " openai/smollm2 ";
    const base = m.root.querySelector("#zocrates-config-model_api_base");
    base.value = "http://127.0.0.1:8081/v1";
    m.fire(button("coordinator_model"), "click");
    await tick();
    assert.equal(m.calls.test.length, 1);
    assert.deepEqual(m.calls.test[0].slice(0, 2), ["openai/smollm2", "http://127.0.0.1:8081/v1"]);
    const result = m.root.querySelector("#zocrates-model-test-coordinator_model");
    assert.equal(result.getAttribute("data-kind"), "busy");
    assert.equal(result.textContent, "Testing openai/smollm2…");
    assert.equal(button("coordinator_model").disabled, true);
    assert.equal(button("coordinator_model").getAttribute("aria-busy"), "true");
    m.fire(button("coordinator_model"), "click"); // no second test while one runs
    assert.equal(m.calls.test.length, 1);
    reply.resolve(TESTED);
    await tick();
    assert.equal(result.getAttribute("data-kind"), "ok");
    assert.equal(
      result.textContent,
      "Replied “Hello!” · 1.2 s · 41.2 tokens/s · context 4,096 tokens · " +
        "cannot call tools: set Tool calling to Off",
    );
    assert.equal(result.getAttribute("data-tool-calling"), "false");
    assert.equal(button("coordinator_model").disabled, false);
    assert.equal(button("coordinator_model").hasAttribute("aria-busy"), false);
    // the result line sits in the field, under it
    assert.equal(result.closest("[data-key]").getAttribute("data-key"), "coordinator_model");
    m.view.destroy();
  });

  test("Test model in German, a long reply clipped, and a failure in the gateway's words", async () => {
    const message =
      "The model server at http://127.0.0.1:8080/v1 has no model smollm3: load it there or pick one it lists.";
    const m = await mountModels("de", {
      tested: (model) => {
        if (model === "openai/smollm3")
          throw new GatewayError({ code: "model_test_failed", status: 503, message });
        return { ...TESTED, reply: "Hallo! ".repeat(40), tool_calling: true, seconds: 0.84 };
      },
    });
    const compaction = '[data-key="compaction_summarizer_model"]';
    m.fire(m.root.querySelector(`${compaction} .zc-model-test`), "click");
    await tick();
    const result = m.root.querySelector("#zocrates-model-test-compaction_summarizer_model");
    const line = result.textContent;
    assert.match(
      line,
      /^Antwortete „Hallo! Hallo! .*…“ · 0,8 s · 41,2 Tokens\/s · Kontext 4\.096 Tokens · kann Werkzeuge aufrufen$/,
    );
    assert.ok(/„(.*)“/.exec(line)[1].length <= 120);
    assert.equal(result.getAttribute("data-tool-calling"), "true");
    const input = m.root.querySelector("#zocrates-config-compaction_summarizer_model");
    input.value = "openai/smollm3";
    m.fire(input, "input");
    m.fire(m.root.querySelector(`${compaction} .zc-model-test`), "click");
    await tick();
    assert.equal(result.getAttribute("data-kind"), "error");
    assert.equal(result.textContent, message);
    assert.equal(result.hasAttribute("data-tool-calling"), false);
    m.view.destroy();
  });
});
