/**
 * Client of the Zocrates gateway (http://127.0.0.1:8765 by default).
 *
 * Everything it needs is injected: `fetch` (Zotero's, a browser's, Node's or a fake) and
 * `getToken({refresh})`, which returns the bearer token (in Zotero: the contents of
 * `<data dir>/zocrates-data/gateway.token`). It holds no Zotero or DOM globals.
 *
 * Failures become `GatewayError`s (see errors.js) whose message says what to do. Streaming
 * routes (`chat`, `resume`, `librarySync`) resolve once the gateway has accepted the request
 * — a refusal such as 409 `checkpoint_pending` rejects the promise — to an async iterator of
 * `{event, data}` with `data` parsed from JSON. A stream that breaks off ends with a
 * synthesized `error` event (`stream_interrupted`), so a consumer always sees a last `done`
 * or `error`. Aborting through `signal` rejects with the AbortError.
 */

import { Codes, GatewayError, isAbortError } from "./errors.js";
import { iterateSSE } from "./sse.js";

export const DEFAULT_BASE_URL = "http://127.0.0.1:8765";

/** Remove trailing slashes; keep the rest of the URL as the user wrote it. */
export function normalizeBaseURL(url) {
  const value = String(url || "").trim() || DEFAULT_BASE_URL;
  return value.replace(/\/+$/, "");
}

/**
 * @param {object} options
 * @param {typeof fetch} options.fetch
 * @param {(opts: {refresh: boolean}) => Promise<string> | string} options.getToken
 * @param {string} [options.baseURL]
 * @param {string} [options.tokenPath] shown in error messages (where the token is read from)
 * @param {(id: string, args?: object) => string} [options.t] a localization's t (l10n.js): error
 *   messages in the user's language (English without it)
 */
export function createClient({
  fetch: fetchImpl,
  getToken,
  baseURL = DEFAULT_BASE_URL,
  tokenPath,
  t,
} = {}) {
  if (typeof fetchImpl !== "function") throw new TypeError("createClient needs a fetch function");
  if (typeof getToken !== "function") throw new TypeError("createClient needs getToken()");
  const base = normalizeBaseURL(baseURL);
  const context = { baseURL: base, tokenPath, t };

  const fail = (init) => new GatewayError({ ...init, context });

  async function token(refresh) {
    let value;
    try {
      value = await getToken({ refresh });
    } catch (err) {
      if (err instanceof GatewayError) throw err;
      throw fail({ code: Codes.TOKEN_MISSING, message: String(err?.message || err), cause: err });
    }
    value = typeof value === "string" ? value.trim() : "";
    if (!value) throw fail({ code: Codes.TOKEN_MISSING });
    return value;
  }

  async function errorFrom(res) {
    let text = "";
    try {
      text = await res.text();
    } catch {
      // body unreadable: keep the status alone
    }
    let body;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = null;
    }
    let code = body && typeof body.code === "string" ? body.code : `http_${res.status}`;
    const message = body && typeof body.message === "string" ? body.message : "";
    if (res.status === 401) code = Codes.UNAUTHORIZED;
    return fail({ code, status: res.status, message });
  }

  /**
   * One HTTP exchange. Retries once on 401 when a re-read token differs (the gateway was
   * restarted with another token while Zotero kept running).
   */
  async function request(
    method,
    path,
    { body, signal, auth = true, accept = "application/json" } = {},
  ) {
    const url = base + path;
    let current = auth ? await token(false) : "";
    for (let attempt = 0; ; attempt++) {
      const headers = { Accept: accept };
      if (auth) headers.Authorization = `Bearer ${current}`;
      if (body !== undefined) headers["Content-Type"] = "application/json";
      let res;
      try {
        res = await fetchImpl(url, {
          method,
          headers,
          body: body === undefined ? undefined : JSON.stringify(body),
          signal,
        });
      } catch (err) {
        if (isAbortError(err)) throw err;
        // fetch rejects only when no answer came: a refused connection (a TypeError), or in
        // Zotero a rejection with nothing at all. Either way the gateway cannot be reached.
        const reason = err?.message || (err == null ? "" : String(err));
        throw fail({ code: Codes.GATEWAY_DOWN, message: reason, cause: err });
      }
      if (res.status === 401 && auth && attempt === 0) {
        const fresh = await token(true).catch(() => current);
        if (fresh !== current) {
          await res.text().catch(() => "");
          current = fresh;
          continue;
        }
      }
      if (!res.ok) throw await errorFrom(res);
      return res;
    }
  }

  async function json(method, path, options) {
    const res = await request(method, path, options);
    if (res.status === 204) return {};
    const text = await res.text();
    try {
      return text ? JSON.parse(text) : {};
    } catch (err) {
      throw fail({ code: Codes.BAD_RESPONSE, status: res.status, cause: err });
    }
  }

  function interrupted(cause) {
    return fail({
      code: Codes.STREAM_INTERRUPTED,
      message: cause ? String(cause?.message || cause) : "",
      cause,
    }).toEvent();
  }

  async function* events(res, terminals) {
    let ended = false;
    try {
      for await (const raw of iterateSSE(res.body)) {
        let data;
        try {
          data = raw.data ? JSON.parse(raw.data) : {};
        } catch {
          data = { text: raw.data };
        }
        if (raw.event === "error" && data && typeof data === "object") {
          const display = new GatewayError({ code: data.code, message: data.message, context })
            .message;
          data = { ...data, display: data.display || display };
        }
        yield { event: raw.event, data };
        if (terminals.includes(raw.event)) ended = true;
      }
    } catch (err) {
      if (isAbortError(err)) throw err;
      yield { event: "error", data: interrupted(err) };
      return;
    }
    if (!ended) yield { event: "error", data: interrupted(null) };
  }

  async function stream(path, body, { signal } = {}, terminals = ["done", "error"]) {
    const res = await request("POST", path, { body, signal, accept: "text/event-stream" });
    return events(res, terminals);
  }

  const sid = (id) => encodeURIComponent(String(id));

  return {
    baseURL: base,
    tokenPath,
    request,

    /** GET /healthz (no token): `{status: "ok"}`. */
    health: ({ signal } = {}) => json("GET", "/healthz", { auth: false, signal }),
    /** POST /register: point the gateway at Zotero's data directory. */
    register: (zoteroDataDir, { signal } = {}) =>
      json("POST", "/register", { body: { zotero_data_dir: zoteroDataDir }, signal }),

    /** GET /sessions: manifests `{id, title, created_at, updated_at, event_count}`, oldest first. */
    listSessions: async ({ signal } = {}) =>
      (await json("GET", "/sessions", { signal })).sessions || [],
    /** POST /sessions: the new formatted session. */
    createSession: async (title, { signal } = {}) =>
      (await json("POST", "/sessions", { body: title ? { title } : {}, signal })).session,
    /** GET /sessions/{id}: `{id, title, created_at, updated_at, messages, pending_hitl}`. */
    getSession: async (id, { signal } = {}) =>
      (await json("GET", `/sessions/${sid(id)}`, { signal })).session,
    /** PATCH /sessions/{id}. */
    renameSession: async (id, title, { signal } = {}) =>
      (await json("PATCH", `/sessions/${sid(id)}`, { body: { title }, signal })).session,
    /** DELETE /sessions/{id} (409 session_busy while a chat runs on it). */
    deleteSession: async (id, { signal } = {}) => {
      await json("DELETE", `/sessions/${sid(id)}`, { signal });
    },
    /** POST /sessions/{id}/rewind: discard that turn and everything after; the session now. */
    rewind: async (id, invocationId, { signal } = {}) =>
      (
        await json("POST", `/sessions/${sid(id)}/rewind`, {
          body: { invocation_id: invocationId },
          signal,
        })
      ).session,
    /** GET /sessions/{id}/images/{sha256}: an image a question of the chat carried,
     * `{mime_type, data}` (base64), by the sha256 its message's context names. */
    getImage: async (id, sha256, { signal } = {}) =>
      (await json("GET", `/sessions/${sid(id)}/images/${encodeURIComponent(sha256)}`, { signal }))
        .image,
    /** GET /sessions/storage_stats: size_bytes, page_count, freelist_count, session_count, ... */
    storageStats: async ({ signal } = {}) =>
      strip(await json("GET", "/sessions/storage_stats", { signal })),
    /** POST /sessions/maintenance: the maintenance report (deleted, vacuumed, ...). */
    maintenance: async ({ signal } = {}) =>
      strip(await json("POST", "/sessions/maintenance", { signal })),

    /** GET /config: `{config, path, reference}`. */
    getConfig: async ({ signal } = {}) => strip(await json("GET", "/config", { signal })),
    /** PUT /config with some keys: the whole validated config. */
    putConfig: async (changes, { signal } = {}) =>
      (await json("PUT", "/config", { body: changes, signal })).config,

    /** GET /library/status. */
    libraryStatus: async ({ signal } = {}) =>
      strip(await json("GET", "/library/status", { signal })),
    /** POST /library/prioritize: embed these items first (the paper open in the reader). */
    prioritize: async (itemKeys, { signal } = {}) =>
      strip(await json("POST", "/library/prioritize", { body: { item_keys: itemKeys }, signal })),
    /** POST /library/sync: events `progress` ..., then `done` or `error`. */
    librarySync: ({ full = false, followEmbedding = false } = {}, options = {}) =>
      stream(
        "/library/sync",
        { ...(full ? { full: true } : {}), ...(followEmbedding ? { follow_embedding: true } : {}) },
        options,
      ),
    /** GET /library/search. */
    search: async (q, { k = 10, itemKeys, collection, mode, rerank, signal } = {}) => {
      const params = new URLSearchParams({ q, k: String(k) });
      for (const key of itemKeys || []) params.append("item_keys", key);
      if (collection) params.set("collection", collection);
      if (mode) params.set("mode", mode);
      if (rerank) params.set("rerank", "true");
      return strip(await json("GET", `/library/search?${params}`, { signal }));
    },

    /**
     * GET /models/local: what the model server at `apiBase` (an OpenAI-compatible or Ollama
     * server) lists, `{api_base, server: "openai" | "ollama", models: [{id, model,
     * context_window}]}`; `model` is the name a role's model field takes.
     */
    localModels: async (apiBase, { signal } = {}) =>
      strip(
        await json("GET", `/models/local?${new URLSearchParams({ api_base: apiBase ?? "" })}`, {
          signal,
        }),
        MODELS_OK,
      ),
    /**
     * POST /models/test: one short reply of `model` through `apiBase`, timed: `{model, reply,
     * seconds, prompt_tokens, completion_tokens, tokens_per_second, context_window,
     * tool_calling}` (context_window, tool_calling: null when unknown).
     */
    testModel: async (model, apiBase, { signal } = {}) =>
      strip(
        await json("POST", "/models/test", { body: { model, api_base: apiBase ?? "" }, signal }),
        MODELS_OK,
      ),

    /** POST /chat: events `message`..., maybe `request_input`, then `done` or `error`. */
    chat: (body, options = {}) => stream("/chat", body, options),
    /** POST /chat/resume: the paused turn continues in the same format. */
    resume: (body, options = {}) => stream("/chat/resume", body, options),
  };
}

/** The /models routes' success: `"success"` as every route's, or `"ok"`. */
const MODELS_OK = ["success", "ok"];

/** The payload without its `status` field when that is one of `ok`. */
function strip(body, ok = ["success"]) {
  if (body && typeof body === "object" && ok.includes(body.status)) {
    const { status: _status, ...rest } = body;
    return rest;
  }
  return body;
}
