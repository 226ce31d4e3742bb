/**
 * The harness's HTTP server: serves test-ui/harness.html, the plugin's stylesheet and the
 * esbuild bundle of test-ui/harness-entry.js, and proxies /gateway/* to the real gateway on
 * the same origin (the gateway has no CORS and checks the Host header: the proxy sends the
 * gateway's own host, and passes the page's bearer token through).
 *
 * Server-sent events are relayed frame by frame as they arrive, never buffered. `control`
 * lets the runner pace or pause them, make the gateway look down (the socket is dropped, so
 * the page's fetch fails as it does when nothing listens) or hand out a wrong token.
 *
 * With `control.models` set, the harness answers the gateway's model-server routes itself
 * (GET /models/local, POST /models/test: no model server runs in the test), with what
 * `control.models.local({apiBase})` and `control.models.test({model, apiBase})` return:
 * `{status?, body}` (or a promise of it; `body` a success or the gateway's error envelope).
 */
import { build } from "esbuild";
import { readFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const PLUGIN_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

const STATIC = {
  "/": ["test-ui/harness.html", "text/html; charset=utf-8"],
  "/index.html": ["test-ui/harness.html", "text/html; charset=utf-8"],
  "/test-ui/harness.css": ["test-ui/harness.css", "text/css; charset=utf-8"],
  "/addon/content/sidebar.css": ["addon/content/sidebar.css", "text/css; charset=utf-8"],
};

const HOP_BY_HOP = [
  "host",
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
  "te",
  "trailer",
  "origin",
  "referer",
  "cookie",
  "accept-encoding",
];

/** Bundle the harness from the plugin's sources (in memory). */
export async function bundleHarness() {
  const result = await build({
    entryPoints: [path.join(PLUGIN_ROOT, "test-ui", "harness-entry.js")],
    bundle: true,
    format: "iife",
    target: ["chrome110", "firefox115"],
    platform: "browser",
    write: false,
    sourcemap: "inline",
    loader: { ".ftl": "text" },
    logLevel: "warning",
  });
  return result.outputFiles[0].text;
}

function deferred() {
  let resolve;
  const promise = new Promise((r) => (resolve = r));
  return { promise, resolve };
}

export function createControl() {
  const control = {
    down: false,
    wrongToken: false,
    paceMs: 0, // delay before each partial answer frame
    partialFrames: 0,
    requests: [],
    models: null, // {local, test}: the model-server routes answered here (see above)
    modelCalls: [], // what the page sent them: {method, url, body}
    _hold: null,
    /**
     * Pause the next SSE stream of `pathPrefix` once `count` frames matching `match` went
     * through. Returns {reached: Promise, release()}.
     */
    holdAfter(
      count,
      {
        pathPrefix = "/gateway/chat",
        match = (f) => /"partial": true/.test(f) && /"kind": "answer"/.test(f),
      } = {},
    ) {
      const reached = deferred();
      const released = deferred();
      control._hold = { count, pathPrefix, match, seen: 0, reached, released };
      return { reached: reached.promise, release: () => released.resolve() };
    },
  };
  return control;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function relaySSE(up, res, reqPath, control) {
  let closed = false;
  res.on("close", () => {
    closed = true;
    up.destroy(); // the page stopped reading (Stop, reload): the gateway sees the disconnect
  });
  up.setEncoding("utf8");
  let buf = "";
  const hold = control._hold && reqPath.startsWith(control._hold.pathPrefix) ? control._hold : null;
  if (hold) control._hold = null;
  for await (const chunk of up) {
    buf += chunk;
    for (let idx = buf.indexOf("\n\n"); idx !== -1; idx = buf.indexOf("\n\n")) {
      const frame = buf.slice(0, idx + 2);
      buf = buf.slice(idx + 2);
      const partial = /"partial": true/.test(frame) && /"kind": "answer"/.test(frame);
      if (partial) {
        control.partialFrames += 1;
        if (control.paceMs > 0) await sleep(control.paceMs);
      }
      if (closed) return;
      res.write(frame);
      if (hold && hold.match(frame)) {
        hold.seen += 1;
        if (hold.seen === hold.count) {
          hold.reached.resolve({ frame });
          await hold.released.promise;
        }
      }
    }
  }
  if (buf && !closed) res.write(buf);
  res.end();
}

const MODEL_ROUTES = {
  "GET /gateway/models/local": (handlers, url) =>
    handlers.local({ apiBase: url.searchParams.get("api_base") }),
  "POST /gateway/models/test": (handlers, _url, body) =>
    handlers.test({ model: body?.model, apiBase: body?.api_base }),
};

/** The model-server routes as the gateway answers them, from `control.models`. */
async function fakeModels(req, res, url, control) {
  control.requests.push(`${req.method} ${req.url}`);
  let text = "";
  for await (const chunk of req) text += chunk;
  const send = (status, body) => {
    res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
    res.end(JSON.stringify(body));
  };
  if (!/^Bearer \S+/.test(req.headers.authorization || ""))
    return send(401, { status: "error", code: "unauthorized", message: "Missing bearer token." });
  let body;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    return send(400, { status: "error", code: "bad_request", message: "Not JSON." });
  }
  control.modelCalls.push({ method: req.method, url: req.url, body });
  const answer = await MODEL_ROUTES[`${req.method} ${url.pathname}`](control.models, url, body);
  send(answer.status || 200, answer.body);
}

function proxy(req, res, gateway, control) {
  const reqPath = req.url;
  control.requests.push(`${req.method} ${reqPath}`);
  if (control.down) {
    // Nothing answers: drop the connection, as a refused connection looks to fetch.
    req.socket.destroy();
    return;
  }
  const target = new URL(reqPath.replace(/^\/gateway/, "") || "/", gateway);
  const headers = {};
  for (const [k, v] of Object.entries(req.headers)) if (!HOP_BY_HOP.includes(k)) headers[k] = v;
  headers["accept-encoding"] = "identity";
  // A gateway that does not accept the token the plugin holds (restarted with another one).
  if (control.wrongToken && headers.authorization)
    headers.authorization = "Bearer not-the-gateway-token";
  const upstream = http.request(target, { method: req.method, headers, agent: false }, (up) => {
    const sse = String(up.headers["content-type"] || "").includes("text/event-stream");
    const out = { ...up.headers };
    delete out["content-length"];
    delete out.connection;
    delete out["transfer-encoding"];
    if (sse) {
      out["cache-control"] = "no-cache";
      out["x-accel-buffering"] = "no";
      res.writeHead(up.statusCode, out);
      res.flushHeaders();
      relaySSE(up, res, reqPath, control).catch(() => res.end());
    } else {
      res.writeHead(up.statusCode, out);
      up.pipe(res);
    }
  });
  upstream.on("error", () => {
    if (!res.headersSent) req.socket.destroy();
    else res.end();
  });
  req.pipe(upstream);
}

/**
 * Start the harness server on 127.0.0.1 (a free port).
 * @param {{gateway: string, readToken: () => string, fixture: object, bundle: string, control}} options
 */
export async function startServer({ gateway, readToken, fixture, bundle, control }) {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, "http://harness");
    try {
      if (control.models && MODEL_ROUTES[`${req.method} ${url.pathname}`])
        return void fakeModels(req, res, url, control).catch((err) => {
          if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
          res.end(String(err?.stack || err));
        });
      if (url.pathname.startsWith("/gateway/") || url.pathname === "/gateway")
        return proxy(req, res, gateway, control);
      if (url.pathname === "/build/harness.js") {
        res.writeHead(200, {
          "content-type": "text/javascript; charset=utf-8",
          "cache-control": "no-store",
        });
        return res.end(bundle);
      }
      if (url.pathname === "/harness/token") {
        // What the plugin reads from <data dir>/zocrates-data/gateway.token.
        res.writeHead(200, { "content-type": "text/plain", "cache-control": "no-store" });
        return res.end(`${readToken()}\n`);
      }
      if (url.pathname === "/harness/fixture.json") {
        res.writeHead(200, { "content-type": "application/json", "cache-control": "no-store" });
        return res.end(JSON.stringify(fixture));
      }
      const file = STATIC[url.pathname];
      if (file) {
        res.writeHead(200, { "content-type": file[1], "cache-control": "no-store" });
        return res.end(readFileSync(path.join(PLUGIN_ROOT, file[0])));
      }
      if (url.pathname === "/favicon.ico") {
        res.writeHead(204);
        return res.end();
      }
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("not found");
    } catch (err) {
      res.writeHead(500, { "content-type": "text/plain" });
      res.end(String(err?.stack || err));
    }
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    server,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections?.();
        server.close(() => r());
      }),
  };
}
