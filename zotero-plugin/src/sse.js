/**
 * Incremental parser of server-sent events (the `text/event-stream` format).
 *
 * Feed it chunks exactly as they come off the wire — bytes (Uint8Array) or text, split
 * anywhere, even inside a multi-byte UTF-8 character or between the `\r` and `\n` of a line
 * end — and it returns the events each chunk completes. `end()` flushes what is left,
 * including a last event that had no blank line after it.
 *
 * Follows the WHATWG parsing rules: lines end with `\r\n`, `\n` or `\r`; a line starting
 * with `:` is a comment; `field: value` loses one leading space of its value; several `data`
 * lines are joined with `\n`; a blank line dispatches the event (when it has data); the event
 * type defaults to "message". No globals beyond TextDecoder (Node, Firefox and browsers).
 */

/** @typedef {{event: string, data: string, id: string}} SSEEvent */

export class SSEParser {
  constructor() {
    this._decoder = new TextDecoder("utf-8");
    this._buffer = "";
    this._sawCR = false; // the previous chunk ended with "\r": a "\n" now belongs to it
    this._started = false;
    this._resetEvent();
    this.lastEventId = "";
    /** @type {number | null} reconnection time the server asked for, in ms */
    this.retry = null;
  }

  _resetEvent() {
    this._type = "";
    this._data = [];
    this._hasData = false;
  }

  /**
   * @param {string | Uint8Array | ArrayBuffer} chunk
   * @returns {SSEEvent[]} the events this chunk completed
   */
  feed(chunk) {
    let text;
    if (typeof chunk === "string") {
      text = chunk;
    } else if (chunk instanceof ArrayBuffer) {
      text = this._decoder.decode(new Uint8Array(chunk), { stream: true });
    } else if (ArrayBuffer.isView(chunk)) {
      text = this._decoder.decode(chunk, { stream: true });
    } else {
      throw new TypeError("SSEParser.feed takes a string or bytes");
    }
    return this._consume(text, false);
  }

  /**
   * The stream ended: decode any bytes still held and dispatch a last event that was not
   * followed by a blank line.
   * @returns {SSEEvent[]}
   */
  end() {
    const rest = this._decoder.decode();
    const events = this._consume(rest, true);
    if (this._buffer.length) {
      this._line(this._buffer, events);
      this._buffer = "";
    }
    this._dispatch(events);
    return events;
  }

  _consume(text, final) {
    const events = [];
    if (!this._started && text.length) {
      this._started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    if (this._sawCR && text.length) {
      this._sawCR = false;
      if (text[0] === "\n") text = text.slice(1);
    }
    const buf = this._buffer + text;
    let start = 0;
    for (let i = 0; i < buf.length; i++) {
      const c = buf.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      const line = buf.slice(start, i);
      if (c === 13) {
        if (i + 1 < buf.length) {
          if (buf.charCodeAt(i + 1) === 10) i++;
        } else if (!final) {
          this._sawCR = true;
        }
      }
      start = i + 1;
      this._line(line, events);
    }
    this._buffer = buf.slice(start);
    return events;
  }

  _line(line, events) {
    if (line === "") {
      this._dispatch(events);
      return;
    }
    if (line[0] === ":") return; // comment (keep-alive)
    const colon = line.indexOf(":");
    let field;
    let value;
    if (colon === -1) {
      field = line;
      value = "";
    } else {
      field = line.slice(0, colon);
      value = line.slice(colon + 1);
      if (value[0] === " ") value = value.slice(1);
    }
    switch (field) {
      case "event":
        this._type = value;
        break;
      case "data":
        this._data.push(value);
        this._hasData = true;
        break;
      case "id":
        if (!value.includes("\0")) this.lastEventId = value;
        break;
      case "retry":
        if (/^\d+$/.test(value)) this.retry = Number(value);
        break;
      default:
        break; // unknown fields are ignored
    }
  }

  _dispatch(events) {
    if (this._hasData) {
      events.push({
        event: this._type || "message",
        data: this._data.join("\n"),
        id: this.lastEventId,
      });
    }
    this._resetEvent();
  }
}

/** Parse a complete event-stream text (or bytes) at once. */
export function parseSSE(input) {
  const parser = new SSEParser();
  return [...parser.feed(input), ...parser.end()];
}

/**
 * The chunks of a response body: a WHATWG ReadableStream (fetch in Firefox, Chromium, Node)
 * or any (async) iterable of chunks.
 * @returns {AsyncGenerator<Uint8Array | string>}
 */
export async function* readChunks(body) {
  if (body == null) return;
  if (typeof body.getReader === "function") {
    const reader = body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        yield value;
      }
    } finally {
      try {
        // Cancels the request when the consumer stops early (a break, an abort).
        await reader.cancel();
      } catch {
        // already closed or errored
      }
      reader.releaseLock?.();
    }
  }
  if (
    typeof body[Symbol.asyncIterator] === "function" ||
    typeof body[Symbol.iterator] === "function"
  ) {
    for await (const chunk of body) yield chunk;
    return;
  }
  throw new TypeError("readChunks: the body is neither a ReadableStream nor iterable");
}

/**
 * Every event of a body, as it arrives.
 * @returns {AsyncGenerator<SSEEvent>}
 */
export async function* iterateSSE(body) {
  const parser = new SSEParser();
  for await (const chunk of readChunks(body)) {
    for (const event of parser.feed(chunk)) yield event;
  }
  for (const event of parser.end()) yield event;
}
