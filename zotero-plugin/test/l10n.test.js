import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { parseHTML } from "linkedom";
import { ENGLISH } from "../src/card.js";
import { ENGLISH as STEP_ENGLISH } from "../src/ui/steps.js";
import { Codes, describeError } from "../src/errors.js";
import { createLocalization, negotiateLocale } from "../src/l10n.js";
import { createH } from "../src/ui/dom.js";
import { CONFIG_GROUPS, FIELD_LABELS } from "../src/ui/prefs-model.js";
import { localization, readResources } from "./l10n-fixture.js";

const SRC = path.join(import.meta.dirname, "..", "src");
const MESSAGE_ID =
  /["`](zocrates-(?:sidebar|sessions|time|notice|action|empty|example|answer|steps|live|scope|snippet|card|menu|rail|note|citation|pref|error|step|reader)-(?!chip\b|unverified\b)[a-z0-9_-]*)["`$]/g;

function sourceFiles(dir = SRC) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? sourceFiles(path.join(dir, e.name))
      : e.name.endsWith(".js")
        ? [path.join(dir, e.name)]
        : [],
  );
}

/** Message ids with their attribute names and whether they have a value, from FTL text. */
function messages(texts) {
  const out = new Map();
  let current = null;
  for (const text of texts)
    for (const line of text.split("\n")) {
      const m = /^([a-z][a-z0-9_-]*)\s*=\s*(.*)$/.exec(line);
      if (m) {
        current = { value: m[2].trim() !== "", attributes: [] };
        out.set(m[1], current);
        continue;
      }
      const a = /^\s+\.([a-z-]+)\s*=/.exec(line);
      if (a && current) current.attributes.push(a[1]);
      else if (current && /^\s+\S/.test(line) && !line.trim().startsWith(".")) current.value = true;
    }
  return out;
}

describe("localization", () => {
  test("the closest shipped locale is chosen, English otherwise", () => {
    const shipped = ["en-US", "de"];
    assert.equal(negotiateLocale("de-DE", shipped), "de");
    assert.equal(negotiateLocale("de_AT", shipped), "de");
    assert.equal(negotiateLocale("en-GB", shipped), "en-US");
    assert.equal(negotiateLocale("fr-FR", shipped), "en-US");
    assert.equal(negotiateLocale("", shipped), "en-US");
  });

  test("values, attributes and plurals come from the files; German where it exists", () => {
    const en = localization("en-US");
    assert.equal(en.t("zocrates-sidebar-new-chat"), "New chat");
    assert.equal(en.t("zocrates-sessions-count", { count: 1 }), "1 chat");
    assert.equal(en.t("zocrates-sessions-count", { count: 3 }), "3 chats");
    assert.deepEqual(en.message("zocrates-sidebar-send-button", { shortcut: "Ctrl+Enter" }), {
      value: null,
      attributes: { title: "Ask (Ctrl+Enter)" },
    });
    const de = localization("de-DE");
    assert.equal(de.locale, "de");
    assert.notEqual(de.t("zocrates-sidebar-new-chat"), "New chat");
    assert.match(de.t("zocrates-sessions-count", { count: 3 }), /^3 /);
  });

  test("a message missing in the locale falls back to English, a missing id shows itself", () => {
    const logged = [];
    const l10n = createLocalization({
      locale: "de",
      resources: { "en-US": ["a = English A\nb = English B"], de: ["a = Deutsch A"] },
      log: (m) => logged.push(m),
    });
    assert.equal(l10n.t("a"), "Deutsch A");
    assert.equal(l10n.t("b"), "English B");
    assert.equal(l10n.t("nope"), "nope");
    assert.equal(l10n.t("nope"), "nope");
    assert.deepEqual(logged, ['l10n: no string "nope"']);
  });

  test("h marks elements with data-zc-l10n and fills their text and attributes", () => {
    const { document } = parseHTML("<!doctype html><html><body></body></html>");
    const h = createH(document, localization("en-US"));
    const span = h("span", { l10n: ["zocrates-sessions-count", { count: 2 }] });
    assert.equal(span.getAttribute("data-zc-l10n"), "zocrates-sessions-count");
    assert.deepEqual(JSON.parse(span.getAttribute("data-zc-l10n-args")), { count: 2 });
    assert.equal(span.textContent, "2 chats");
    const button = h("button", { l10n: "zocrates-sidebar-settings" }, [h("i", {})]);
    assert.equal(button.getAttribute("title"), "Zocrates settings");
    assert.equal(button.getAttribute("aria-label"), "Zocrates settings");
    assert.equal(button.querySelector("i") !== null, true); // children kept
    h.localize(span, "zocrates-sidebar-stop");
    assert.equal(span.textContent, "Stop");
    assert.equal(span.hasAttribute("data-zc-l10n-args"), false);
  });

  test("every id the code uses exists in English, and every locale has the same messages", () => {
    const resources = readResources();
    const english = messages(resources["en-US"]);
    const used = new Set();
    for (const file of sourceFiles()) {
      const text = readFileSync(file, "utf8");
      // Message ids (class names share the zocrates- prefix, so only the message families).
      for (const m of text.matchAll(MESSAGE_ID)) used.add(m[1]);
    }
    // Ids built from a prefix in the code (`zocrates-action-${a}` and the like) are listed
    // whole in the files; the literal prefixes themselves are not messages.
    const missing = [...used].filter((id) => !english.has(id) && !id.endsWith("-"));
    assert.deepEqual(missing, []);
    for (const [locale, texts] of Object.entries(resources)) {
      if (locale === "en-US") continue;
      const other = messages(texts);
      assert.deepEqual([...other.keys()].sort(), [...english.keys()].sort(), locale);
      for (const [id, m] of english)
        assert.deepEqual(
          [other.get(id).value, [...other.get(id).attributes].sort()],
          [m.value, [...m.attributes].sort()],
          `${locale} ${id}`,
        );
    }
  });

  test("every setting the form knows has a label and a help text; every group its words", () => {
    const english = messages(readResources()["en-US"]);
    for (const [key, id] of Object.entries(FIELD_LABELS)) {
      assert.ok(english.get(id)?.value, `${key}: ${id}`);
      assert.ok(english.get(`${id}-help`)?.value, `${key}: ${id}-help`);
    }
    for (const g of CONFIG_GROUPS) {
      assert.ok(english.has(g.titleId), g.titleId);
      assert.ok(english.has(g.introId), g.introId);
    }
  });

  test("the card's English fallback says what the English file says", () => {
    const en = localization("en-US");
    const args = {
      number: 1,
      max: 2,
      calls: 5,
      words: 3750,
      evidence: 6,
      budget: 10,
      ceiling: 7500,
      used: 1200,
      of: 7500,
      count: 3,
      chunks: 20,
      page: 4,
      shortcut: "Ctrl+Enter",
    };
    for (const key of Object.keys(ENGLISH))
      assert.equal(en.t(`zocrates-card-${key}`, args), ENGLISH[key](args), key);
  });

  test("steps.js's English is the English file's, for one and for several", () => {
    const en = localization("en-US");
    for (const count of [1, 3]) {
      const args = {
        query: "lmer optimizer",
        count,
        items: "A; B",
        more: 2,
        page: 4,
        start: 20,
        end: 21,
        where: "p. 4",
        tool: "search corpus",
        number: 1,
        max: 2,
        text: "photonic",
      };
      for (const key of Object.keys(STEP_ENGLISH))
        assert.equal(en.t(key, args), STEP_ENGLISH[key](args), `${key} (${count})`);
    }
  });

  test("the gateway's errors: English without a localization, the file's words with one", () => {
    const context = {
      baseURL: "http://127.0.0.1:8765",
      tokenPath: "/z/zocrates-data/gateway.token",
    };
    const en = localization("en-US");
    const de = localization("de");
    const errors = [
      ...Object.values(Codes).map((code) => ({ code })),
      { code: "host_not_allowed", status: 403 },
      { code: Codes.UNAUTHORIZED, status: 401, message: "bad token" },
      { code: "http_502", status: 502 },
      {},
    ];
    for (const error of errors) {
      const english = describeError(error, context);
      assert.equal(describeError(error, { ...context, t: en.t }), english, error.code);
      const german = describeError(error, { ...context, t: de.t });
      assert.notEqual(german, english, `${error.code} in German`);
      assert.doesNotMatch(german, /zocrates-error-/);
    }
    assert.match(
      describeError({ code: Codes.TOKEN_MISSING }, { ...context, t: de.t }),
      /\/z\/zocrates-data\/gateway\.token/,
    );
    assert.match(
      describeError({ code: Codes.UNAUTHORIZED, message: "bad token" }, { ...context, t: de.t }),
      /\(Das Gateway meldete: bad token\)$/,
    );
  });
});
