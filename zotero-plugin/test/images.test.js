import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  base64Size,
  bytesToBase64,
  formatBytes,
  IMAGE_LIMITS,
  imageDataURL,
  imageProblem,
  sniffImageType,
} from "../src/images.js";
import {
  addSnippet,
  canAddSnippet,
  chatFields,
  contextFromScope,
  contextSignature,
  createScope,
  imageCount,
  needsImageData,
  scopeFromContext,
  snippetSignature,
  withImageData,
} from "../src/scope.js";
import { imageSession, imageSnippet, PNG_BASE64, PNG_SHA256 } from "./fixtures.js";

describe("image bytes", () => {
  test("base64 as Node writes it, and the size it decodes to", () => {
    for (const length of [0, 1, 2, 3, 4, 5, 255, 1000]) {
      const bytes = new Uint8Array(length).map((_, k) => (k * 37 + 11) % 256);
      const text = bytesToBase64(bytes);
      assert.equal(text, Buffer.from(bytes).toString("base64"));
      assert.equal(base64Size(text), length);
    }
    assert.equal(base64Size("not base64!"), -1);
    assert.equal(base64Size("abc"), -1, "unpadded");
  });

  test("the type from the first bytes, and what the gateway would refuse", () => {
    const png = Buffer.from(PNG_BASE64, "base64");
    assert.equal(sniffImageType(png), "image/png");
    assert.equal(sniffImageType([0xff, 0xd8, 0xff, 0xe0]), "image/jpeg");
    assert.equal(sniffImageType(Buffer.from("RIFF\0\0\0\0WEBPVP8 ", "latin1")), "image/webp");
    assert.equal(sniffImageType([0x47, 0x49, 0x46]), null);
    assert.equal(imageProblem({ mime_type: "image/png", data: PNG_BASE64 }), "ok");
    assert.equal(imageProblem({ mime_type: "image/gif", data: PNG_BASE64 }), "type");
    assert.equal(imageProblem({ mime_type: "image/png", data: "%%" }), "data");
    const big = bytesToBase64(new Uint8Array(IMAGE_LIMITS.bytes + 1));
    assert.equal(imageProblem({ mime_type: "image/png", data: big }), "size");
    assert.equal(
      imageDataURL({ mime_type: "image/png", data: "QQ==" }),
      "data:image/png;base64,QQ==",
    );
    assert.equal(imageDataURL({ mime_type: "image/png", sha256: PNG_SHA256 }), "");
    assert.equal(formatBytes(3.4 * 1024 * 1024), "3.4 MB");
    assert.equal(formatBytes(380 * 1024), "380 KB");
  });
});

describe("image snippets in the scope", () => {
  test("pinned with their comment (or none), three at most, ten snippets in all", () => {
    let scope = addSnippet(createScope(), imageSnippet({ text: "" }));
    assert.equal(scope.snippets[0].text, "", "an image needs no comment");
    assert.equal(scope.snippets[0].image.size, 70);
    for (const key of ["ANNO3456", "ANNO4567", "ANNO5678"])
      scope = addSnippet(scope, imageSnippet({ annotation_key: key }));
    assert.equal(imageCount(scope), 3);
    assert.equal(canAddSnippet(scope), true);
    assert.equal(canAddSnippet(scope, { image: true }), false);
    assert.equal(
      addSnippet(
        createScope(),
        imageSnippet({ image: { mime_type: "image/gif", data: PNG_BASE64 } }),
      ).snippets.length,
      0,
    );
  });

  test("sent as the gateway takes them; a restored one only once its bytes are back", () => {
    const scope = addSnippet(createScope(), imageSnippet());
    assert.deepEqual(chatFields(scope).snippets, [
      {
        kind: "image",
        text: "Figure 2: profile zeta",
        item_key: "ABCD2345",
        page: 4,
        title: "lme4",
        image: { mime_type: "image/png", data: PNG_BASE64 },
      },
    ]);
    assert.equal(contextFromScope(scope).snippets[0].image.data, PNG_BASE64);

    const restored = scopeFromContext(imageSession().messages[0].context);
    const [waiting] = restored.snippets;
    assert.equal(needsImageData(waiting), true);
    assert.deepEqual(waiting.image, { mime_type: "image/png", sha256: PNG_SHA256, size: 70 });
    assert.deepEqual(chatFields(restored).snippets, [], "not sent without its bytes");
    const loaded = withImageData(waiting, { mime_type: "image/png", data: PNG_BASE64 });
    assert.equal(needsImageData(loaded), false);
    assert.equal(loaded.image.sha256, PNG_SHA256);
  });

  test("render keys stay short however large the image", () => {
    const big = bytesToBase64(new Uint8Array(1024 * 1024));
    const s = imageSnippet({ image: { mime_type: "image/png", data: big } });
    assert.ok(snippetSignature(s).length < 200);
    assert.ok(contextSignature({ snippets: [s] }).length < 200);
    assert.notEqual(snippetSignature(s), snippetSignature(imageSnippet()));
  });
});
