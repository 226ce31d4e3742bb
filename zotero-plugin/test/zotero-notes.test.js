import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseHTML } from "linkedom";
import {
  NoteErrors,
  copyAnswer,
  copyToClipboard,
  groupIDOf,
  saveAnswerNote,
  selectedZoteroCollections,
} from "../src/zotero/notes.js";
import { CITATIONS } from "./fixtures.js";

/**
 * Zotero as far as saving a note touches it, shaped like Zotero 7 to 10's objects
 * (data/item.js, data/dataObjects.js, data/library.js, data/groups.js), recording what is saved.
 *
 * libraries: {libraryID: {type: "user" | "group", groupID?, editable?, name?}}
 * items: [{libraryID, key, type: "regular" | "attachment" | "note", parentKey?, contentType?,
 *          deleted?}]; a regular item's best attachment is its first non-deleted child attachment
 */
function fakeZotero({ libraries = { 1: { type: "user" } }, items = [], major = 10 } = {}) {
  const saved = [];
  const copied = [];
  const byKey = new Map();
  let nextID = 100;
  const make = (spec) => {
    const item = {
      id: nextID++,
      key: spec.key,
      libraryID: spec.libraryID ?? 1,
      deleted: !!spec.deleted,
      attachmentContentType:
        spec.contentType ?? (spec.type === "attachment" ? "application/pdf" : null),
      get parentItem() {
        return spec.parentKey ? byKey.get(`${this.libraryID}/${spec.parentKey}`) : undefined;
      },
      isRegularItem: () => spec.type === "regular",
      isAttachment: () => spec.type === "attachment",
      isNote: () => spec.type === "note",
      isFileAttachment: () => spec.type === "attachment" && spec.linkMode !== "linked_url",
      isPDFAttachment() {
        return this.isFileAttachment() && this.attachmentContentType === "application/pdf";
      },
      async getBestAttachment() {
        if (spec.type !== "regular") {
          // Zotero 10 throws an Error; 7 to 9 a string
          if (major >= 10)
            throw new Error("getBestAttachment() can only be called on regular items.");
          throw "getBestAttachment() can only be called on regular items";
        }
        const children = [...byKey.values()].filter(
          (i) => i.parentItem === this && i.isFileAttachment() && !i.deleted,
        );
        children.sort((a, b) => b.isPDFAttachment() - a.isPDFAttachment());
        return children[0] || false;
      },
    };
    byKey.set(`${item.libraryID}/${item.key}`, item);
    return item;
  };
  items.forEach(make);

  class Item {
    constructor(itemType) {
      this.itemType = itemType;
      this.libraryID = null;
      this.collections = [];
      this.parentKey = false;
      this.id = null;
      this.key = null;
    }
    setNote(html) {
      if (this.itemType !== "note") throw new Error("setNote() on a non-note in this fake");
      this.note = html;
      return true;
    }
    addToCollection(id) {
      if (!Number.isInteger(id)) throw new Error(`Invalid collection '${id}'`);
      this.collections.push(id);
    }
    async saveTx(options = {}) {
      if (this.parentKey) {
        const parent = byKey.get(`${this.libraryID}/${this.parentKey}`);
        if (!parent) throw new Error(`Parent item ${this.libraryID}/${this.parentKey} not found`);
        if (!parent.isRegularItem())
          throw new Error(`Parent item ${parent.key} must be a regular item`);
      }
      this.id = nextID++;
      this.key = `NOTE${String(this.id).padStart(4, "0")}`.slice(0, 8);
      saved.push({ ...this, options });
      return this.id;
    }
  }

  const Zotero = {
    Item,
    Libraries: {
      userLibraryID: 1,
      get: (id) => {
        const lib = libraries[id];
        if (!lib) return false;
        return {
          libraryID: Number(id),
          libraryType: lib.type,
          editable: lib.editable ?? true,
          name: lib.name ?? (lib.type === "user" ? "My Library" : "Group"),
        };
      },
    },
    Groups: {
      getGroupIDFromLibraryID: (id) => {
        const lib = libraries[id];
        if (!lib || lib.type !== "group") throw new Error(`Group with library ID ${id} not found`);
        return lib.groupID;
      },
    },
    Items: {
      getByLibraryAndKeyAsync: async (libraryID, key) => byKey.get(`${libraryID}/${key}`) || false,
    },
    Notes: { AUTO_SYNC_DELAY: 15 },
    Utilities: { Internal: { copyTextToClipboard: (text) => copied.push(text) } },
  };
  return { Zotero, saved, copied, item: (lib, key) => byKey.get(`${lib}/${key}`) };
}

const removed = (name) => () => {
  throw new Error(`ZoteroPane.${name}() was removed`);
};

/** Zotero 10's pane: plural getters; the singular ones throw. */
function pane10({ libraryIDs = [1], collections = [] } = {}) {
  return {
    getSelectedLibraryIDs: () => libraryIDs,
    getSelectedCollections: () => collections,
    getSelectedLibraryID: removed("getSelectedLibraryID"),
    getSelectedCollection: removed("getSelectedCollection"),
  };
}

/** Zotero 7 to 9's pane. */
function pane7({ libraryID = 1, collection = null } = {}) {
  return {
    getSelectedLibraryID: () => libraryID,
    getSelectedCollection: () => collection || false,
  };
}

const LIBRARY = [
  { key: "ABCD2345", type: "regular" },
  { key: "PDF23456", type: "attachment", parentKey: "ABCD2345" },
  { key: "BRMS7890", type: "regular" },
  { key: "SNAP2345", type: "attachment", parentKey: "BRMS7890", contentType: "text/html" },
  { key: "PDFB7890", type: "attachment", parentKey: "BRMS7890" },
];

// brms is cited three times, lme4 twice
const ANSWER =
  "brms compiles a Stan model [2, p. 5]; lme4 does not [1, p. 3].\n\n" +
  "- priors [2, p. 6]\n- sampling [2]\n- optimizers [1, p. 4]";

const hrefs = (html) => {
  const { document } = parseHTML(`<!DOCTYPE html><html><body>${html}</body></html>`);
  return [...document.querySelectorAll("a")].map((a) => [a.textContent, a.getAttribute("href")]);
};

describe("saveAnswerNote", () => {
  test("a child note of the most cited item, its links to each item's PDF at the page", async () => {
    const z = fakeZotero({ items: LIBRARY });
    const result = await saveAnswerNote({
      Zotero: z.Zotero,
      pane: pane10(),
      question: "How do brms and lme4 fit?",
      answer: ANSWER,
      citations: CITATIONS,
    });
    assert.equal(z.saved.length, 1);
    const [note] = z.saved;
    assert.equal(note.itemType, "note");
    assert.equal(note.libraryID, 1);
    assert.equal(note.parentKey, "BRMS7890");
    assert.deepEqual(note.collections, [], "a child note is in no collection");
    assert.deepEqual(note.options, { notifierData: { autoSyncDelay: 15 } });
    assert.deepEqual(result, {
      noteID: note.id,
      noteKey: note.key,
      parentKey: "BRMS7890",
      collectionID: null,
      collectionIDs: [],
    });
    assert.match(note.note, /^<div data-schema-version="9">\n<h1>How do brms and lme4 fit\?<\/h1>/);
    assert.deepEqual(hrefs(note.note), [
      // the PDF, not the older HTML snapshot, and never the regular item's own key
      ["[2, p. 5]", "zotero://open-pdf/library/items/PDFB7890?page=5"],
      ["[1, p. 3]", "zotero://open-pdf/library/items/PDF23456?page=3"],
      ["[2, p. 6]", "zotero://open-pdf/library/items/PDFB7890?page=6"],
      ["[2]", "zotero://open-pdf/library/items/PDFB7890?page=5"],
      ["[1, p. 4]", "zotero://open-pdf/library/items/PDF23456?page=4"],
      [
        "Fitting Linear Mixed-Effects Models Using lme4. Item ABCD2345, p. 3.",
        "zotero://open-pdf/library/items/PDF23456?page=3",
      ],
      [
        "brms: An R Package for Bayesian Multilevel Models. Item BRMS7890, p. 5.",
        "zotero://open-pdf/library/items/PDFB7890?page=5",
      ],
    ]);
  });

  test("a cited attachment: its parent gets the note, the attachment itself is linked", async () => {
    const z = fakeZotero({ items: LIBRARY, major: 7 });
    const result = await saveAnswerNote({
      Zotero: z.Zotero,
      pane: pane7(),
      question: "q",
      answer: "From the PDF [1, p. 2].",
      citations: [{ n: 1, item_key: "PDF23456", title: "Full Text PDF", page: 2 }],
    });
    assert.equal(result.parentKey, "ABCD2345");
    assert.deepEqual(hrefs(z.saved[0].note)[0], [
      "[1, p. 2]",
      "zotero://open-pdf/library/items/PDF23456?page=2",
    ]);
  });

  test("the most cited item is gone: the next one found is the parent", async () => {
    const z = fakeZotero({ items: LIBRARY.filter((i) => !i.key.startsWith("BRMS")) });
    const result = await saveAnswerNote({
      Zotero: z.Zotero,
      pane: pane10(),
      question: "q",
      answer: ANSWER,
      citations: CITATIONS,
    });
    assert.equal(result.parentKey, "ABCD2345");
    const links = hrefs(z.saved[0].note).map(([text]) => text);
    assert.ok(!links.includes("[2, p. 5]"), "an item not found has no link");
    assert.ok(z.saved[0].note.includes("[2, p. 5]"), "its marker stays as text");
  });

  test("an answer without markers: the first of its sources found is the parent", async () => {
    const z = fakeZotero({ items: LIBRARY });
    const result = await saveAnswerNote({
      Zotero: z.Zotero,
      pane: pane10(),
      question: "q",
      answer: "Both packages fit mixed models.",
      citations: [CITATIONS[1], CITATIONS[0]],
    });
    assert.equal(result.parentKey, "ABCD2345", "sources in order of n");
  });

  test("nothing resolves: a standalone note in the current collection (Zotero 7 to 9)", async () => {
    const z = fakeZotero({ items: [] });
    const collection = { id: 7, key: "COLL2345", name: "Mixed", libraryID: 1 };
    const result = await saveAnswerNote({
      Zotero: z.Zotero,
      pane: pane7({ collection }),
      question: "q",
      answer: ANSWER,
      citations: CITATIONS,
    });
    const [note] = z.saved;
    assert.equal(note.parentKey, false);
    assert.equal(note.libraryID, 1);
    assert.deepEqual(note.collections, [7]);
    assert.equal(result.parentKey, null);
    assert.equal(result.collectionID, 7);
    assert.deepEqual(hrefs(note.note), [], "no attachment, no links");
  });

  test("Zotero 10: every selected collection of the library, the removed getters untouched", async () => {
    const z = fakeZotero({ items: [{ key: "NOTE2345", type: "note" }] });
    const result = await saveAnswerNote({
      Zotero: z.Zotero,
      pane: pane10({
        collections: [
          { id: 7, libraryID: 1 },
          { id: 8, libraryID: 1 },
        ],
      }),
      question: "q",
      answer: "A note is cited [1].",
      citations: [{ n: 1, item_key: "NOTE2345", title: "a note", page: null }],
    });
    assert.deepEqual(z.saved[0].collections, [7, 8]);
    assert.deepEqual(result.collectionIDs, [7, 8]);
    assert.equal(result.parentKey, null, "a note cannot be a parent");
  });

  test("the library root: a standalone note in no collection", async () => {
    const z = fakeZotero();
    const result = await saveAnswerNote({
      Zotero: z.Zotero,
      pane: pane10(),
      question: "q",
      answer: "No citations.",
    });
    assert.equal(result.collectionID, null);
    assert.deepEqual(z.saved[0].collections, []);
  });

  test("a group library: the note lives there, links name the group's id", async () => {
    const z = fakeZotero({
      libraries: { 1: { type: "user" }, 5: { type: "group", groupID: 4242 } },
      items: LIBRARY.map((i) => ({ ...i, libraryID: 5 })),
    });
    assert.equal(groupIDOf(z.Zotero, 5), 4242);
    assert.equal(groupIDOf(z.Zotero, 1), null);
    const result = await saveAnswerNote({
      Zotero: z.Zotero,
      pane: pane10({ libraryIDs: [5] }),
      question: "q",
      answer: ANSWER,
      citations: CITATIONS,
    });
    assert.equal(z.saved[0].libraryID, 5);
    assert.equal(result.parentKey, "BRMS7890");
    assert.deepEqual(hrefs(z.saved[0].note).slice(0, 2), [
      ["[2, p. 5]", "zotero://open-pdf/groups/4242/items/PDFB7890?page=5"],
      ["[1, p. 3]", "zotero://open-pdf/groups/4242/items/PDF23456?page=3"],
    ]);
  });

  test("an item not in the selected group is looked up in the user's library", async () => {
    const z = fakeZotero({
      libraries: { 1: { type: "user" }, 5: { type: "group", groupID: 4242 } },
      items: LIBRARY,
    });
    const result = await saveAnswerNote({
      Zotero: z.Zotero,
      pane: pane7({ libraryID: 5 }),
      question: "q",
      answer: ANSWER,
      citations: CITATIONS,
    });
    assert.equal(z.saved[0].libraryID, 1, "a child note lives in its parent's library");
    assert.equal(result.parentKey, "BRMS7890");
    assert.equal(hrefs(z.saved[0].note)[0][1], "zotero://open-pdf/library/items/PDFB7890?page=5");
  });

  test("items in the trash are not cited; a non-PDF attachment is linked without a page", async () => {
    const z = fakeZotero({
      items: [
        { key: "ABCD2345", type: "regular", deleted: true },
        { key: "PDF23456", type: "attachment", parentKey: "ABCD2345" },
        { key: "BRMS7890", type: "regular" },
        {
          key: "EPUB7890",
          type: "attachment",
          parentKey: "BRMS7890",
          contentType: "application/epub+zip",
        },
      ],
    });
    const result = await saveAnswerNote({
      Zotero: z.Zotero,
      pane: pane10(),
      question: "q",
      answer: "lme4 [1, p. 3] [1, p. 4] and brms [2, p. 5].",
      citations: CITATIONS,
    });
    assert.equal(result.parentKey, "BRMS7890");
    assert.deepEqual(hrefs(z.saved[0].note).slice(0, 1), [
      ["[2, p. 5]", "zotero://open-pdf/library/items/EPUB7890"],
    ]);
  });

  test("a citation's attachment_key: the link opens the PDF the quote came from", async () => {
    // brms has two PDFs: the paper (its best attachment) and a supplement the quotes of [2]
    // were read from; [3] names a PDF of another item, [4] one in the trash: best attachment.
    const items = (libraryID) =>
      [
        ...LIBRARY,
        { key: "SUPP7890", type: "attachment", parentKey: "BRMS7890" },
        { key: "GONE7890", type: "attachment", parentKey: "BRMS7890", deleted: true },
      ].map((i) => ({ ...i, libraryID }));
    const citations = [
      { n: 1, item_key: "ABCD2345", title: "lme4", page: 3 },
      { n: 2, item_key: "BRMS7890", attachment_key: "SUPP7890", title: "brms", page: 2 },
      { n: 2, item_key: "BRMS7890", attachment_key: "SUPP7890", title: "brms", page: 4 },
      { n: 3, item_key: "BRMS7890", attachment_key: "PDF23456", title: "brms", page: 9 },
      { n: 4, item_key: "BRMS7890", attachment_key: "GONE7890", title: "brms", page: 7 },
    ];
    const answer =
      "In the supplement [2, p. 2] and [2, p. 4]; lme4 [1, p. 3]; [3, p. 9]; [4, p. 7].";
    for (const [libraries, libraryID, prefix] of [
      [{ 1: { type: "user" } }, 1, "zotero://open-pdf/library/items/"],
      [
        { 1: { type: "user" }, 5: { type: "group", groupID: 4242 } },
        5,
        "zotero://open-pdf/groups/4242/items/",
      ],
    ]) {
      const z = fakeZotero({ libraries, items: items(libraryID) });
      const pane = pane10({ libraryIDs: [libraryID] });
      await saveAnswerNote({ Zotero: z.Zotero, pane, question: "q", answer, citations });
      const links = hrefs(z.saved[0].note);
      assert.deepEqual(links.slice(0, 5), [
        ["[2, p. 2]", `${prefix}SUPP7890?page=2`],
        ["[2, p. 4]", `${prefix}SUPP7890?page=4`],
        ["[1, p. 3]", `${prefix}PDF23456?page=3`],
        ["[3, p. 9]", `${prefix}PDFB7890?page=9`],
        ["[4, p. 7]", `${prefix}PDFB7890?page=7`],
      ]);
      // the Sources list links the same PDFs
      assert.deepEqual(
        links.slice(5).map(([, href]) => href),
        [
          `${prefix}PDF23456?page=3`,
          `${prefix}SUPP7890?page=2`,
          `${prefix}PDFB7890?page=9`,
          `${prefix}PDFB7890?page=7`,
        ],
      );
      // and so does "copy with citations" as Markdown
      const copied = await copyAnswer({
        Zotero: z.Zotero,
        pane,
        answer,
        citations,
        as: "markdown",
      });
      assert.ok(copied.text.includes(`(${prefix}SUPP7890?page=2)`), copied.text);
    }
  });

  test("an attachment_key without a best attachment still links; a cited attachment ignores it", async () => {
    const z = fakeZotero({
      items: [
        { key: "ABCD2345", type: "regular" },
        { key: "SUPP2345", type: "attachment", parentKey: "ABCD2345", linkMode: "linked_url" },
        { key: "PDF23456", type: "attachment", parentKey: "ABCD2345" },
      ],
    });
    await saveAnswerNote({
      Zotero: z.Zotero,
      pane: pane10(),
      question: "q",
      answer: "A [1, p. 2], a web link [2, p. 3], the PDF itself [3, p. 4].",
      citations: [
        { n: 1, item_key: "ABCD2345", attachment_key: "PDF23456", page: 2 },
        { n: 2, item_key: "ABCD2345", attachment_key: "SUPP2345", page: 3 },
        { n: 3, item_key: "PDF23456", attachment_key: "SUPP2345", page: 4 },
      ],
    });
    assert.deepEqual(hrefs(z.saved[0].note).slice(0, 3), [
      ["[1, p. 2]", "zotero://open-pdf/library/items/PDF23456?page=2"],
      ["[2, p. 3]", "zotero://open-pdf/library/items/PDF23456?page=3"],
      ["[3, p. 4]", "zotero://open-pdf/library/items/PDF23456?page=4"],
    ]);
  });

  test("a read-only library: an error with a code, nothing saved", async () => {
    const z = fakeZotero({
      libraries: {
        1: { type: "user" },
        5: { type: "group", groupID: 9, editable: false, name: "Lab" },
      },
    });
    await assert.rejects(
      saveAnswerNote({
        Zotero: z.Zotero,
        pane: pane10({ libraryIDs: [5] }),
        question: "q",
        answer: "a",
      }),
      (e) => e.code === NoteErrors.READ_ONLY && /Lab/.test(e.message),
    );
    assert.equal(z.saved.length, 0);
  });
});

describe("selectedZoteroCollections", () => {
  test("Zotero 10's plural getter, 7 to 9's singular one, no pane", () => {
    assert.deepEqual(selectedZoteroCollections(pane10({ collections: [{ id: 1 }, { id: 2 }] })), [
      { id: 1 },
      { id: 2 },
    ]);
    assert.deepEqual(selectedZoteroCollections(pane7({ collection: { id: 3 } })), [{ id: 3 }]);
    assert.deepEqual(selectedZoteroCollections(pane7()), []);
    assert.deepEqual(selectedZoteroCollections(null), []);
  });
});

/** Gecko's clipboard classes as fileInterface.js uses them, recording the transferable. */
function fakeComponents() {
  const written = [];
  const interfaces = {
    nsITransferable: "nsITransferable",
    nsIClipboard: { kGlobalClipboard: 1 },
    nsISupportsString: "nsISupportsString",
  };
  const classes = {
    "@mozilla.org/widget/transferable;1": {
      createInstance: () => {
        const flavors = {};
        return {
          flavors,
          addDataFlavor: (f) => (flavors[f] = null),
          setTransferData: (f, str) => {
            if (!(f in flavors)) throw new Error(`flavor ${f} not added`);
            flavors[f] = str.data;
          },
        };
      },
    },
    "@mozilla.org/widget/clipboard;1": {
      getService: () => ({
        setData: (transferable, owner, which) =>
          written.push({ flavors: transferable.flavors, which }),
      }),
    },
    "@mozilla.org/supports-string;1": { createInstance: () => ({ data: "" }) },
  };
  return { components: { classes, interfaces }, written };
}

describe("copying", () => {
  test("text through Zotero's helper; text and HTML through a transferable", () => {
    const z = fakeZotero();
    assert.equal(copyToClipboard(z.Zotero, "plain", { components: null }), "text");
    assert.deepEqual(z.copied, ["plain"]);

    const c = fakeComponents();
    assert.equal(
      copyToClipboard(z.Zotero, "plain", { html: "<p>rich</p>", components: c.components }),
      "text+html",
    );
    assert.deepEqual(c.written, [
      { flavors: { "text/plain": "plain", "text/html": "<p>rich</p>" }, which: 1 },
    ]);
    assert.deepEqual(z.copied, ["plain"], "the helper is not used then");
  });

  test("copy with citations: plain text plus the linked HTML; Markdown as text only", async () => {
    const z = fakeZotero({ items: LIBRARY });
    const c = fakeComponents();
    const asText = await copyAnswer({
      Zotero: z.Zotero,
      pane: pane10(),
      question: "q",
      answer: ANSWER,
      citations: CITATIONS,
      components: c.components,
    });
    assert.equal(asText.written, "text+html");
    assert.ok(asText.text.startsWith("q\n\nbrms compiles a Stan model [2, p. 5]"));
    assert.equal(c.written[0].flavors["text/plain"], asText.text);
    assert.equal(
      hrefs(c.written[0].flavors["text/html"])[0][1],
      "zotero://open-pdf/library/items/PDFB7890?page=5",
    );

    const asMarkdown = await copyAnswer({
      Zotero: z.Zotero,
      pane: pane10(),
      question: "q",
      answer: ANSWER,
      citations: CITATIONS,
      as: "markdown",
      components: c.components,
    });
    assert.equal(asMarkdown.written, "text");
    assert.deepEqual(z.copied, [asMarkdown.text]);
    assert.ok(
      asMarkdown.text.includes(
        "- [2] [brms: An R Package for Bayesian Multilevel Models. Item BRMS7890, p. 5.](zotero://open-pdf/library/items/PDFB7890?page=5)",
      ),
    );
  });
});
