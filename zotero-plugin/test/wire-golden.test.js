/**
 * The gateway's own frames (test/golden/wire.json, written by scripts/wire_golden.py from the
 * agent's and gateway's code) served over HTTP to the plugin's client, folded by the plugin's
 * reducer and rendered: what the user sees of a paused turn, its resume, a direct answer and
 * a lost agent. When the wire changes on the Python side, the golden file changes with it
 * (tests/unit/agent/test_wire_golden.py) and these tests say whether the plugin follows.
 */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { after, before, describe, test } from "node:test";
import { createClient } from "../src/api.js";
import { buildCardModel, resumeBody } from "../src/card.js";
import { parseMarker } from "../src/citations.js";
import { parseMarkdown, textContent } from "../src/markdown.js";
import { applyEvents, beginResume, createBubble, stepSummary } from "../src/messages.js";
import { chatBody, createScope } from "../src/scope.js";

const golden = JSON.parse(readFileSync(new URL("./golden/wire.json", import.meta.url), "utf8"));
const streams = Object.fromEntries(golden.streams.map((s) => [s.name, s]));
/** The `data` of a stream's frames of one event type, parsed. */
const dataOf = (name, event) =>
  streams[name].frames
    .filter((f) => f.startsWith(`event: ${event}\n`))
    .map((f) => JSON.parse(f.slice(f.indexOf("\ndata: ") + 7)));

let server;
let client;
const received = [];

before(async () => {
  // Answers each stream route with the golden frames of the request it got, one write per
  // frame, one frame split in two (a chunk boundary inside an event).
  server = createServer((req, res) => {
    let raw = "";
    req.on("data", (c) => (raw += c));
    req.on("end", () => {
      const body = JSON.parse(raw);
      received.push({ path: req.url, body });
      const stream = golden.streams.find(
        (s) => s.path === req.url && JSON.stringify(s.request) === JSON.stringify(body),
      );
      if (!stream) {
        res.writeHead(422, { "Content-Type": "application/json" });
        res.end(JSON.stringify({ status: "error", code: "no_golden_stream", message: raw }));
        return;
      }
      res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
      stream.frames.forEach((frame, k) => {
        if (k === 1) {
          res.write(frame.slice(0, 17));
          res.write(frame.slice(17));
        } else res.write(frame);
      });
      res.end();
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  client = createClient({
    fetch,
    getToken: () => "golden-token",
    baseURL: `http://127.0.0.1:${server.address().port}`,
  });
});

after(() => new Promise((resolve) => server.close(resolve)));

async function collect(iterator) {
  const out = [];
  for await (const e of await iterator) out.push(e);
  return out;
}

const ask = (prompt) =>
  collect(client.chat(chatBody({ sessionId: golden.session_id, prompt, scope: createScope() })));

async function pausedBubble() {
  return applyEvents(createBubble(), await ask(streams.chat_paused.request.prompt));
}

describe("the gateway's frames, as the plugin shows them", () => {
  test("the plugin's requests are the ones the golden streams answer", async () => {
    const paused = await pausedBubble();
    const body = resumeBody({
      sessionId: golden.session_id,
      card: buildCardModel(paused.checkpoint),
      action: "extend_budget",
      guidance: "brms",
    });
    assert.deepEqual(body, streams.resume_completed.request);
    assert.deepEqual(received.at(-1), {
      path: "/chat",
      body: streams.chat_paused.request,
    });
  });

  test("a paused turn: collapsed steps, no answer, the checkpoint card", async () => {
    const b = await pausedBubble();
    assert.equal(b.status, "paused");
    assert.equal(b.answer, "");
    assert.equal(b.invocationId, dataOf("chat_paused", "done")[0].invocation_id);
    assert.deepEqual(
      b.steps.map((s) => s.type),
      ["call", "thought", "call", "result", "note", "checkpoint"],
    );
    assert.deepEqual(b.steps[0], {
      type: "call",
      name: "search_library",
      args: { request: streams.chat_paused.request.prompt },
      author: "coordinator",
    });
    // The streamed thought is replaced by its final text, not doubled.
    assert.equal(b.steps[1].text, "Look for lme4 optimizers.");
    assert.equal(b.steps[3].count, 3);
    assert.equal(b.steps[3].budgetNotice, "WARNING: 1 retrieval call left of 10.");
    assert.equal(b.steps[4].text, "lme4 is covered; nothing on brms yet.");
    const [card] = dataOf("chat_paused", "request_input");
    assert.equal(b.checkpoint.interruptId, card.interrupt_id);
    const model = buildCardModel(b.checkpoint);
    assert.deepEqual(model.gaps, ["how brms fits the same kind of model"]);
    assert.equal(model.trigger, "budget_exhausted");
    assert.equal(model.primary.disabled, false);
    assert.deepEqual(model.primary.delta, { calls: 5, words: 3750, chunks: 5 });
    assert.equal(stepSummary(b).calls, 2);
  });

  test("the resumed turn: the answer without thoughts, its steps, citations and usage", async () => {
    const paused = await pausedBubble();
    const resumed = beginResume(paused, { action: "extend_budget", guidance: "brms" });
    const events = await collect(client.resume(streams.resume_completed.request));
    const b = applyEvents(resumed, events);
    const [done] = dataOf("resume_completed", "done");
    assert.equal(b.status, "completed");
    assert.equal(b.checkpoint, null);
    assert.equal(b.answer, done.answer);
    const thoughts = b.steps.filter((s) => s.type === "thought").map((s) => s.text);
    assert.deepEqual(thoughts, [
      "Look for lme4 optimizers.",
      "Both papers answer a part: quote the optimizer, then the Stan step.",
    ]);
    assert.ok(!b.answer.includes("Both papers answer a part"), "a thought leaked into the answer");
    assert.deepEqual(
      b.steps.slice(6).map((s) => [s.type, s.name ?? ""]),
      [
        ["decision", ""],
        ["call", "read_document"],
        ["result", "read_document"],
        ["thought", ""],
        ["result", "search_library"],
      ],
    );
    assert.deepEqual(b.steps[8].pages, [5, 6]);
    assert.deepEqual(b.citations, done.citations);
    assert.deepEqual(b.usage, done.usage);
    assert.equal(b.passes, 2);
  });

  test("every marker of the answer links to its paper and page; code cites nothing", async () => {
    const events = await collect(client.resume(streams.resume_completed.request));
    const b = applyEvents(beginResume(await pausedBubble(), { action: "extend_budget" }), events);
    const nodes = [];
    const walk = (list) => {
      for (const n of list) {
        if (n.type === "citation") nodes.push(n);
        if (n.children) walk(n.children);
      }
    };
    walk(parseMarkdown(b.answer, { citations: b.citations }));
    assert.deepEqual(
      nodes.map((n) => [n.itemKey, n.page, n.text]),
      [
        ["ABCD2345", 3, "[1, p. 3]"],
        ["BRMS7892", 5, "2, pp. 5-6"],
        ["ABCD2345", 4, "1, p. 4"],
        // The `# Cited Sources` lines link too, to each passage's first page.
        ["ABCD2345", 3, "[1]"],
        ["BRMS7892", 5, "[2]"],
      ],
    );
    assert.equal(nodes[0].quote, b.citations[0].quote);
    assert.equal(nodes[0].verified, true);
    // The agent checked every reference the user can click: each has its (n, page) citation.
    for (const node of nodes) {
      const sent = b.citations.find((c) => c.n === node.n && c.page === node.page);
      assert.ok(sent && typeof sent.verified === "boolean", `no checked citation for ${node.text}`);
    }
    // Each (n, page) the agent sent is a marker the plugin reads.
    const markers = [...b.answer.matchAll(/\[([^\]\n]+)\](?!\()/g)]
      .map((m) => parseMarker(m[1]))
      .filter(Boolean)
      .flat();
    for (const c of b.citations) {
      assert.ok(
        markers.some((r) => r.n === c.n && (r.page ?? c.page) === c.page),
        `citation [${c.n}, p. ${c.page}] has no marker in the answer`,
      );
    }
    // R output in a code span stays code.
    const text = textContent(parseMarkdown(b.answer, { citations: b.citations }));
    assert.ok(text.includes("[1] 0.25"));
  });

  test("a marker shows the check of its own page, not of the first citation of its paper", async () => {
    const events = await collect(client.resume(streams.resume_completed.request));
    const b = applyEvents(beginResume(await pausedBubble(), { action: "extend_budget" }), events);
    const nodes = [];
    const walk = (list) => {
      for (const n of list) {
        if (n.type === "citation") nodes.push(n);
        if (n.children) walk(n.children);
      }
    };
    walk(parseMarkdown(b.answer, { citations: b.citations }));
    const p4 = b.citations.find((c) => c.n === 1 && c.page === 4);
    assert.equal(p4.verified, false);
    assert.equal(nodes.find((n) => n.page === 4).verified, false);
  });

  test("a direct answer streams into one answer, with no steps", async () => {
    const b = applyEvents(createBubble(), await ask(streams.chat_direct_answer.request.prompt));
    const [done] = dataOf("chat_direct_answer", "done");
    assert.equal(b.status, "completed");
    assert.equal(b.answer, done.answer);
    assert.equal(b.answer, "Zocrates answers from your library: ask about the papers in it.");
    assert.deepEqual(b.steps, []);
    assert.equal(b.usage, undefined); // the offline model's turn costs nothing
  });

  test("an agent lost mid-turn ends the bubble with its error", async () => {
    const b = applyEvents(createBubble(), await ask(streams.chat_agent_lost.request.prompt));
    assert.equal(b.status, "error");
    assert.equal(b.error.code, "agent_unavailable");
    assert.ok(b.error.message.length > 10);
    assert.deepEqual(
      b.steps.map((s) => s.name),
      ["search_library"],
    );
  });
});
