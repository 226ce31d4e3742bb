import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { GatewayError } from "../src/errors.js";
import { localization } from "./l10n-fixture.js";
import {
  createChatController,
  memoryPrefs,
  restoredScope,
  userMessageFor,
} from "../src/ui/controller.js";
import { createSessionStarter } from "../src/ui/first-session.js";
import {
  CITATIONS,
  chatStreamPaused,
  imageSession,
  imageSnippet,
  INVOCATION,
  pausedSession,
  PNG_BASE64,
  PNG_SHA256,
  resumeStreamCompleted,
  SESSION_ID,
} from "./fixtures.js";

const tick = () => new Promise((r) => setTimeout(r, 0));

async function* streamOf(events, { signal, gate } = {}) {
  for (const ev of events) {
    if (gate) await gate(ev);
    if (signal?.aborted) throw Object.assign(new Error("aborted"), { name: "AbortError" });
    yield ev;
  }
}

/** A fake api.js client recording its calls. */
function fakeClient({
  sessions = [],
  session = null,
  chat = [],
  resume = [],
  refuse = null,
  refuseResume = null,
  down = false,
  gate = null,
  images = {},
} = {}) {
  const calls = [];
  const store = new Map();
  if (session) store.set(session.id, session);
  const fail = (code, status = 0) => new GatewayError({ code, status, message: code });
  let created = 0;
  const made = []; // manifests of the sessions createSession made (listed from then on)
  const c = {
    calls,
    images,
    listSessions: async () => {
      calls.push(["listSessions"]);
      if (down) throw fail("gateway_down");
      return [...sessions, ...made.filter((m) => store.has(m.id))];
    },
    getImage: async (id, sha256) => {
      calls.push(["getImage", id, sha256]);
      if (!images[sha256]) throw fail("image_not_found", 404);
      return images[sha256];
    },
    getSession: async (id) => {
      calls.push(["getSession", id]);
      if (!store.has(id)) throw fail("session_not_found", 404);
      return store.get(id);
    },
    createSession: async (title) => {
      calls.push(["createSession", title]);
      const s = {
        id: `s-new-${++created}`,
        title,
        created_at: 2e9,
        updated_at: 2e9,
        messages: [],
        pending_hitl: null,
      };
      store.set(s.id, s);
      made.push({ id: s.id, title, created_at: 2e9, updated_at: 2e9, event_count: 0 });
      return s;
    },
    renameSession: async (id, title) => {
      calls.push(["renameSession", id, title]);
      return { ...(store.get(id) || { id }), title };
    },
    deleteSession: async (id) => {
      calls.push(["deleteSession", id]);
      store.delete(id);
    },
    rewind: async (id, invocationId) => {
      calls.push(["rewind", id, invocationId]);
      return { id, title: "after rewind", messages: [], pending_hitl: null };
    },
    chat: async (body, { signal } = {}) => {
      calls.push(["chat", body]);
      if (refuse) throw refuse;
      return streamOf(chat, { signal, gate });
    },
    resume: async (body, { signal } = {}) => {
      calls.push(["resume", body]);
      if (refuseResume) throw refuseResume;
      return streamOf(resume, { signal, gate });
    },
  };
  return c;
}

function setup(options = {}, prefs = memoryPrefs(), t = null) {
  const client = fakeClient(options);
  const controller = createChatController({
    getClient: () => client,
    prefs,
    now: () => 1_000_000,
    t,
  });
  const changes = [];
  controller.subscribe((_s, kind) => changes.push(kind));
  return { client, controller, prefs, changes, state: () => controller.state };
}

const SELECTION = {
  selectedItems: [
    { key: "ABCD2345", title: "lme4" },
    { key: "BRMS7890", title: "brms" },
  ],
  collection: { key: "COLL2345", name: "Mixed models" },
};

describe("controller: sessions", () => {
  test("init with no chats: the first one is made and opened", async () => {
    const { controller, client, state, prefs } = setup();
    await controller.init();
    assert.equal(state().phase, "ready");
    assert.equal(state().session.id, "s-new-1");
    assert.equal(state().session.title, "New Chat");
    assert.deepEqual(
      state().sessions.map((s) => s.id),
      ["s-new-1"],
    );
    assert.equal(prefs.get("lastSessionID"), "s-new-1");
    assert.deepEqual(state().messages, []);
    // opened again (Retry, a reload): the chat is there now, none is added
    await controller.init();
    assert.equal(state().session.id, "s-new-1");
    assert.equal(client.calls.filter((c) => c[0] === "createSession").length, 1);
  });

  test("two windows opening at once share one first chat", async () => {
    const client = fakeClient();
    const firstSession = createSessionStarter();
    const panes = [0, 1].map(() =>
      createChatController({ getClient: () => client, prefs: memoryPrefs(), firstSession }),
    );
    await Promise.all(panes.map((p) => p.init()));
    assert.equal(client.calls.filter((c) => c[0] === "createSession").length, 1);
    assert.deepEqual(
      panes.map((p) => p.state.session.id),
      ["s-new-1", "s-new-1"],
    );
    // a third window opened later finds it
    const later = createChatController({ getClient: () => client, firstSession });
    await later.init();
    assert.equal(later.state.session.id, "s-new-1");
    assert.equal(client.calls.filter((c) => c[0] === "createSession").length, 1);
  });

  test("a user who deleted every chat gets a fresh one when the pane is shown, or asks", async () => {
    const { controller, client, state } = setup({ chat: resumeStreamCompleted() });
    await controller.init();
    await controller.deleteSession("s-new-1");
    assert.equal(state().session, null, "nothing is made behind the user's back");
    assert.equal(await controller.showing(), true);
    assert.equal(state().session.id, "s-new-2");
    assert.equal(await controller.showing(), false, "a chat is open: nothing to do");
    await controller.deleteSession("s-new-2");
    assert.equal(await controller.send("How does lmer choose its optimizer?"), true);
    assert.equal(state().session.id, "s-new-3");
    assert.equal(client.calls.filter((c) => c[0] === "createSession").length, 3);
  });

  test("init opens the last used chat and redraws its pending checkpoint", async () => {
    const prefs = memoryPrefs({ lastSessionID: SESSION_ID });
    const manifests = [
      { id: "other", title: "Other", updated_at: 1726000200 },
      { id: SESSION_ID, title: "lmer optimizers", updated_at: 1726000100 },
    ];
    const { controller, state } = setup({ sessions: manifests, session: pausedSession() }, prefs);
    await controller.init();
    assert.equal(state().session.id, SESSION_ID);
    assert.deepEqual(
      state().sessions.map((s) => s.id),
      ["other", SESSION_ID],
      "newest first",
    );
    const bubble = state().messages.find((m) => m.kind === "assistant");
    assert.equal(bubble.checkpoint.interruptId, "interrupt_ext_1");
    assert.equal(state().reveal.id, bubble.id, "the card is scrolled into view");
  });

  test("gateway down at start: offline, with Try again and Open settings", async () => {
    const { controller, state } = setup({ down: true });
    await controller.init();
    assert.equal(state().phase, "offline");
    assert.equal(state().notice.code, "gateway_down");
    assert.match(state().notice.message, /Zocrates is not running/);
    assert.deepEqual(state().notice.actions, ["retry", "settings"]);
  });

  test("new chat, rename, delete (the next chat opens)", async () => {
    const { controller, client, state, prefs } = setup({
      sessions: [{ id: SESSION_ID, title: "lmer", updated_at: 1 }],
      session: pausedSession(),
    });
    await controller.init();
    await controller.newSession();
    const id = state().session.id;
    assert.equal(state().session.title, "New Chat");
    assert.equal(prefs.get("lastSessionID"), id);
    assert.equal(state().sessions[0].id, id);
    await controller.newSession(); // an empty chat is reused
    assert.equal(client.calls.filter((c) => c[0] === "createSession").length, 1);
    await controller.renameSession(id, "  My chat  ");
    assert.equal(state().session.title, "My chat");
    assert.deepEqual(
      client.calls.find((c) => c[0] === "renameSession"),
      ["renameSession", id, "My chat"],
    );
    await controller.deleteSession(id);
    assert.equal(state().session.id, SESSION_ID);
    assert.ok(!state().sessions.some((s) => s.id === id));
  });
});

describe("controller: a turn", () => {
  test("send: a session is made, the stream fills one bubble, the chat gets a title", async () => {
    const { controller, client, state, changes } = setup({ chat: resumeStreamCompleted() });
    await controller.init();
    controller.setSelection(SELECTION);
    assert.equal(state().scope.mode, "items", "the scope follows the selection");
    const sent = await controller.send("  How does lmer choose its optimizer?  ");
    assert.equal(sent, true);
    const chat = client.calls.find((c) => c[0] === "chat")[1];
    assert.equal(chat.prompt, "How does lmer choose its optimizer?");
    assert.deepEqual(
      chat.active_items.map((i) => i.item_key),
      ["ABCD2345", "BRMS7890"],
    );
    const [user, bubble] = state().messages;
    assert.equal(user.kind, "user");
    assert.equal(
      user.invocationId,
      INVOCATION,
      "the user message learns its invocation (for rewind / edit)",
    );
    assert.equal(user.context.active_mode, "items");
    assert.equal(bubble.status, "completed");
    assert.deepEqual(bubble.citations, CITATIONS);
    assert.equal(state().streaming, null);
    assert.equal(state().composer.text, "");
    assert.ok(changes.includes("stream"));
    await tick();
    assert.deepEqual(client.calls.find((c) => c[0] === "renameSession").slice(2), [
      "How does lmer choose its optimizer?",
    ]);
  });

  test("a 409 checkpoint_pending: the question comes back, the notice offers the card or a discard", async () => {
    const refuse = new GatewayError({ code: "checkpoint_pending", status: 409, message: "paused" });
    const { controller, state } = setup(
      { sessions: [{ id: SESSION_ID }], session: pausedSession(), refuse },
      memoryPrefs({ lastSessionID: SESSION_ID }),
    );
    await controller.init();
    const before = state().messages.length;
    assert.equal(await controller.send("What is BOBYQA?"), false);
    assert.equal(state().messages.length, before, "the optimistic messages are gone");
    assert.equal(state().composer.text, "What is BOBYQA?");
    assert.equal(state().notice.code, "checkpoint_pending");
    assert.equal(state().notice.status, 409);
    assert.deepEqual(state().notice.actions, ["show-card", "discard-paused"]);
    assert.match(state().notice.message, /paused at a deep-research checkpoint/);
  });

  test("discarding the paused turn from a 409 keeps the new question and its scope", async () => {
    const refuse = new GatewayError({ code: "checkpoint_pending", status: 409, message: "paused" });
    const { controller, client, state } = setup(
      { sessions: [{ id: SESSION_ID }], session: pausedSession(), refuse },
      memoryPrefs({ lastSessionID: SESSION_ID }),
    );
    await controller.init();
    controller.setSelection(SELECTION);
    controller.setMode("library");
    await controller.send("What is BOBYQA?");
    await controller.runAction("discard-paused");
    assert.deepEqual(
      client.calls.find((c) => c[0] === "rewind"),
      ["rewind", SESSION_ID, INVOCATION],
    );
    assert.equal(state().composer.text, "What is BOBYQA?");
    assert.equal(state().scope.mode, "library");
  });

  test("a question while one streams is not sent; the box keeps it", async () => {
    let release;
    const gate = (ev) => (ev.event === "done" ? new Promise((r) => (release = r)) : null);
    const { controller, client, state } = setup({ chat: resumeStreamCompleted(), gate });
    await controller.init();
    const first = controller.send("first");
    while (!release) await tick();
    assert.equal(await controller.send("second"), false);
    assert.match(state().notice.message, /still answering/);
    release();
    await first;
    assert.equal(client.calls.filter((c) => c[0] === "chat").length, 1);
  });

  test("the notices are the pane's language when it has one", async () => {
    let release;
    const gate = (ev) => (ev.event === "done" ? new Promise((r) => (release = r)) : null);
    const de = localization("de");
    const { controller, state } = setup({ chat: resumeStreamCompleted(), gate }, undefined, de.t);
    await controller.init();
    const first = controller.send("first");
    while (!release) await tick();
    assert.equal(await controller.send("second"), false);
    assert.equal(state().notice.message, de.t("zocrates-notice-busy-send"));
    assert.match(state().notice.message, /^Zocrates antwortet noch/);
    release();
    await first;
  });

  test("a question or guidance too long: refused in the pane's language, nothing sent", async () => {
    const de = localization("de");
    const { controller, client, state } = setup(
      { sessions: [{ id: SESSION_ID }], session: pausedSession() },
      memoryPrefs({ lastSessionID: SESSION_ID }),
      de.t,
    );
    await controller.init();
    const long = "x".repeat(20001);
    // while editing, too: the turn is not rewound for a question that cannot go
    assert.equal(controller.startEdit(state().messages[0].id), true);
    assert.equal(await controller.send(long), false);
    assert.equal(
      state().notice.message,
      de.t("zocrates-notice-question-too-long", { length: 20001, max: 20000 }),
    );
    assert.match(state().notice.message, /^Die Frage hat 20.001 Zeichen/);
    assert.equal(state().composer.text, long);
    assert.ok(state().editing, "still editing");
    const bubble = state().messages.find((m) => m.checkpoint);
    assert.equal(await controller.grant(bubble.id, "g".repeat(2001)), false);
    assert.match(state().notice.message, /^Die Hinweise haben 2.001 Zeichen/);
    assert.deepEqual(
      client.calls.map((c) => c[0]).filter((n) => ["chat", "resume", "rewind"].includes(n)),
      [],
    );
  });

  test("stop: the bubble is stopped", async () => {
    let reachedDone;
    const reached = new Promise((r) => (reachedDone = r));
    const gate = (ev) => {
      if (ev.event === "done") {
        reachedDone();
        return new Promise((r) => setTimeout(r, 20));
      }
      return null;
    };
    const { controller, state } = setup({ chat: resumeStreamCompleted(), gate });
    await controller.init();
    const run = controller.send("q");
    await reached;
    controller.stop();
    await run;
    assert.equal(state().messages[1].status, "stopped");
    assert.equal(state().streaming, null);
  });
});

describe("controller: the checkpoint", () => {
  test("grant: the resumed stream continues in the same bubble", async () => {
    const { controller, client, state } = setup({
      chat: chatStreamPaused(),
      resume: resumeStreamCompleted(),
    });
    await controller.init();
    await controller.send("q");
    const bubble = state().messages[1];
    assert.equal(bubble.status, "paused");
    assert.equal(state().reveal.id, bubble.id);
    assert.equal(await controller.grant(bubble.id, "  focus on Table 3 "), true);
    const body = client.calls.find((c) => c[0] === "resume")[1];
    assert.deepEqual(body.response, { action: "extend_budget", guidance: "focus on Table 3" });
    assert.equal(body.interrupt_id, "interrupt_ext_1");
    assert.equal(state().messages.length, 2, "no new bubble");
    const after = state().messages[1];
    assert.equal(after.id, bubble.id);
    assert.equal(after.status, "completed");
    assert.equal(after.passes, 2);
    assert.ok(after.steps.some((s) => s.type === "decision" && s.guidance === "focus on Table 3"));
  });

  test("a refused resume puts the card back and says why", async () => {
    const refuseResume = new GatewayError({
      code: "stale_interrupt",
      status: 409,
      message: "stale",
    });
    const { controller, state } = setup({ chat: chatStreamPaused(), refuseResume });
    await controller.init();
    await controller.send("q");
    const id = state().messages[1].id;
    assert.equal(await controller.synthesize(id), false);
    const bubble = state().messages[1];
    assert.equal(bubble.status, "paused");
    assert.equal(bubble.checkpoint.interruptId, "interrupt_ext_1");
    assert.equal(bubble.passes, 1);
    assert.equal(state().notice.code, "stale_interrupt");
    assert.deepEqual(state().notice.actions, ["reload"]);
  });
});

describe("controller: rewind and edit restore the turn's scope", () => {
  test("rewind to a reloaded message: prompt, items and snippets come back", async () => {
    const { controller, client, state } = setup(
      { sessions: [{ id: SESSION_ID }], session: pausedSession() },
      memoryPrefs({ lastSessionID: SESSION_ID }),
    );
    await controller.init();
    controller.setSelection({
      selectedItems: [],
      collection: { key: "COLL2345", name: "Mixed models" },
    });
    const user = state().messages[0];
    assert.equal(await controller.rewindTo(user.id), true);
    assert.deepEqual(
      client.calls.find((c) => c[0] === "rewind"),
      ["rewind", SESSION_ID, INVOCATION],
    );
    assert.equal(state().composer.text, pausedSession().messages[0].text);
    assert.equal(state().composer.focus, true);
    assert.equal(state().scope.mode, "items");
    assert.deepEqual(
      state().scope.items.map((i) => i.item_key),
      ["ABCD2345"],
    );
    assert.equal(
      state().scope.collection.key,
      "COLL2345",
      "the chooser keeps the current collection as an option",
    );
    assert.equal(state().scope.snippets[0].text, "bobyqa is the default");
    assert.equal(state().scope.snippets[0].page, 3);
    assert.equal(state().messages.length, 0);
    // the restored scope is not overwritten by the selection any more
    controller.setSelection(SELECTION);
    assert.equal(state().scope.mode, "items");
  });

  test("edit: sending rewinds first, then asks the new text", async () => {
    const { controller, client, state } = setup(
      { sessions: [{ id: SESSION_ID }], session: pausedSession(), chat: resumeStreamCompleted() },
      memoryPrefs({ lastSessionID: SESSION_ID }),
    );
    await controller.init();
    const user = state().messages[0];
    assert.equal(controller.startEdit(user.id), true);
    assert.equal(state().editing.invocationId, INVOCATION);
    assert.equal(state().composer.text, user.text);
    await controller.send("A better question");
    const names = client.calls.map((c) => c[0]);
    assert.ok(names.indexOf("rewind") < names.indexOf("chat"));
    assert.equal(state().editing, null);
    assert.equal(state().messages[0].text, "A better question");
  });

  test("restoredScope: the turn's collection and snippets, the current items", () => {
    const scope = restoredScope(
      {
        active_context_items: null,
        active_collection: { key: "COLL2345", name: "Mixed" },
        snippets: [{ text: "x", item_key: "ABCD2345", page: 2 }],
      },
      SELECTION,
    );
    assert.equal(scope.mode, "collection");
    assert.equal(scope.collection.name, "Mixed");
    assert.equal(scope.items.length, 2);
    assert.equal(scope.snippets.length, 1);
  });

  test("userMessageFor finds the question a bubble answers", () => {
    const messages = [
      { id: "u1", kind: "user" },
      { id: "a1", kind: "assistant" },
      { id: "u2", kind: "user" },
      { id: "a2", kind: "assistant" },
    ];
    assert.equal(userMessageFor(messages, "a2").id, "u2");
    assert.equal(userMessageFor(messages, "a1").id, "u1");
    assert.equal(userMessageFor(messages, "zz"), null);
  });
});

describe("controller: scope and snippets", () => {
  test("the scope follows Zotero until the user picks one", async () => {
    const { controller, state } = setup();
    controller.setSelection({ selectedItems: [], collection: SELECTION.collection });
    assert.equal(state().scope.mode, "collection");
    controller.setSelection(SELECTION);
    assert.equal(state().scope.mode, "items");
    controller.setMode("library");
    controller.setSelection({ selectedItems: [SELECTION.selectedItems[0]], collection: null });
    assert.equal(state().scope.mode, "library");
  });

  test("the reader's selection is offered, then pinned once", () => {
    const { controller, state } = setup();
    const snippet = { text: "bobyqa", item_key: "ABCD2345", page: 3, title: "lme4" };
    controller.setReaderSelection(snippet);
    assert.equal(state().readerSelection, snippet);
    assert.equal(controller.pinSnippet(), true);
    assert.equal(state().readerSelection, null);
    assert.equal(controller.pinSnippet(snippet), false, "already pinned");
    assert.equal(state().scope.snippets.length, 1);
    controller.removeSnippet(0);
    assert.equal(state().scope.snippets.length, 0);
  });
});

describe("controller: image snippets", () => {
  test("an image is pinned once, three at most, and sent with its bytes", async () => {
    const { controller, client, state } = setup({ chat: resumeStreamCompleted() });
    await controller.init();
    assert.equal(controller.pinSnippet(imageSnippet()), true);
    assert.equal(controller.pinSnippet(imageSnippet()), false, "the same annotation again");
    controller.pinSnippet(imageSnippet({ annotation_key: "ANNO3456" }));
    controller.pinSnippet(imageSnippet({ annotation_key: "ANNO4567" }));
    assert.equal(controller.pinSnippet(imageSnippet({ annotation_key: "ANNO5678" })), false);
    assert.match(state().notice.message, /At most 3 images/);
    assert.equal(
      controller.pinSnippet({ text: "a passage", item_key: "ABCD2345", page: 2 }),
      true,
      "passages still fit",
    );
    await controller.send("What do these figures show?");
    const body = client.calls.find((c) => c[0] === "chat")[1];
    assert.equal(body.snippets.length, 4);
    assert.deepEqual(body.snippets[0], {
      kind: "image",
      text: "Figure 2: profile zeta",
      item_key: "ABCD2345",
      page: 4,
      title: "lme4",
      image: { mime_type: "image/png", data: PNG_BASE64 },
    });
    // the local question keeps the bytes: rewinding it needs no fetch
    assert.equal(state().messages[0].context.snippets[0].image.data, PNG_BASE64);
  });

  test("rewind and edit bring an image back by its sha256, and send waits for it", async () => {
    const { controller, client, state } = setup(
      {
        sessions: [{ id: SESSION_ID }],
        session: imageSession(),
        chat: resumeStreamCompleted(),
        images: { [PNG_SHA256]: { mime_type: "image/png", data: PNG_BASE64 } },
      },
      memoryPrefs({ lastSessionID: SESSION_ID }),
    );
    await controller.init();
    const user = state().messages[0];
    assert.equal(controller.startEdit(user.id), true);
    const [restored] = state().scope.snippets;
    assert.equal(restored.kind, "image");
    assert.equal(restored.image.data, undefined, "the chip waits for the bytes");
    assert.ok(state().imagesLoading);
    await controller.send("What does the figure show, really?");
    assert.deepEqual(
      client.calls.find((c) => c[0] === "getImage"),
      ["getImage", SESSION_ID, PNG_SHA256],
    );
    const body = client.calls.find((c) => c[0] === "chat")[1];
    assert.deepEqual(body.snippets[0].image, { mime_type: "image/png", data: PNG_BASE64 });
  });

  test("an image that cannot come back is unpinned, with a notice", async () => {
    const { controller, state } = setup(
      { sessions: [{ id: SESSION_ID }], session: imageSession() },
      memoryPrefs({ lastSessionID: SESSION_ID }),
    );
    await controller.init();
    assert.equal(await controller.rewindTo(state().messages[0].id), true);
    await state().imagesLoading;
    assert.equal(state().scope.snippets.length, 0);
    assert.match(state().notice.message, /could not be brought back/);
  });
});

describe("controller: notices", () => {
  test("a chat held back by maintenance, like one during start-up, can be retried", async () => {
    const { noticeFrom } = await import("../src/ui/controller.js");
    for (const code of ["maintenance_running", "starting_up", "session_busy"]) {
      const notice = noticeFrom({ code, message: "Session maintenance is running." });
      assert.deepEqual(notice.actions, ["retry"], code);
    }
    assert.deepEqual(noticeFrom({ code: "no_such_code" }).actions, []);
  });

  test("a turn cut off by a broken stream or a lost sessions service offers to reload the chat", async () => {
    // The turn may have stored its card or answer before the error reached the pane.
    const { turnErrorActions } = await import("../src/ui/notices.js");
    for (const code of ["stream_interrupted", "sessions_unavailable", "sessions_timeout"]) {
      assert.deepEqual(turnErrorActions(code), ["reload"], code);
    }
    for (const code of ["invalid_request", "model_error", "agent_unavailable", undefined]) {
      assert.deepEqual(turnErrorActions(code), [], String(code));
    }
  });
});
