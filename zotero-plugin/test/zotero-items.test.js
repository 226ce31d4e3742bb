import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { scopeFromSelection, chatFields } from "../src/scope.js";
import {
  describeItem,
  findInReader,
  openCitation,
  selectedCollection,
  selectedLibraryIDs,
  selectionFromPane,
} from "../src/zotero/items.js";

function item({ id, key, title, type = "regular", parent = null, best = null, libraryID = 1 }) {
  return {
    id,
    key,
    libraryID,
    parentItem: parent,
    getDisplayTitle: () => title,
    isRegularItem: () => type === "regular",
    isAttachment: () => type === "attachment",
    getBestAttachment: async () => best,
  };
}

const pdf = item({ id: 11, key: "PDF23456", title: "Full Text PDF", type: "attachment" });
const lme4 = item({ id: 10, key: "ABCD2345", title: "lme4", best: pdf });
pdf.parentItem = lme4;
const noFile = item({ id: 20, key: "NOFI2345", title: "No file" });
// A second PDF under lme4 (a supplement): citations of it open it, not the best attachment.
const supplement = item({ id: 12, key: "SUPP2345", title: "Supplement", type: "attachment" });
supplement.parentItem = lme4;
const elsewhere = item({ id: 41, key: "ELSE2345", title: "Other", type: "attachment" });
elsewhere.parentItem = noFile;

function fakes({ collections } = {}) {
  const opened = [];
  const selected = [];
  const byKey = {
    "1/ABCD2345": lme4,
    "1/PDF23456": pdf,
    "1/NOFI2345": noFile,
    "1/SUPP2345": supplement,
    "1/ELSE2345": elsewhere,
    "2/GRUP2345": item({ id: 30, key: "GRUP2345", title: "group", best: null }),
  };
  const Zotero = {
    Libraries: { userLibraryID: 1 },
    Items: { getByLibraryAndKey: (lib, key) => byKey[`${lib}/${key}`] || false },
    Reader: { open: async (id, location) => opened.push([id, location]) },
  };
  const pane = {
    getSelectedItems: () => [pdf, noFile],
    getSelectedLibraryID: () => 2,
    selectItem: async (id) => selected.push(id),
  };
  if (collections === "plural")
    pane.getSelectedCollections = () => [{ key: "COLL2345", name: "Mixed" }];
  else if (collections === "none") pane.getSelectedCollection = () => null;
  else pane.getSelectedCollection = () => ({ key: "COLL2345", name: "Mixed" });
  return { Zotero, pane, opened, selected };
}

describe("Zotero glue", () => {
  test("the pane's selection becomes the scope chooser's data", () => {
    const { pane } = fakes();
    assert.deepEqual(describeItem(pdf), {
      key: "PDF23456",
      title: "Full Text PDF",
      parentKey: "ABCD2345",
      parentTitle: "lme4",
    });
    const scope = scopeFromSelection(null, selectionFromPane(pane));
    assert.deepEqual(chatFields(scope).active_items, [
      { item_key: "ABCD2345", title: "lme4" },
      { item_key: "NOFI2345", title: "No file" },
    ]);
    assert.deepEqual(scope.collection, { key: "COLL2345", name: "Mixed" });
  });

  test("Zotero 10's selected libraries; the removed singular getter is never called", async () => {
    const f = fakes();
    f.pane.getSelectedLibraryIDs = () => [2];
    f.pane.getSelectedLibraryID = () => {
      throw new Error(
        "ZoteroPane.getSelectedLibraryID() was removed -- use ZoteroPane.getSelectedLibraryIDs()",
      );
    };
    assert.deepEqual(selectedLibraryIDs(f.pane), [2]);
    assert.equal(
      await openCitation({ ...f, itemKey: "GRUP2345", page: 1 }),
      "selected",
      "found in the selected group library",
    );
    assert.deepEqual(
      selectedLibraryIDs({ getSelectedLibraryID: () => false }),
      [],
      "Zotero 7 to 9 with nothing selected",
    );
  });

  test("the collection getter of Zotero 7 to 9 and of Zotero 10", () => {
    assert.deepEqual(selectedCollection(fakes({ collections: "plural" }).pane), {
      key: "COLL2345",
      name: "Mixed",
    });
    assert.equal(selectedCollection(fakes({ collections: "none" }).pane), null);
  });

  test("several collections (Zotero 10): named together, their papers and sub-collections'", () => {
    const paper = (key, title, type = "regular") => ({
      key,
      getDisplayTitle: () => title,
      isNote: () => type === "note",
    });
    const collection = (key, name, items, children = []) => ({
      key,
      name,
      getChildItems: (asIDs) => (asIDs ? assert.fail("ids asked for") : items),
      getChildCollections: () => children,
    });
    const shared = paper("SHAR2345", "In both");
    const sub = collection("SUBC2345", "Bayesian", [paper("BRMS2345", "brms"), shared]);
    const mixed = collection(
      "MIXD2345",
      "Mixed models",
      [paper("LME42345", "lme4"), shared],
      [sub],
    );
    const econ = collection("ECON2345", "Econometrics", [
      paper("SAND2345", "sandwich"),
      paper("NOTE2345", "a standalone note", "note"),
    ]);
    const pane = { getSelectedCollections: () => [mixed, econ] };
    assert.deepEqual(selectedCollection(pane), {
      key: "MIXD2345",
      name: "Mixed models, Econometrics",
      keys: ["MIXD2345", "ECON2345"],
      items: [
        { key: "LME42345", title: "lme4", parentKey: undefined, parentTitle: undefined },
        { key: "SHAR2345", title: "In both", parentKey: undefined, parentTitle: undefined },
        { key: "BRMS2345", title: "brms", parentKey: undefined, parentTitle: undefined },
        { key: "SAND2345", title: "sandwich", parentKey: undefined, parentTitle: undefined },
      ],
    });
    // several collections without a paper are nothing to ask about
    const empty = collection("EMPT2345", "Empty", []);
    assert.equal(
      selectedCollection({ getSelectedCollections: () => [empty, sub] }).items.length,
      2,
    );
    assert.equal(
      selectedCollection({
        getSelectedCollections: () => [empty, collection("NONE2345", "None", [])],
      }),
      null,
    );
  });

  test("what the user wrote opens itself: the annotation in its PDF, the note selected", async () => {
    const f = fakes();
    const note = item({ id: 50, key: "NOTE2345", title: "Reading notes", type: "note" });
    const byKey = f.Zotero.Items.getByLibraryAndKey;
    f.Zotero.Items.getByLibraryAndKey = (lib, key) =>
      lib === 1 && key === "NOTE2345" ? note : byKey(lib, key);
    const highlight = { itemKey: "ABCD2345", attachmentKey: "SUPP2345", page: 24 };
    assert.equal(
      await openCitation({ ...f, ...highlight, origin: "highlight", sourceKey: "ANNO2345" }),
      "annotation",
    );
    assert.deepEqual(f.opened, [[12, { annotationID: "ANNO2345", pageIndex: 23 }]]);
    assert.equal(
      await openCitation({
        ...f,
        itemKey: "ABCD2345",
        page: null,
        origin: "note",
        sourceKey: "NOTE2345",
      }),
      "note",
    );
    assert.deepEqual(f.selected, [50]);
    // A note deleted since: its item is selected instead, as any citation without a page.
    assert.equal(
      await openCitation({
        ...f,
        itemKey: "NOFI2345",
        page: null,
        origin: "note",
        sourceKey: "GONE2345",
      }),
      "selected",
    );
  });

  test("a citation opens the best attachment at the page (0-based pageIndex)", async () => {
    const f = fakes();
    assert.equal(await openCitation({ ...f, itemKey: "ABCD2345", page: 3 }), "opened");
    assert.equal(await openCitation({ ...f, itemKey: "PDF23456", page: null }), "opened");
    assert.deepEqual(f.opened, [
      [11, { pageIndex: 2 }],
      [11, undefined],
    ]);
  });

  test("a citation with a quote opens the page and finds the quote's first words", async () => {
    // zotero/reader's Reader as Zotero's ReaderInstance proxies it: toggleFindPopup, and the
    // find state that _handleFindStateChange stores (src/common/reader.js).
    const internal = {
      _state: {
        primaryViewFindState: {
          popupOpen: false,
          active: false,
          query: "",
          highlightAll: true,
          caseSensitive: false,
          entireWord: false,
          index: null,
          result: null,
        },
      },
      _handleFindStateChange(primary, params) {
        assert.equal(primary, true);
        this._state = { ...this._state, primaryViewFindState: params };
      },
    };
    const reader = {
      _internalReader: internal,
      _initPromise: Promise.resolve(),
      toggleFindPopup({ primary, open }) {
        assert.equal(primary, true);
        internal._state.primaryViewFindState = {
          ...internal._state.primaryViewFindState,
          popupOpen: open,
        };
      },
    };
    const f = fakes();
    f.Zotero.Reader.open = async (id, location) => {
      f.opened.push([id, location]);
      return reader;
    };
    const quote =
      "For non-seasonal data, we consider ARIMA(p, d, q) models where d is selected by KPSS tests.";
    assert.equal(await openCitation({ ...f, itemKey: "ABCD2345", page: 10, quote }), "found");
    assert.deepEqual(f.opened, [[11, { pageIndex: 9 }]]);
    const state = internal._state.primaryViewFindState;
    assert.equal(state.query, "For non-seasonal data, we consider ARIMA");
    assert.equal(state.active && state.popupOpen && state.highlightAll, true);
    // A reader without a find bar (or none returned: an unloaded tab was selected) just opens.
    assert.equal(await findInReader({}, "x"), false);
    assert.equal(await findInReader(undefined, "x"), false);
    assert.equal(await openCitation({ ...fakes(), itemKey: "ABCD2345", page: 2, quote }), "opened");
  });

  test("an item without a file is selected; an unknown key is reported", async () => {
    const f = fakes();
    assert.equal(await openCitation({ ...f, itemKey: "NOFI2345", page: 1 }), "selected");
    assert.deepEqual(f.selected, [20]);
    assert.equal(
      await openCitation({ ...f, itemKey: "GRUP2345", page: 1 }),
      "selected",
      "found in the selected group library",
    );
    assert.equal(await openCitation({ ...f, itemKey: "MISS2345", page: 1 }), "missing");
  });

  test("a citation opens the PDF its evidence came from, when it is still the item's", async () => {
    const f = fakes();
    const open = (attachmentKey) =>
      openCitation({ ...f, itemKey: "ABCD2345", attachmentKey, page: 2 });
    assert.equal(await open("SUPP2345"), "opened");
    assert.equal(await open("ELSE2345"), "opened"); // another item's PDF: the best one instead
    assert.equal(await open("GONE2345"), "opened"); // deleted since: the best one
    assert.equal(await open(""), "opened");
    assert.deepEqual(
      f.opened.map(([id]) => id),
      [12, 11, 11, 11],
    );
  });
});
