import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ACTIONS, buildCardModel, englishT, GUIDANCE_MAX, resumeBody } from "../src/card.js";
import { checkpointFrom } from "../src/messages.js";
import { INVOCATION, PAYLOAD, SESSION_ID } from "./fixtures.js";

const requestInput = {
  interrupt_id: "interrupt_ext_1",
  invocation_id: INVOCATION,
  message: "Deep research limit reached: grant an extension or synthesize now.",
  payload: PAYLOAD,
};

describe("checkpoint card model", () => {
  test("badge, summary, gaps and the two buttons from the payload", () => {
    const card = buildCardModel(checkpointFrom(requestInput));
    assert.equal(card.badge, "Deep Research: Extension 1 of 2");
    assert.equal(card.interruptId, "interrupt_ext_1");
    assert.equal(card.invocationId, INVOCATION);
    assert.equal(card.coveredSummary, PAYLOAD.covered_summary);
    assert.deepEqual(card.gaps, PAYLOAD.gaps);
    assert.equal(card.primary.action, "extend_budget");
    assert.equal(card.primary.label, "Grant Deep Research Extension (+5 calls, +3,750 words)");
    assert.deepEqual(card.primary.delta, { calls: 5, words: 3750, chunks: 5 });
    assert.equal(card.primary.disabled, false);
    assert.equal(card.secondary.action, "synthesize");
    assert.equal(card.secondary.label, "Synthesize Response with Existing Evidence");
    assert.equal(card.guidance.maxLength, 2000);
    assert.match(card.guidance.placeholder, /Steer the search/);
    assert.equal(card.trigger, "gaps");
    assert.equal(card.triggerText, "The search left parts of the question without evidence.");
    assert.equal(
      card.statsText,
      "6 passages found with 10 of 10 searches and 5,200 of 7,500 words.",
    );
    assert.deepEqual(card.nextCeilings, { budget: 15, wordCeiling: 11250, maxChunks: 20 });
  });

  test("the raw request_input data works as well as a bubble's checkpoint", () => {
    assert.deepEqual(buildCardModel(requestInput), buildCardModel(checkpointFrom(requestInput)));
  });

  test("numbers come from the ceilings, not constants", () => {
    const payload = {
      ...PAYLOAD,
      extension_number: 2,
      max_extensions: 3,
      trigger: "budget_exhausted",
      ceilings: { budget: 15, word_ceiling: 11250, max_chunks: 20 },
      next_ceilings: { budget: 16, word_ceiling: 12250, max_chunks: 20 },
    };
    const card = buildCardModel({ interrupt_id: "interrupt_ext_2", invocation_id: "i", payload });
    assert.equal(card.badge, "Deep Research: Extension 2 of 3");
    assert.equal(card.primary.label, "Grant Deep Research Extension (+1 call, +1,000 words)");
    assert.equal(card.triggerText, "The search used up its budget before it finished.");
  });

  test("no extension left: the grant button is disabled", () => {
    const payload = { ...PAYLOAD, extension_number: 3, max_extensions: 2 };
    const card = buildCardModel({ interrupt_id: "x", invocation_id: "i", payload });
    assert.equal(card.primary.disabled, true);
    assert.equal(card.badge, "Deep Research: no extensions left");
  });

  test("a sparse or odd payload does not throw", () => {
    const card = buildCardModel({
      interrupt_id: "x",
      invocation_id: "i",
      payload: { gaps: ["a", "", 3], trigger: "weird" },
    });
    assert.deepEqual(card.gaps, ["a", "3"]);
    assert.equal(card.trigger, "gaps");
    assert.equal(card.primary.disabled, true);
    assert.doesNotThrow(() => buildCardModel(null));
  });

  test("labels can be localized through t()", () => {
    const calls = [];
    const t = (id, args) => {
      calls.push(id);
      return id === "grant-label" ? `Erweitern (+${args.calls})` : englishT(id, args);
    };
    const card = buildCardModel(requestInput, { t });
    assert.equal(card.primary.label, "Erweitern (+5)");
    assert.ok(calls.includes("badge") && calls.includes("synthesize-label"));
  });
});

describe("resume body", () => {
  const card = buildCardModel(requestInput);

  test("grant with guidance", () => {
    assert.deepEqual(
      resumeBody({
        sessionId: SESSION_ID,
        card,
        action: ACTIONS.EXTEND,
        guidance: "  Focus on Table 3. ",
      }),
      {
        session_id: SESSION_ID,
        invocation_id: INVOCATION,
        interrupt_id: "interrupt_ext_1",
        response: { action: "extend_budget", guidance: "Focus on Table 3." },
      },
    );
  });

  test("synthesize without guidance sends null", () => {
    assert.deepEqual(resumeBody({ sessionId: SESSION_ID, card, action: "synthesize" }).response, {
      action: "synthesize",
      guidance: null,
    });
  });

  test("bad input is refused before anything is sent", () => {
    assert.throws(() => resumeBody({ sessionId: SESSION_ID, card, action: "cancel" }), RangeError);
    assert.throws(() => resumeBody({ sessionId: "", card, action: "synthesize" }), TypeError);
    assert.throws(
      () => resumeBody({ sessionId: SESSION_ID, card: {}, action: "synthesize" }),
      TypeError,
    );
    assert.throws(
      () =>
        resumeBody({
          sessionId: SESSION_ID,
          card,
          action: "synthesize",
          guidance: "x".repeat(GUIDANCE_MAX + 1),
        }),
      /at most 2000/,
    );
  });
});
