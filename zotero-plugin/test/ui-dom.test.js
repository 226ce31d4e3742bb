/** dom.js and the checkpoint card's DOM, on a tiny fake document (createElementNS only). */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { renderCheckpointCard } from "../src/ui/card-view.js";
import { createH, isSendShortcut, XHTML_NS } from "../src/ui/dom.js";
import { ICON_NAMES, icon, SVG_NS } from "../src/ui/icons.js";
import { renderMarkdown } from "../src/markdown.js";
import { PAYLOAD } from "./fixtures.js";
import { localization } from "./l10n-fixture.js";

function fakeDocument() {
  class Node {
    constructor(ns, tag) {
      this.namespaceURI = ns;
      this.tagName = tag;
      this.attributes = new Map();
      this.childNodes = [];
      this.listeners = {};
      this.style = { props: {}, setProperty: (k, v) => (this.style.props[k] = v) };
      const self = this;
      this.classList = {
        add: (c) => self.setAttribute("class", `${self.getAttribute("class") || ""} ${c}`.trim()),
        contains: (c) => (self.getAttribute("class") || "").split(/\s+/).includes(c),
      };
    }
    setAttribute(k, v) {
      this.attributes.set(k, String(v));
    }
    getAttribute(k) {
      return this.attributes.has(k) ? this.attributes.get(k) : null;
    }
    appendChild(c) {
      this.childNodes.push(c);
      c.parentNode = this;
      return c;
    }
    addEventListener(type, fn) {
      (this.listeners[type] ||= []).push(fn);
    }
    dispatch(type, event = {}) {
      for (const fn of this.listeners[type] || [])
        fn({ target: this, preventDefault() {}, stopPropagation() {}, ...event });
    }
    get textContent() {
      return this.childNodes.map((c) => (c.nodeType === 3 ? c.data : c.textContent)).join("");
    }
    matches(sel) {
      const cls = /^\.([\w-]+)$/.exec(sel);
      if (cls) return this.classList.contains(cls[1]);
      const attr = /^\[([\w-]+)="([^"]*)"\]$/.exec(sel);
      if (attr) return this.getAttribute(attr[1]) === attr[2];
      return this.tagName === sel;
    }
    querySelectorAll(sel) {
      const out = [];
      const walk = (n) => {
        for (const c of n.childNodes) {
          if (c.nodeType === 3) continue;
          if (c.matches(sel)) out.push(c);
          walk(c);
        }
      };
      walk(this);
      return out;
    }
    querySelector(sel) {
      return this.querySelectorAll(sel)[0] || null;
    }
  }
  const created = [];
  return {
    created,
    createElementNS(ns, tag) {
      const n = new Node(ns, tag);
      created.push(n);
      return n;
    },
    createElement() {
      throw new Error("createElement must not be used: Zotero's window is a XUL document");
    },
    createTextNode(data) {
      return { nodeType: 3, data: String(data) };
    },
  };
}

describe("dom.js", () => {
  test("elements in the XHTML namespace, text as text nodes, attributes, listeners, props, style", () => {
    const doc = fakeDocument();
    const h = createH(doc);
    let clicked = 0;
    const el = h(
      "button",
      {
        class: "x",
        "data-id": 7,
        hidden: false,
        disabled: true,
        on: { click: () => clicked++ },
        props: { value: "v" },
        style: { "--pct": "40%" },
      },
      ["<img src=x onerror=alert(1)>", null, ["a", 1], h("span", {}, "inner")],
    );
    assert.equal(el.namespaceURI, XHTML_NS);
    assert.equal(el.getAttribute("class"), "x");
    assert.equal(el.getAttribute("data-id"), "7");
    assert.equal(el.getAttribute("hidden"), null);
    assert.equal(el.getAttribute("disabled"), "");
    assert.equal(el.value, "v");
    assert.equal(el.style.props["--pct"], "40%");
    assert.equal(el.childNodes[0].nodeType, 3, "markup stays text");
    assert.equal(el.textContent, "<img src=x onerror=alert(1)>a1inner");
    el.dispatch("click");
    assert.equal(clicked, 1);
    assert.ok(doc.created.every((n) => n.namespaceURI === XHTML_NS));
  });

  test("markdown renders through h: citations become links with item key and page", () => {
    const doc = fakeDocument();
    const h = createH(doc);
    const [p] = renderMarkdown("lme4 uses **bobyqa** [1, p. 3] <script>x</script>", {
      h,
      citations: [{ n: 1, item_key: "ABCD2345", title: "lme4", page: 3 }],
    });
    const a = p.querySelector("a");
    assert.equal(a.getAttribute("data-item-key"), "ABCD2345");
    assert.equal(a.getAttribute("data-page"), "3");
    assert.match(p.textContent, /<script>x<\/script>/);
  });

  test("icons are SVG elements", () => {
    const doc = fakeDocument();
    for (const name of ICON_NAMES) {
      const svg = icon(doc, name);
      assert.equal(svg.namespaceURI, SVG_NS);
      assert.equal(svg.getAttribute("aria-hidden"), "true");
      assert.ok(svg.childNodes.length >= 1);
    }
  });

  test("Ctrl+Enter (Cmd+Enter on macOS) sends", () => {
    assert.equal(isSendShortcut({ key: "Enter", ctrlKey: true }), true);
    assert.equal(isSendShortcut({ key: "Enter", metaKey: true }), true);
    assert.equal(isSendShortcut({ key: "Enter" }), false);
    assert.equal(isSendShortcut({ key: "a", ctrlKey: true }), false);
    assert.equal(isSendShortcut({ key: "Enter", metaKey: true }, true), true);
    assert.equal(isSendShortcut({ key: "Enter", ctrlKey: true }, true), false);
  });
});

describe("the checkpoint card", () => {
  const checkpoint = {
    interruptId: "interrupt_ext_1",
    invocationId: "e-1",
    message: "limit",
    payload: { ...PAYLOAD, covered_summary: "Fitting lme4 (ABCD2345) p. 3: bobyqa first." },
  };

  test("badge, gaps, covered sources, costs and both choices", () => {
    const doc = fakeDocument();
    const h = createH(doc);
    const calls = [];
    const card = renderCheckpointCard(h, doc, checkpoint, {
      guidance: "draft",
      onGrant: (g) => calls.push(["grant", g]),
      onSynthesize: (g) => calls.push(["synth", g]),
      onDiscard: () => calls.push(["discard"]),
      onOpen: (w) => calls.push(["open", w]),
    });
    assert.equal(card.getAttribute("class"), "hitl-checkpoint-card");
    assert.equal(card.getAttribute("data-interrupt-id"), "interrupt_ext_1");
    assert.equal(card.querySelector(".badge").textContent, "Deep Research: Extension 1 of 2");
    assert.deepEqual(
      card
        .querySelectorAll("li")
        .filter((li) => li.parentNode.getAttribute("class") === "gaps")
        .map((li) => li.textContent),
      PAYLOAD.gaps,
    );
    const grant = card.querySelector('[data-action="extend_budget"]');
    const synth = card.querySelector('[data-action="synthesize"]');
    assert.match(grant.textContent, /Grant Deep Research Extension \(\+5 calls, \+3,750 words\)/);
    assert.match(grant.textContent, /then the answer from up to 20 passages/);
    assert.match(
      synth.textContent,
      /No more searching: answers now from the 6 passages found so far/,
    );
    const link = card.querySelector(".zc-paper-link");
    assert.equal(link.getAttribute("data-item-key"), "ABCD2345");
    link.dispatch("click");
    assert.equal(card.zcGuidance.value, "draft");
    card.zcGuidance.value = "focus on Table 3";
    grant.dispatch("click");
    assert.equal(grant.disabled, true, "both choices lock after one is made");
    assert.equal(synth.disabled, true);
    card.querySelector(".zc-discard").dispatch("click");
    assert.deepEqual(calls, [
      ["open", { itemKey: "ABCD2345", page: 3 }],
      ["grant", "focus on Table 3"],
      ["discard"],
    ]);
  });

  test("with a localization, every string of the card is from the locale's file", () => {
    const doc = fakeDocument();
    const de = localization("de");
    const card = renderCheckpointCard(createH(doc, de), doc, checkpoint, {});
    const text = card.textContent;
    for (const english of [
      "The search paused",
      "Passages found",
      "Guidance for the next pass",
      "Discard this turn",
      "Searches",
      "Words read",
      "No more searching",
    ])
      assert.ok(!text.includes(english), english);
    assert.match(text, /Die Suche hat vor der Antwort angehalten/);
    assert.match(text, /Diese Runde verwerfen/);
    assert.match(
      card.querySelector('[data-action="synthesize"]').textContent,
      /aus den 6 bisher gefundenen Textstellen/,
    );
    assert.equal(
      card.querySelector(".zc-paper-link").getAttribute("title"),
      "S. 3 im Reader öffnen",
    );
  });

  test("no extension left: the grant button is disabled and says so", () => {
    const doc = fakeDocument();
    const card = renderCheckpointCard(createH(doc), doc, {
      ...checkpoint,
      payload: { ...PAYLOAD, extension_number: 3, max_extensions: 2 },
    });
    const grant = card.querySelector('[data-action="extend_budget"]');
    assert.equal(grant.getAttribute("disabled"), "");
    assert.match(grant.textContent, /No extensions left/);
    assert.equal(card.querySelector(".badge").textContent, "Deep Research: no extensions left");
  });
});
