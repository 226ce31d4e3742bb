import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { iterateSSE, parseSSE, readChunks, SSEParser } from "../src/sse.js";

const enc = new TextEncoder();

/** Feed `input` to a fresh parser cut at the given offsets (bytes when input is bytes). */
function feedSplit(input, cuts) {
  const parser = new SSEParser();
  const events = [];
  let prev = 0;
  for (const cut of [...cuts, input.length]) {
    events.push(...parser.feed(input.slice(prev, cut)));
    prev = cut;
  }
  events.push(...parser.end());
  return events;
}

const strip = (events) => events.map(({ event, data }) => ({ event, data }));

describe("SSEParser", () => {
  test("typed events with JSON data, as the gateway frames them", () => {
    const text =
      'event: message\ndata: {"kind": "answer", "parts": [{"text": "Hi"}]}\n\n' +
      'event: done\ndata: {"status": "completed"}\n\n';
    assert.deepEqual(strip(parseSSE(text)), [
      { event: "message", data: '{"kind": "answer", "parts": [{"text": "Hi"}]}' },
      { event: "done", data: '{"status": "completed"}' },
    ]);
  });

  test("an event split across three chunks", () => {
    const text = 'event: progress\ndata: {"items_done": 3}\n\n';
    const events = feedSplit(text, [4, 20]);
    assert.deepEqual(strip(events), [{ event: "progress", data: '{"items_done": 3}' }]);
  });

  test("every possible split point of a stream gives the same events", () => {
    const text = "event: a\ndata: 1\n\n: keep-alive\n\nevent: b\ndata: x\ndata: y\n\ndata: z\n\n";
    const whole = strip(parseSSE(text));
    assert.equal(whole.length, 3);
    for (let i = 0; i <= text.length; i++) {
      for (const j of [i, Math.min(text.length, i + 1), Math.min(text.length, i + 7)]) {
        assert.deepEqual(strip(feedSplit(text, [i, j])), whole, `cut at ${i}/${j}`);
      }
    }
  });

  test("a split in the middle of a multi-byte UTF-8 character", () => {
    const text = 'event: message\ndata: {"text": "Gödel – ∑ 𝔼[x] 中文"}\n\n';
    const bytes = enc.encode(text);
    const want = strip(parseSSE(text));
    // cut inside ö (2 bytes), – (3 bytes), 𝔼 (4 bytes) and 中 (3 bytes): at every byte offset
    for (let cut = 0; cut <= bytes.length; cut++) {
      assert.deepEqual(strip(feedSplit(bytes, [cut])), want, `cut at byte ${cut}`);
    }
    // one byte at a time
    const parser = new SSEParser();
    const events = [];
    for (const b of bytes) events.push(...parser.feed(new Uint8Array([b])));
    events.push(...parser.end());
    assert.deepEqual(strip(events), want);
    assert.equal(JSON.parse(events[0].data).text, "Gödel – ∑ 𝔼[x] 中文");
  });

  test("CRLF line ends, also with the CR and LF in different chunks", () => {
    const text = "event: message\r\ndata: one\r\ndata: two\r\n\r\nevent: done\r\ndata: {}\r\n\r\n";
    const want = [
      { event: "message", data: "one\ntwo" },
      { event: "done", data: "{}" },
    ];
    assert.deepEqual(strip(parseSSE(text)), want);
    for (let cut = 0; cut <= text.length; cut++) {
      assert.deepEqual(strip(feedSplit(text, [cut])), want, `cut at ${cut}`);
    }
  });

  test("bare CR line ends", () => {
    assert.deepEqual(strip(parseSSE("data: a\rdata: b\r\r")), [{ event: "message", data: "a\nb" }]);
  });

  test("multi-line data, comments, leading space rule, unknown fields", () => {
    const text = [
      ": comment line",
      "event: note",
      "data:no space",
      "data:  two spaces",
      "data",
      "foo: ignored",
      "",
      "",
    ].join("\n");
    assert.deepEqual(strip(parseSSE(text)), [{ event: "note", data: "no space\n two spaces\n" }]);
  });

  test("a last event without a trailing blank line is dispatched by end()", () => {
    const parser = new SSEParser();
    assert.deepEqual(parser.feed('event: done\ndata: {"status":"completed"}'), []);
    assert.deepEqual(strip(parser.end()), [{ event: "done", data: '{"status":"completed"}' }]);
    assert.deepEqual(strip(parseSSE("event: done\ndata: x\n")), [{ event: "done", data: "x" }]);
  });

  test("events without data are not dispatched; the type resets after each event", () => {
    assert.deepEqual(strip(parseSSE("event: ping\n\ndata: x\n\n")), [
      { event: "message", data: "x" },
    ]);
  });

  test("id and retry fields", () => {
    const parser = new SSEParser();
    const events = [...parser.feed("id: 7\nretry: 1500\ndata: a\n\ndata: b\n\n"), ...parser.end()];
    assert.deepEqual(
      events.map((e) => e.id),
      ["7", "7"],
    );
    assert.equal(parser.retry, 1500);
  });

  test("a byte-order mark at the start is ignored", () => {
    assert.deepEqual(strip(parseSSE("\ufeffevent: x\ndata: 1\n\n")), [{ event: "x", data: "1" }]);
  });

  test("ArrayBuffer chunks", () => {
    const parser = new SSEParser();
    const events = [...parser.feed(enc.encode("data: ab\n\n").buffer), ...parser.end()];
    assert.deepEqual(strip(events), [{ event: "message", data: "ab" }]);
    assert.throws(() => parser.feed(42), TypeError);
  });
});

describe("iterateSSE / readChunks", () => {
  test("reads a WHATWG ReadableStream of bytes split mid-character", async () => {
    const bytes = enc.encode('event: message\ndata: "é"\n\nevent: done\ndata: {}');
    const stream = new ReadableStream({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 5) controller.enqueue(bytes.slice(i, i + 5));
        controller.close();
      },
    });
    const events = [];
    for await (const e of iterateSSE(stream)) events.push(e);
    assert.deepEqual(strip(events), [
      { event: "message", data: '"é"' },
      { event: "done", data: "{}" },
    ]);
  });

  test("reads async iterables of strings", async () => {
    async function* chunks() {
      yield "data: 1\n";
      yield "\ndata: 2\n\n";
    }
    const events = [];
    for await (const e of iterateSSE(chunks())) events.push(e.data);
    assert.deepEqual(events, ["1", "2"]);
  });

  test("stopping early cancels the stream", async () => {
    let cancelled = false;
    const stream = new ReadableStream({
      pull(controller) {
        controller.enqueue(enc.encode("data: tick\n\n"));
      },
      cancel() {
        cancelled = true;
      },
    });
    let n = 0;
    for await (const _ of iterateSSE(stream)) {
      if (++n === 3) break;
    }
    assert.equal(n, 3);
    assert.equal(cancelled, true);
  });

  test("a null body yields nothing; other values are refused", async () => {
    const none = [];
    for await (const c of readChunks(null)) none.push(c);
    assert.deepEqual(none, []);
    await assert.rejects(async () => {
      for await (const _ of readChunks(42)) {
        // nothing
      }
    }, TypeError);
  });
});
