import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  addSnippet,
  availableModes,
  canAddSnippet,
  chatBody,
  chatFields,
  clearSnippets,
  contextFromScope,
  createScope,
  itemsFromSelection,
  LIMITS,
  removeSnippet,
  scopeFromContext,
  scopeFromSelection,
  scopeLabel,
  setMode,
  snippetFromSelection,
} from "../src/scope.js";
import { SESSION_ID } from "./fixtures.js";

const lme4 = { key: "ABCD2345", title: "Fitting Linear Mixed-Effects Models Using lme4" };
const brms = { key: "BRMS7890", title: "brms" };
const pdfOfLme4 = {
  key: "PDF23456",
  title: "Full Text PDF",
  parentKey: "ABCD2345",
  parentTitle: lme4.title,
};
const collection = { key: "COLL2345", name: "Mixed models" };

describe("scope chooser", () => {
  test("selected items: attachments count as their parent, duplicates and bad keys go", () => {
    assert.deepEqual(
      itemsFromSelection([
        lme4,
        pdfOfLme4,
        brms,
        { key: "bad" },
        null,
        { key: "NOTE2345", parentKey: "BRMS7890" },
      ]),
      [
        { item_key: "ABCD2345", title: lme4.title },
        { item_key: "BRMS7890", title: "brms" },
      ],
    );
  });

  test("the default is the narrowest scope available", () => {
    assert.equal(scopeFromSelection(null, { selectedItems: [lme4], collection }).mode, "items");
    assert.equal(scopeFromSelection(null, { selectedItems: [], collection }).mode, "collection");
    assert.equal(scopeFromSelection(null, {}).mode, "library");
  });

  test("the user's mode is kept when the selection changes, if still possible", () => {
    let scope = scopeFromSelection(null, { selectedItems: [lme4], collection });
    scope = setMode(scope, "library");
    scope = scopeFromSelection(scope, { selectedItems: [brms], collection });
    assert.equal(scope.mode, "library");
    scope = setMode(scope, "collection");
    scope = scopeFromSelection(scope, { selectedItems: [brms], collection: null });
    assert.equal(scope.mode, "items", "the collection went away: fall back");
    assert.deepEqual(availableModes(scope), ["items", "library"]);
    assert.equal(
      setMode(createScope(), "items").mode,
      "library",
      "no items: items mode is not possible",
    );
  });

  test("the /chat body for each mode", () => {
    const base = scopeFromSelection(null, { selectedItems: [lme4, brms], collection });
    assert.deepEqual(chatBody({ sessionId: SESSION_ID, prompt: "  Why bobyqa?  ", scope: base }), {
      session_id: SESSION_ID,
      prompt: "Why bobyqa?",
      mode: "items",
      active_items: [
        { item_key: "ABCD2345", title: lme4.title },
        { item_key: "BRMS7890", title: "brms" },
      ],
      collection_key: null,
      collection_name: "",
      snippets: [],
    });
    assert.deepEqual(chatFields(setMode(base, "collection")), {
      mode: "collection",
      active_items: null,
      collection_key: "COLL2345",
      collection_name: "Mixed models",
      snippets: [],
    });
    assert.deepEqual(chatFields(setMode(base, "library")), {
      mode: "library",
      active_items: null,
      collection_key: null,
      collection_name: "",
      snippets: [],
    });
    assert.deepEqual(Object.keys(chatBody({ sessionId: "s", prompt: "q", scope: null })).sort(), [
      "active_items",
      "collection_key",
      "collection_name",
      "mode",
      "prompt",
      "session_id",
      "snippets",
    ]);
  });

  test("several collections (Zotero 10) are asked about through their papers", () => {
    const several = {
      key: "COLL2345",
      name: "Mixed models, Econometrics",
      keys: ["COLL2345", "ECON2345", "bad"],
      items: [
        { key: "ABCD2345", title: lme4.title },
        { key: "SAND2345", title: "sandwich" },
        { key: "ABCD2345", title: lme4.title },
      ],
    };
    const scope = setMode(scopeFromSelection(null, { collection: several }), "collection");
    assert.equal(scope.mode, "collection");
    assert.deepEqual(scope.collection.keys, ["COLL2345", "ECON2345"]);
    assert.deepEqual(chatFields(scope), {
      mode: "items",
      active_items: [
        { item_key: "ABCD2345", title: lme4.title },
        { item_key: "SAND2345", title: "sandwich" },
      ],
      collection_key: null,
      collection_name: "",
      snippets: [],
    });
    // one collection is still sent as a collection
    const one = setMode(scopeFromSelection(null, { collection }), "collection");
    assert.equal(chatFields(one).collection_key, "COLL2345");
  });

  test("prompts are checked", () => {
    assert.throws(() => chatBody({ sessionId: "s", prompt: "   ", scope: createScope() }), /empty/);
    assert.throws(
      () => chatBody({ sessionId: "s", prompt: "x".repeat(LIMITS.prompt + 1) }),
      /at most 20000/,
    );
    assert.throws(() => chatBody({ prompt: "q" }), TypeError);
  });

  test("labels", () => {
    const scope = scopeFromSelection(null, { selectedItems: [lme4, brms], collection });
    assert.equal(scopeLabel(scope), "2 papers");
    assert.equal(scopeLabel(scopeFromSelection(null, { selectedItems: [brms] })), "brms");
    assert.equal(scopeLabel(setMode(scope, "collection")), "Collection: Mixed models");
    assert.equal(scopeLabel(setMode(scope, "library")), "Whole library");
  });
});

describe("snippets from the reader", () => {
  const selection = {
    text: "  bobyqa is\n the   default ",
    pageIndex: 2,
    itemKey: "ABCD2345",
    title: "lme4",
  };

  test("a reader selection becomes a snippet with a 1-based page", () => {
    assert.deepEqual(snippetFromSelection(selection), {
      text: "bobyqa is the default",
      item_key: "ABCD2345",
      page: 3,
      title: "lme4",
    });
    assert.equal(snippetFromSelection({ text: "  " }), null);
    assert.deepEqual(snippetFromSelection({ text: "x", pageIndex: undefined, itemKey: "nope" }), {
      text: "x",
      item_key: "",
      page: null,
      title: "",
    });
    assert.equal(snippetFromSelection({ text: "y".repeat(9000) }).text.length, LIMITS.snippetChars);
  });

  test("pinning: no duplicates, at most 10, remove and clear", () => {
    let scope = createScope();
    scope = addSnippet(scope, snippetFromSelection(selection));
    scope = addSnippet(scope, snippetFromSelection(selection));
    assert.equal(scope.snippets.length, 1);
    for (let i = 0; i < 20; i++) scope = addSnippet(scope, { text: `s${i}` });
    assert.equal(scope.snippets.length, 10);
    assert.equal(canAddSnippet(scope), false);
    scope = removeSnippet(scope, 0);
    assert.equal(scope.snippets[0].text, "s0");
    assert.equal(clearSnippets(scope).snippets.length, 0);
    assert.deepEqual(chatFields(scope).snippets[0], {
      text: "s0",
      item_key: "",
      page: null,
      title: "",
    });
  });

  test("snippets survive a selection change", () => {
    let scope = addSnippet(createScope(), snippetFromSelection(selection));
    scope = scopeFromSelection(scope, { selectedItems: [brms] });
    assert.equal(scope.snippets.length, 1);
  });
});

describe("restoring scope on rewind / edit", () => {
  test("items and snippets from a user message's context", () => {
    const scope = scopeFromContext({
      active_context_items: [{ item_key: "ABCD2345", title: "lme4" }],
      active_collection: null,
      snippets: [{ text: "bobyqa is the default", item_key: "ABCD2345", page: 3, title: "lme4" }],
    });
    assert.equal(scope.mode, "items");
    assert.deepEqual(chatFields(scope), {
      mode: "items",
      active_items: [{ item_key: "ABCD2345", title: "lme4" }],
      collection_key: null,
      collection_name: "",
      snippets: [{ text: "bobyqa is the default", item_key: "ABCD2345", page: 3, title: "lme4" }],
    });
  });

  test("a mode whose papers are missing asks about the library, as the chooser shows it", () => {
    const empty = setMode(
      scopeFromSelection(null, { selectedItems: [], collection: null }),
      "items",
    );
    assert.equal(chatFields(empty).mode, "library");
    assert.equal(chatFields(empty).active_items, null);
  });

  test("a collection, or the whole library", () => {
    const inCollection = scopeFromContext({
      active_context_items: null,
      active_collection: { key: "COLL2345", name: "Mixed" },
      snippets: [],
    });
    assert.equal(inCollection.mode, "collection");
    assert.equal(chatFields(inCollection).collection_key, "COLL2345");
    assert.equal(scopeFromContext({}).mode, "library");
    assert.equal(scopeFromContext(null).mode, "library");
    assert.equal(
      scopeFromContext({ active_mode: "library", active_context_items: [{ item_key: "ABCD2345" }] })
        .mode,
      "library",
    );
  });

  test("contextFromScope and scopeFromContext round-trip", () => {
    const scope = addSnippet(scopeFromSelection(null, { selectedItems: [lme4] }), {
      text: "q",
      item_key: "ABCD2345",
      page: 4,
    });
    const again = scopeFromContext(contextFromScope(scope));
    assert.deepEqual(chatFields(again), chatFields(scope));
    const coll = setMode(
      scopeFromSelection(null, { selectedItems: [lme4], collection }),
      "collection",
    );
    assert.deepEqual(chatFields(scopeFromContext(contextFromScope(coll))), chatFields(coll));
  });
});
