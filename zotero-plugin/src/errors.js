/**
 * Errors from the gateway, with messages a Zotero user can act on.
 *
 * The gateway answers every failure as `{"status": "error", "code", "message"}` with a stable
 * `code`; the plugin adds its own codes for what happens before an answer (`gateway_down`,
 * `token_missing`) or during a stream (`stream_interrupted`). `describeError` turns a code into
 * the sentence the chat pane shows, in the user's language when it is given a localization's
 * `t` (api.js's client passes its own); the gateway's own message is kept on `serverMessage`.
 */

export const DEFAULT_TOKEN_PATH = "<Zotero data dir>/zocrates-data/gateway.token";

/** Codes the plugin itself produces (the gateway's are passed through as they are). */
export const Codes = Object.freeze({
  GATEWAY_DOWN: "gateway_down",
  TOKEN_MISSING: "token_missing",
  UNAUTHORIZED: "unauthorized",
  STREAM_INTERRUPTED: "stream_interrupted",
  BAD_RESPONSE: "bad_response",
  SESSION_BUSY: "session_busy",
  CHECKPOINT_PENDING: "checkpoint_pending",
  STALE_INTERRUPT: "stale_interrupt",
  SESSION_NOT_FOUND: "session_not_found",
});

/**
 * The sentence to show for an error: the Fluent message `zocrates-error-*` (addon.ftl) when
 * the context has a localization's `t(id, args)`, else English.
 * @param {{code?: string, status?: number, message?: string}} error
 * @param {{baseURL?: string, tokenPath?: string, t?: (id: string, args?: object) => string}} [context]
 */
export function describeError(error, context = {}) {
  const code = error?.code || "";
  const status = error?.status || 0;
  const server = (error?.message || "").trim();
  const baseURL = context.baseURL || "http://127.0.0.1:8765";
  const tokenPath = context.tokenPath || DEFAULT_TOKEN_PATH;
  const say = (id, args, english) => {
    const text = context.t ? context.t(id, args) : id;
    return text === id ? english : text;
  };
  switch (code) {
    case Codes.GATEWAY_DOWN:
      return say(
        "zocrates-error-gateway-down",
        { url: baseURL },
        "Zocrates is not running: start it with `make run` in your Zocrates folder, then try " +
          `again (nothing answered at ${baseURL}).`,
      );
    case Codes.TOKEN_MISSING:
      return say(
        "zocrates-error-token-missing",
        { path: tokenPath },
        `No gateway token at ${tokenPath}: start Zocrates with \`make run\` for this Zotero ` +
          "data directory (it writes the token there when it starts), then try again.",
      );
    case Codes.UNAUTHORIZED:
      return (
        say(
          "zocrates-error-unauthorized",
          { path: tokenPath },
          `Zocrates refused the request, wrong token: the plugin reads ${tokenPath}, ` +
            "which the gateway writes when it starts. Restart Zocrates (`make run`) for this " +
            "Zotero data directory; if you set ZOCRATES_GATEWAY_TOKEN, that file must hold the " +
            "same token.",
        ) +
        (server
          ? ` ${say("zocrates-error-gateway-said", { server }, `(The gateway said: ${server})`)}`
          : "")
      );
    case "host_not_allowed":
    case "forbidden":
      return say(
        "zocrates-error-host-not-allowed",
        { url: baseURL },
        "Zocrates only answers local requests: set the gateway URL in Zocrates's settings " +
          `to http://127.0.0.1 or http://localhost with its port (now ${baseURL}).`,
      );
    case Codes.SESSION_BUSY:
      return say(
        "zocrates-error-session-busy",
        {},
        "This chat is still working on another request. Wait until it finishes (or stop " +
          "it), then try again.",
      );
    case Codes.CHECKPOINT_PENDING:
      return say(
        "zocrates-error-checkpoint-pending",
        {},
        "This chat is paused at a deep-research checkpoint. Answer the card first — grant " +
          "an extension or synthesize with the evidence found so far — or discard that turn, " +
          "before asking something new.",
      );
    case Codes.STALE_INTERRUPT:
      return say(
        "zocrates-error-stale-interrupt",
        {},
        "This checkpoint was already answered or discarded (perhaps in another window). " +
          "Reload the chat to see where it stands.",
      );
    case Codes.SESSION_NOT_FOUND:
      return say(
        "zocrates-error-session-not-found",
        {},
        "This chat no longer exists (it was deleted, or removed by the retention settings). " +
          "Pick another chat or start a new one.",
      );
    case Codes.STREAM_INTERRUPTED:
      return say(
        "zocrates-error-stream-interrupted",
        {},
        "The connection to Zocrates was lost before the answer finished. Reload the chat to " +
          "see what was saved.",
      );
    case Codes.BAD_RESPONSE:
      return (
        server ||
        say(
          "zocrates-error-bad-response",
          { status },
          `Zocrates sent an answer the plugin could not read (HTTP ${status}).`,
        )
      );
    default:
      if (server) return server;
      return status
        ? say("zocrates-error-http-status", { status }, `Zocrates answered with HTTP ${status}.`)
        : say("zocrates-error-failed", {}, "Zocrates failed.");
  }
}

export class GatewayError extends Error {
  /**
   * @param {{code: string, status?: number, message?: string, context?: object, cause?: unknown}} init
   *   `message` is the gateway's (or the cause's) text; the error's own message is the
   *   actionable one from describeError (context: {baseURL, tokenPath, t}).
   */
  constructor({ code, status = 0, message = "", context = {}, cause } = {}) {
    super(describeError({ code, status, message }, context), cause ? { cause } : undefined);
    this.name = "GatewayError";
    this.code = code;
    this.status = status;
    this.serverMessage = message;
  }

  /** A 409 the user can resolve (busy session, pending or stale checkpoint). */
  get isConflict() {
    return this.status === 409;
  }

  /** Nothing answered: the gateway is not running. */
  get isGatewayDown() {
    return this.code === Codes.GATEWAY_DOWN;
  }

  /** The `{status, code, message}` shape of an SSE `error` event. */
  toEvent() {
    return { status: "error", code: this.code, message: this.message, http_status: this.status };
  }
}

export function isAbortError(err) {
  return !!err && (err.name === "AbortError" || err.code === 20);
}
