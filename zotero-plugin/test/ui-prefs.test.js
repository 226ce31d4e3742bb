/** The settings pane (prefs-view.js) on linkedom, in German and English, with a fake client. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseHTML } from "linkedom";
import { Codes, GatewayError } from "../src/errors.js";
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

function fakeClient(l10n, { down = false } = {}) {
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
    getConfig: down ? refuse : async () => structuredClone(BODY),
    storageStats: async () => ({ size_bytes: 2592768, session_count: 7, event_count: 448 }),
    maintenance: async () => ({ deleted: 0, vacuumed: false, duration_ms: 3 }),
    putConfig: async (changes) => ({ ...BODY.config, ...changes }),
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
    assert.equal(text("#zocrates-library-problems li"), "1 PDF ohne Textebene (OCR nötig)");
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
