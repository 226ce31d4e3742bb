/**
 * Image annotations as image snippets (src/zotero/annotations.js), through the Zotero APIs the
 * module names: the context menu's ids, Zotero.Items, Zotero.Annotations' cache image,
 * Zotero.PDFWorker when the image is not drawn yet, IOUtils.read.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { bytesToBase64, IMAGE_LIMITS } from "../src/images.js";
import { imageAnnotationKeys, imageSnippetOf } from "../src/zotero/annotations.js";
import { PNG_BASE64 } from "./fixtures.js";

const PNG = new Uint8Array(Buffer.from(PNG_BASE64, "base64"));

function fakeZotero({ cached = true, bytes = PNG } = {}) {
  const calls = [];
  const paper = { key: "ABCD2345", getDisplayTitle: () => "lme4" };
  const attachment = { id: 12, key: "ATTA2345", libraryID: 1, parentItem: paper };
  const annotations = {
    ANNO2345: {
      key: "ANNO2345",
      libraryID: 1,
      parentID: 12,
      parentItem: attachment,
      annotationType: "image",
      annotationComment: "  Figure 2: profile zeta ",
      annotationPageLabel: "122",
      annotationPosition: JSON.stringify({ pageIndex: 3, rects: [[0, 0, 10, 10]] }),
    },
    HIGH2345: { key: "HIGH2345", libraryID: 1, annotationType: "highlight" },
  };
  const files = new Map();
  if (cached) files.set("/Zotero/cache/library/ANNO2345.png", bytes);
  const Zotero = {
    Items: {
      getByLibraryAndKey: (libraryID, key) => (libraryID === 1 && annotations[key]) || false,
    },
    Annotations: {
      getCacheImagePath: ({ key }) => `/Zotero/cache/library/${key}.png`,
      hasCacheImage: async (item) => files.has(`/Zotero/cache/library/${item.key}.png`),
    },
    PDFWorker: {
      renderAttachmentAnnotations: async (itemID) => {
        calls.push(["renderAttachmentAnnotations", itemID]);
        files.set("/Zotero/cache/library/ANNO2345.png", bytes);
        return 1;
      },
    },
  };
  const IOUtils = {
    read: async (path) => {
      calls.push(["read", path]);
      if (!files.has(path)) throw new Error(`NotFoundError: ${path}`);
      return files.get(path);
    },
  };
  return { Zotero, IOUtils, calls, reader: { _item: attachment } };
}

describe("image annotations", () => {
  test("only the image annotations of a menu's selection count", () => {
    const { Zotero, reader } = fakeZotero();
    assert.deepEqual(imageAnnotationKeys(Zotero, reader, ["HIGH2345", "ANNO2345", "GONE2345"]), [
      { libraryID: 1, key: "ANNO2345" },
    ]);
    assert.deepEqual(imageAnnotationKeys(Zotero, reader, []), []);
    assert.deepEqual(imageAnnotationKeys(Zotero, {}, ["ANNO2345"]), []);
  });

  test("the cached image becomes a snippet of the paper, at the annotation's page", async () => {
    const z = fakeZotero();
    const snippet = await imageSnippetOf(z, { libraryID: 1, key: "ANNO2345" });
    assert.deepEqual(snippet, {
      kind: "image",
      text: "Figure 2: profile zeta",
      item_key: "ABCD2345",
      page: 4,
      title: "lme4",
      image: { mime_type: "image/png", data: PNG_BASE64 },
      annotation_key: "ANNO2345",
    });
    assert.ok(!z.calls.some((c) => c[0] === "renderAttachmentAnnotations"));
  });

  test("an image Zotero has not drawn yet is drawn first, as Zotero does for notes", async () => {
    const z = fakeZotero({ cached: false });
    const snippet = await imageSnippetOf(z, { libraryID: 1, key: "ANNO2345" });
    assert.equal(snippet.image.data, PNG_BASE64);
    assert.deepEqual(z.calls[0], ["renderAttachmentAnnotations", 12]);
  });

  test("a failure says why: not an image annotation, no image, too large to shrink", async () => {
    const z = fakeZotero();
    const reason = (p) =>
      p.then(
        () => "ok",
        (err) => err.reason,
      );
    assert.equal(await reason(imageSnippetOf(z, { libraryID: 1, key: "HIGH2345" })), "not_found");
    const broken = fakeZotero({ cached: false });
    broken.Zotero.PDFWorker.renderAttachmentAnnotations = async () => {
      throw new Error("Worker 'renderAnnotations' failed");
    };
    assert.equal(
      await reason(imageSnippetOf(broken, { libraryID: 1, key: "ANNO2345" })),
      "no_image",
    );
    const big = new Uint8Array(IMAGE_LIMITS.bytes + 10);
    big.set(PNG.subarray(0, 8));
    const large = fakeZotero({ bytes: big });
    const err = await imageSnippetOf(large, { libraryID: 1, key: "ANNO2345" }).catch((e) => e);
    assert.equal(err.reason, "too_large");
    assert.equal(err.size, big.length);
    assert.equal(bytesToBase64(PNG), PNG_BASE64);
  });
});
