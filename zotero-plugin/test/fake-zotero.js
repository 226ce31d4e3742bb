/**
 * A small stand-in for Zotero's globals and a main window, for the hook and build tests.
 * Not a test file itself.
 */

export function fakeWindow() {
  const elements = new Map();
  const ftl = [];
  const make = (tag) => {
    const el = {
      tagName: tag,
      id: "",
      attrs: {},
      children: [],
      setAttribute(k, v) {
        this.attrs[k] = String(v);
      },
      getAttribute(k) {
        return this.attrs[k];
      },
      appendChild(child) {
        this.children.push(child);
        if (child.id) elements.set(child.id, child);
        child.parent = this;
        return child;
      },
      remove() {
        if (this.parent) this.parent.children = this.parent.children.filter((c) => c !== this);
        if (this.id) elements.delete(this.id);
        const i = ftl.indexOf(this);
        if (i !== -1) ftl.splice(i, 1);
      },
    };
    return el;
  };
  const documentElement = make("window");
  const document = {
    documentElement,
    createElement: make,
    getElementById: (id) => elements.get(id) || null,
    querySelector(selector) {
      const m = /^\[href="(.*)"\]$/.exec(selector);
      return m ? ftl.find((l) => l.href === m[1]) || null : null;
    },
  };
  const win = {
    document,
    ftl,
    MozXULElement: {
      insertFTLIfNeeded(name) {
        if (ftl.some((l) => l.href === name)) return;
        const link = make("link");
        link.href = name;
        link.rel = "localization";
        ftl.push(link);
      },
    },
  };
  return win;
}

export function fakeZotero({
  windows = [fakeWindow()],
  prefs = {},
  dataDir = "/home/me/Zotero",
} = {}) {
  const log = [];
  const panes = [];
  const store = { "extensions.zocrates.gatewayURL": "http://127.0.0.1:8765", ...prefs };
  const Zotero = {
    initializationPromise: Promise.resolve(),
    unlockPromise: Promise.resolve(),
    uiReadyPromise: Promise.resolve(),
    getMainWindows: () => windows,
    PreferencePanes: {
      register: async (options) => {
        panes.push(options);
        return `plugin-pane-${panes.length}`;
      },
    },
    DataDirectory: { dir: dataDir },
    Prefs: {
      get: (key, global) => {
        if (!global) throw new Error("the plugin uses full pref names (global = true)");
        return store[key];
      },
      set: (key, value, global) => {
        if (!global) throw new Error("global = true expected");
        store[key] = value;
      },
    },
    debug: (m) => log.push(m),
  };
  return { Zotero, log, panes, store, windows };
}

export function fakeFiles(files = {}) {
  const missing = (path) => new Error(`NotFoundError: Could not open the file at ${path}`);
  return {
    IOUtils: {
      readUTF8: async (path) => {
        if (!(path in files)) throw missing(path);
        return files[path];
      },
      /** A file's bytes (a Uint8Array, as Gecko's IOUtils.read). */
      read: async (path) => {
        if (!(path in files)) throw missing(path);
        const value = files[path];
        return value instanceof Uint8Array ? value : new TextEncoder().encode(value);
      },
    },
    PathUtils: { join: (...parts) => parts.join("/").replace(/\/+/g, "/") },
  };
}
