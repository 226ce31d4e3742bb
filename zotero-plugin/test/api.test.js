import assert from "node:assert/strict";
import { createServer } from "node:http";
import { describe, test } from "node:test";
import { createClient, normalizeBaseURL } from "../src/api.js";
import { Codes, describeError, GatewayError } from "../src/errors.js";
import { chatStreamPaused, jsonResponse, SESSION_ID, sseResponse } from "./fixtures.js";

const TOKEN_PATH = "/home/me/Zotero/zocrates-data/gateway.token";

/** A fetch that answers from `handler(url, init)` and records the calls. */
function fakeFetch(handler) {
  const calls = [];
  const fetch = async (url, init = {}) => {
    calls.push({ url, init, body: init.body ? JSON.parse(init.body) : undefined });
    return handler(url, init, calls.length);
  };
  return { fetch, calls };
}

function client(handler, extra = {}) {
  const f = fakeFetch(handler);
  const c = createClient({
    fetch: f.fetch,
    getToken: async () => "tok-1",
    tokenPath: TOKEN_PATH,
    ...extra,
  });
  return { c, calls: f.calls };
}

async function collect(iterator) {
  const out = [];
  for await (const e of iterator) out.push(e);
  return out;
}

describe("requests", () => {
  test("sends the bearer token, JSON bodies, and returns the payload", async () => {
    const { c, calls } = client(() =>
      jsonResponse({ status: "success", session: { id: "s1", title: "T" } }, 201),
    );
    const session = await c.createSession("T");
    assert.deepEqual(session, { id: "s1", title: "T" });
    assert.equal(calls[0].url, "http://127.0.0.1:8765/sessions");
    assert.equal(calls[0].init.method, "POST");
    assert.equal(calls[0].init.headers.Authorization, "Bearer tok-1");
    assert.equal(calls[0].init.headers["Content-Type"], "application/json");
    assert.deepEqual(calls[0].body, { title: "T" });
  });

  test("every route hits the gateway's path and method", async () => {
    const { c, calls } = client(() =>
      jsonResponse({
        status: "success",
        sessions: [],
        session: { id: "x" },
        config: { a: 1 },
        size_bytes: 1,
      }),
    );
    await c.listSessions();
    await c.getSession("s/1");
    await c.renameSession("s1", "New");
    await c.deleteSession("s1");
    await c.rewind("s1", "inv-1");
    await c.storageStats();
    await c.maintenance();
    await c.getConfig();
    await c.putConfig({ max_saved_sessions: 50 });
    await c.libraryStatus();
    await c.register("/home/me/Zotero");
    await c.search("robust errors", { k: 5, itemKeys: ["ABCD2345", "BRMS7890"], rerank: true });
    await c.health();
    const seen = calls.map((x) => `${x.init.method} ${x.url.replace("http://127.0.0.1:8765", "")}`);
    assert.deepEqual(seen, [
      "GET /sessions",
      "GET /sessions/s%2F1",
      "PATCH /sessions/s1",
      "DELETE /sessions/s1",
      "POST /sessions/s1/rewind",
      "GET /sessions/storage_stats",
      "POST /sessions/maintenance",
      "GET /config",
      "PUT /config",
      "GET /library/status",
      "POST /register",
      "GET /library/search?q=robust+errors&k=5&item_keys=ABCD2345&item_keys=BRMS7890&rerank=true",
      "GET /healthz",
    ]);
    assert.deepEqual(calls[2].body, { title: "New" });
    assert.deepEqual(calls[4].body, { invocation_id: "inv-1" });
    assert.deepEqual(calls[8].body, { max_saved_sessions: 50 });
    assert.deepEqual(calls[10].body, { zotero_data_dir: "/home/me/Zotero" });
    assert.equal(calls[12].init.headers.Authorization, undefined, "healthz needs no token");
  });

  test("storage stats and config come back without the status field", async () => {
    const { c } = client(() =>
      jsonResponse({ status: "success", size_bytes: 4096, session_count: 3 }),
    );
    assert.deepEqual(await c.storageStats(), { size_bytes: 4096, session_count: 3 });
  });

  test("the base URL is normalized", async () => {
    assert.equal(normalizeBaseURL("http://localhost:9000///"), "http://localhost:9000");
    assert.equal(normalizeBaseURL(""), "http://127.0.0.1:8765");
    const { c, calls } = client(() => jsonResponse({ status: "success", sessions: [] }), {
      baseURL: "http://localhost:9000/",
    });
    await c.listSessions();
    assert.equal(calls[0].url, "http://localhost:9000/sessions");
  });

  test("createClient checks its dependencies", () => {
    assert.throws(() => createClient({ getToken: () => "x" }), TypeError);
    assert.throws(() => createClient({ fetch: () => {} }), TypeError);
  });
});

describe("errors", () => {
  test("gateway down (fetch TypeError) says to start it with make run", async () => {
    const { c } = client(() => {
      throw new TypeError("fetch failed", { cause: { code: "ECONNREFUSED" } });
    });
    const err = await c.listSessions().catch((e) => e);
    assert.ok(err instanceof GatewayError);
    assert.equal(err.code, Codes.GATEWAY_DOWN);
    assert.equal(err.isGatewayDown, true);
    assert.match(err.message, /^Zocrates is not running: start it with `make run`/);
    assert.match(err.message, /127\.0\.0\.1:8765/);
  });

  test("a real refused connection (nothing listens) is gateway_down", async () => {
    const server = createServer();
    await new Promise((r) => server.listen(0, "127.0.0.1", r));
    const port = server.address().port;
    await new Promise((r) => server.close(r)); // the port is now closed
    const c = createClient({ fetch, getToken: () => "t", baseURL: `http://127.0.0.1:${port}` });
    const err = await c.health().catch((e) => e);
    assert.equal(err.code, Codes.GATEWAY_DOWN);
  });

  test("a fetch that rejects with nothing at all (as Zotero's can) is gateway_down, not undefined", async () => {
    const { c } = client(() => Promise.reject(undefined));
    const err = await c.health().catch((e) => e);
    assert.ok(err instanceof GatewayError);
    assert.equal(err.code, Codes.GATEWAY_DOWN);
    assert.match(err.message, /^Zocrates is not running/);
  });

  test("401 names the token file", async () => {
    const { c } = client(() =>
      jsonResponse(
        { status: "error", code: "unauthorized", message: "Missing or wrong bearer token." },
        401,
      ),
    );
    const err = await c.listSessions().catch((e) => e);
    assert.equal(err.code, Codes.UNAUTHORIZED);
    assert.equal(err.status, 401);
    assert.match(
      err.message,
      /wrong token: the plugin reads \/home\/me\/Zotero\/zocrates-data\/gateway\.token/,
    );
    assert.equal(err.serverMessage, "Missing or wrong bearer token.");
  });

  test("401 then a re-read token that changed: retried once with the new token", async () => {
    let reads = 0;
    const tokens = [];
    const fetch = async (url, init) => {
      tokens.push(init.headers.Authorization);
      return init.headers.Authorization === "Bearer new"
        ? jsonResponse({ status: "success", sessions: [{ id: "a" }] })
        : jsonResponse({ status: "error", code: "unauthorized", message: "no" }, 401);
    };
    const c = createClient({
      fetch,
      getToken: async ({ refresh }) => {
        reads += 1;
        return refresh ? "new" : "old";
      },
    });
    assert.deepEqual(await c.listSessions(), [{ id: "a" }]);
    assert.deepEqual(tokens, ["Bearer old", "Bearer new"]);
    assert.equal(reads, 2);
  });

  test("a missing token file is token_missing, with the path", async () => {
    const c = createClient({
      fetch: async () => jsonResponse({}),
      getToken: async () => {
        throw new Error("NotFoundError: Could not open the file");
      },
      tokenPath: TOKEN_PATH,
    });
    const err = await c.listSessions().catch((e) => e);
    assert.equal(err.code, Codes.TOKEN_MISSING);
    assert.match(
      err.message,
      /No gateway token at \/home\/me\/Zotero\/zocrates-data\/gateway\.token/,
    );
    const empty = createClient({ fetch: async () => jsonResponse({}), getToken: () => "  " });
    assert.equal((await empty.listSessions().catch((e) => e)).code, Codes.TOKEN_MISSING);
  });

  for (const [code, pattern] of [
    ["session_busy", /still working on another request/],
    ["checkpoint_pending", /paused at a deep-research checkpoint/],
    ["stale_interrupt", /already answered or discarded/],
  ]) {
    test(`409 ${code} has its own message`, async () => {
      const { c } = client(() =>
        jsonResponse({ status: "error", code, message: "server words" }, 409),
      );
      const err = await c.chat({ session_id: SESSION_ID, prompt: "q" }).catch((e) => e);
      assert.equal(err.code, code);
      assert.equal(err.status, 409);
      assert.equal(err.isConflict, true);
      assert.match(err.message, pattern);
      assert.equal(err.serverMessage, "server words");
    });
  }

  test("other gateway errors keep the server's message", async () => {
    const { c } = client(() =>
      jsonResponse(
        { status: "error", code: "sessions_unavailable", message: "The sessions service is down." },
        503,
      ),
    );
    const err = await c.getSession("s").catch((e) => e);
    assert.equal(err.code, "sessions_unavailable");
    assert.equal(err.message, "The sessions service is down.");
  });

  test("non-JSON error bodies", async () => {
    const { c } = client(() => new Response("<html>Bad gateway</html>", { status: 502 }));
    const err = await c.getSession("s").catch((e) => e);
    assert.equal(err.code, "http_502");
    assert.equal(err.message, "Zocrates answered with HTTP 502.");
  });

  test("a success body that is not JSON is bad_response", async () => {
    const { c } = client(() => new Response("nope", { status: 200 }));
    assert.equal((await c.getSession("s").catch((e) => e)).code, Codes.BAD_RESPONSE);
  });

  test("403 Host check explains the local-only rule", () => {
    assert.match(
      describeError({ code: "host_not_allowed", status: 403 }),
      /only answers local requests/,
    );
  });

  test("an abort is passed through as AbortError", async () => {
    const controller = new AbortController();
    const { c } = client((url, init) => {
      controller.abort();
      throw init.signal.reason ?? new DOMException("aborted", "AbortError");
    });
    const err = await c.listSessions({ signal: controller.signal }).catch((e) => e);
    assert.equal(err.name, "AbortError");
  });
});

describe("streams", () => {
  test("chat posts the body and yields parsed events", async () => {
    const events = chatStreamPaused();
    const { c, calls } = client(() => sseResponse(events, { size: 3 }));
    const body = { session_id: SESSION_ID, prompt: "q", active_items: null };
    const got = await collect(await c.chat(body));
    assert.deepEqual(got, events);
    assert.equal(calls[0].url, "http://127.0.0.1:8765/chat");
    assert.equal(calls[0].init.headers.Accept, "text/event-stream");
    assert.deepEqual(calls[0].body, body);
  });

  test("resume posts to /chat/resume", async () => {
    const { c, calls } = client(() =>
      sseResponse([{ event: "done", data: { status: "completed" } }]),
    );
    const got = await collect(
      await c.resume({ session_id: "s", invocation_id: "i", interrupt_id: "x" }),
    );
    assert.equal(calls[0].url, "http://127.0.0.1:8765/chat/resume");
    assert.deepEqual(got, [{ event: "done", data: { status: "completed" } }]);
  });

  test("a stream that stops before done ends with stream_interrupted", async () => {
    const events = chatStreamPaused().slice(0, 2);
    const { c } = client(() => sseResponse(events));
    const got = await collect(await c.chat({ session_id: "s", prompt: "q" }));
    assert.equal(got.length, 3);
    assert.equal(got[2].event, "error");
    assert.equal(got[2].data.code, Codes.STREAM_INTERRUPTED);
    assert.match(got[2].data.message, /connection to Zocrates was lost/);
  });

  test("a stream that breaks (network error mid-way) ends with stream_interrupted", async () => {
    const { c } = client(() => {
      let n = 0;
      const body = new ReadableStream({
        pull(controller) {
          if (n++ === 0)
            controller.enqueue(
              new TextEncoder().encode('event: message\ndata: {"kind":"step","parts":[]}\n\n'),
            );
          else controller.error(new TypeError("network error"));
        },
      });
      return new Response(body, { status: 200 });
    });
    const got = await collect(await c.chat({ session_id: "s", prompt: "q" }));
    assert.deepEqual(
      got.map((e) => e.event),
      ["message", "error"],
    );
    assert.equal(got[1].data.code, Codes.STREAM_INTERRUPTED);
  });

  test("aborting mid-stream rejects with the AbortError (no synthesized error event)", async () => {
    const { c } = client(() => {
      let n = 0;
      const body = new ReadableStream({
        pull(controller) {
          if (n++ === 0)
            controller.enqueue(
              new TextEncoder().encode('event: message\ndata: {"kind":"step","parts":[]}\n\n'),
            );
          else controller.error(new DOMException("The operation was aborted.", "AbortError"));
        },
      });
      return new Response(body, { status: 200 });
    });
    const seen = [];
    const err = await (async () => {
      for await (const e of await c.chat({ session_id: "s", prompt: "q" })) seen.push(e.event);
    })().catch((e) => e);
    assert.equal(err.name, "AbortError");
    assert.deepEqual(seen, ["message"]);
  });

  test("server error events get a display message", async () => {
    const { c } = client(() =>
      sseResponse([
        {
          event: "error",
          data: { status: "error", code: "lock_lost", message: "The lock was lost." },
        },
      ]),
    );
    const got = await collect(await c.chat({ session_id: "s", prompt: "q" }));
    assert.equal(got.length, 1);
    assert.equal(got[0].data.display, "The lock was lost.");
    assert.equal(got[0].data.code, "lock_lost");
  });

  test("a refused stream rejects before any event (409 checkpoint_pending)", async () => {
    const { c } = client(() =>
      jsonResponse({ status: "error", code: "checkpoint_pending", message: "waiting" }, 409),
    );
    await assert.rejects(
      () => c.chat({ session_id: "s", prompt: "q" }),
      (e) => e.code === "checkpoint_pending",
    );
  });

  test("library sync streams progress then done", async () => {
    const events = [
      { event: "progress", data: { phase: "indexing", items_done: 1, items_total: 2 } },
      { event: "progress", data: { phase: "indexing", items_done: 2, items_total: 2 } },
      { event: "done", data: { phase: "done", items_done: 2, items_total: 2 } },
    ];
    const { c, calls } = client(() => sseResponse(events, { size: 5 }));
    assert.deepEqual(await collect(await c.librarySync({ full: true })), events);
    assert.equal(calls[0].url, "http://127.0.0.1:8765/library/sync");
    assert.deepEqual(calls[0].body, { full: true });
  });

  test("against a real HTTP server: chunked SSE, token, 409", async () => {
    const seen = [];
    const want = chatStreamPaused();
    const server = createServer((req, res) => {
      seen.push({ url: req.url, auth: req.headers.authorization });
      if (req.url === "/chat/resume") {
        res.writeHead(409, { "content-type": "application/json" });
        res.end(JSON.stringify({ status: "error", code: "stale_interrupt", message: "stale" }));
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      const frames = want
        .map(({ event, data }) => `event: ${event}\r\ndata: ${JSON.stringify(data)}\r\n\r\n`)
        .join("");
      const bytes = Buffer.from(frames);
      let i = 0;
      const timer = setInterval(() => {
        if (i >= bytes.length) {
          clearInterval(timer);
          res.end();
          return;
        }
        res.write(bytes.subarray(i, i + 11));
        i += 11;
      }, 1);
    });
    await new Promise((r) => server.listen(0, "127.0.0.1", r));
    try {
      const c = createClient({
        fetch,
        getToken: () => "secret",
        baseURL: `http://127.0.0.1:${server.address().port}`,
      });
      const got = await collect(await c.chat({ session_id: "s", prompt: "q" }));
      assert.deepEqual(got, want);
      assert.deepEqual(
        got.map((e) => e.event),
        ["message", "message", "message", "message", "message", "request_input", "done"],
      );
      const err = await c
        .resume({ session_id: "s", invocation_id: "i", interrupt_id: "x" })
        .catch((e) => e);
      assert.equal(err.code, "stale_interrupt");
      assert.deepEqual(
        seen.map((s) => s.auth),
        ["Bearer secret", "Bearer secret"],
      );
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});

describe("a model server's models (GET /models/local, POST /models/test)", () => {
  const LOCAL = {
    status: "ok",
    api_base: "http://127.0.0.1:8080/v1",
    server: "openai",
    models: [
      { id: "smollm2", model: "openai/smollm2", context_window: 4096 },
      { id: "qwen2.5:0.5b", model: "openai/qwen2.5:0.5b", context_window: null },
    ],
  };
  const TESTED = {
    status: "ok",
    model: "openai/smollm2",
    reply: "Hello!",
    seconds: 1.23,
    prompt_tokens: 20,
    completion_tokens: 8,
    tokens_per_second: 41.2,
    context_window: 4096,
    tool_calling: false,
  };

  test("localModels: GET with the base URL encoded in the query, the token, the signal", async () => {
    const { c, calls } = client(() => jsonResponse(LOCAL));
    const { signal } = new AbortController();
    const body = await c.localModels("http://127.0.0.1:8080/v1?x=a b&y=1", { signal });
    assert.equal(
      calls[0].url,
      "http://127.0.0.1:8765/models/local?api_base=" +
        "http%3A%2F%2F127.0.0.1%3A8080%2Fv1%3Fx%3Da+b%26y%3D1",
    );
    assert.equal(
      new URL(calls[0].url).searchParams.get("api_base"),
      "http://127.0.0.1:8080/v1?x=a b&y=1",
    );
    assert.equal(calls[0].init.method, "GET");
    assert.equal(calls[0].init.headers.Authorization, "Bearer tok-1");
    assert.equal(calls[0].init.body, undefined);
    assert.equal(calls[0].init.signal, signal);
    // the payload without its status field
    const { status: _status, ...rest } = LOCAL;
    assert.deepEqual(body, rest);
    assert.equal(body.models[0].model, "openai/smollm2");
  });

  test("testModel: POST of the model and the base URL as JSON", async () => {
    const { c, calls } = client(() => jsonResponse(TESTED));
    const { signal } = new AbortController();
    const result = await c.testModel("openai/smollm2", "http://127.0.0.1:8080/v1", { signal });
    assert.equal(calls[0].url, "http://127.0.0.1:8765/models/test");
    assert.equal(calls[0].init.method, "POST");
    assert.equal(calls[0].init.headers.Authorization, "Bearer tok-1");
    assert.equal(calls[0].init.headers["Content-Type"], "application/json");
    assert.deepEqual(calls[0].body, {
      model: "openai/smollm2",
      api_base: "http://127.0.0.1:8080/v1",
    });
    assert.equal(calls[0].init.signal, signal);
    assert.equal(result.status, undefined);
    assert.equal(result.reply, "Hello!");
    // the gateway's usual "success" is dropped the same way
    const usual = client(() => jsonResponse({ ...TESTED, status: "success" })).c;
    assert.equal((await usual.testModel("openai/smollm2", "")).status, undefined);
    const listed = client(() => jsonResponse({ ...LOCAL, status: "success" })).c;
    assert.equal((await listed.localModels(LOCAL.api_base)).status, undefined);
    assert.equal(result.tokens_per_second, 41.2);
    assert.equal(result.tool_calling, false);
    // without a base URL (a hosted model): an empty one, as the config has it
    await c.testModel("gemini-2.5-flash");
    assert.deepEqual(calls[1].body, { model: "gemini-2.5-flash", api_base: "" });
  });

  for (const [status, code, message] of [
    [400, "invalid_api_base", "The model server URL must start with http:// or https://."],
    [400, "invalid_model", "Enter a model name such as openai/smollm2."],
    [503, "model_server_unreachable", "Nothing answers at http://127.0.0.1:8080/v1: start it."],
    [503, "model_server_error", "The model server answered HTTP 500: out of memory."],
    [503, "model_test_failed", "The model did not answer within 60 s."],
  ])
    test(`${status} ${code}: the gateway's message, as it is`, async () => {
      const { c } = client(() => jsonResponse({ status: "error", code, message }, status));
      for (const call of [
        () => c.localModels("http://127.0.0.1:8080/v1"),
        () => c.testModel("openai/smollm2", "http://127.0.0.1:8080/v1"),
      ]) {
        const err = await call().catch((e) => e);
        assert.ok(err instanceof GatewayError);
        assert.equal(err.code, code);
        assert.equal(err.status, status);
        assert.equal(err.message, message);
        assert.equal(err.serverMessage, message);
      }
    });

  test("the gateway's own failures keep their actionable messages", async () => {
    const down = client(() => {
      throw new TypeError("fetch failed", { cause: { code: "ECONNREFUSED" } });
    }).c;
    const err = await down.localModels("http://127.0.0.1:8080/v1").catch((e) => e);
    assert.equal(err.code, Codes.GATEWAY_DOWN);
    assert.match(err.message, /^Zocrates is not running/);
    const refused = client(() =>
      jsonResponse({ status: "error", code: "unauthorized", message: "no" }, 401),
    ).c;
    const denied = await refused.testModel("openai/smollm2", "").catch((e) => e);
    assert.equal(denied.code, Codes.UNAUTHORIZED);
    assert.match(denied.message, /wrong token/);
    const garbled = client(() => new Response("<html>", { status: 200 })).c;
    assert.equal(
      (await garbled.testModel("openai/smollm2", "").catch((e) => e)).code,
      Codes.BAD_RESPONSE,
    );
  });

  test("an abort rejects with the AbortError", async () => {
    const controller = new AbortController();
    const { c } = client((url, init) => {
      controller.abort();
      throw init.signal.reason ?? new DOMException("aborted", "AbortError");
    });
    const err = await c
      .testModel("openai/smollm2", "http://127.0.0.1:8080/v1", { signal: controller.signal })
      .catch((e) => e);
    assert.equal(err.name, "AbortError");
  });
});
