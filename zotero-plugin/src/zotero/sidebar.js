/**
 * The chat pane in a Zotero main window (Zotero 7 to 10; the layout it docks into is the same in
 * all four, test/zotero-versions.js).
 *
 * Where: docked at the right edge of the window, after `#zotero-context-pane`, in the box
 * that also holds `#tabs-deck` (zoteroPane.xhtml: `#zotero-pane-stack > hbox > #tabs-deck,
 * #zotero-context-splitter, #zotero-context-pane`). The deck switches between the library tab
 * and the reader tabs, so one pane per window stays beside both, keeps its chat and scroll
 * position when you switch tabs, and is independent of the item pane. (An item pane section,
 * Zotero.ItemPaneManager.registerSection, was the alternative: Zotero shows sections only when
 * exactly one item is selected, so "ask about the selected papers" would vanish as soon as
 * several are selected, and a section shares its scrolling column with Info, Abstract, ...;
 * see README.md.) A drag handle resizes it, the header's panel button hides it to a thin rail
 * at the window's edge, and both are kept in preferences.
 *
 * What it reads: the library tab's selection (ZoteroPane.getSelectedItems / collection, via
 * items.js); in a reader tab, the open paper (Zotero.Reader.getByTabID(Zotero_Tabs.selectedID)
 * ._item); selection changes through ZoteroPane.itemsView.onSelect / collectionsView.onSelect
 * and the Notifier's tab `select` events; the reader's text selection through
 * app.onReaderSelection (Zotero.Reader's renderTextSelectionPopup, registered in app.js).
 * Citations open with items.js openCitation (Zotero.Reader.open at the cited page).
 *
 * The pane itself (src/ui/pane.js) is the same code the browser harness (test-ui/) runs.
 */
import { config, PREFS } from "../config.js";
import { createH } from "../ui/dom.js";
import { createPane } from "../ui/pane.js";
import { attachResizer } from "../ui/resizer.js";
import { describeItem, openCitation, selectionFromPane } from "./items.js";

export const IDS = Object.freeze({
  container: "zocrates-pane-container",
  resizer: "zocrates-pane-resizer",
  rail: "zocrates-pane-rail",
});

/** The element the pane goes after, and its parent. */
export function findDock(doc) {
  for (const id of ["zotero-context-pane", "tabs-deck"]) {
    const el = doc.getElementById(id);
    if (el && el.parentNode) return { parent: el.parentNode, after: el };
  }
  return null;
}

/** The selection the scope chooser offers: the library's, or the open paper in a reader tab. */
export function zoteroSelection(win, Zotero) {
  const pane = win.ZoteroPane;
  let base = { selectedItems: [], collection: null };
  try {
    if (pane) base = selectionFromPane(pane);
  } catch {
    // the items view is not ready yet
  }
  const tabs = win.Zotero_Tabs;
  if (tabs && tabs.selectedType && tabs.selectedType !== "library") {
    let item;
    try {
      const reader = Zotero.Reader?.getByTabID?.(tabs.selectedID);
      item = reader?._item || (reader?.itemID ? Zotero.Items.get(reader.itemID) : null);
    } catch {
      item = null;
    }
    return { selectedItems: item ? [describeItem(item)] : [], collection: base.collection };
  }
  return base;
}

/** Selection-change notifications; returns the function that removes them. */
function watchSelection(win, Zotero, callback) {
  const offs = [];
  const pane = win.ZoteroPane;
  for (const view of [pane?.itemsView, pane?.collectionsView]) {
    if (view?.onSelect?.addListener) {
      view.onSelect.addListener(callback);
      offs.push(() => view.onSelect.removeListener?.(callback));
    }
  }
  if (Zotero.Notifier?.registerObserver) {
    const id = Zotero.Notifier.registerObserver(
      {
        notify: (event, type) => {
          if (type === "tab" && (event === "select" || event === "close")) callback();
        },
      },
      ["tab"],
      `${config.addonRef}-pane`,
    );
    offs.push(() => Zotero.Notifier.unregisterObserver(id));
  }
  return () => {
    for (const off of offs) {
      try {
        off();
      } catch {
        // the window is closing
      }
    }
  };
}

const shortKey = (k) => `${config.prefsPrefix}.${k}`;

export function mountSidebar(win, app) {
  const doc = win.document;
  const Zotero = app.Zotero;
  const dock = findDock(doc);
  if (!dock || !Zotero) {
    app.log("sidebar: no place for the pane in this window");
    return { unmount() {} };
  }
  const h = createH(doc);
  const env = app.env;
  const resizer = h("div", {
    id: IDS.resizer,
    class: "zocrates-resizer",
    role: "separator",
    "aria-orientation": "vertical",
    tabindex: "0",
  });
  const container = h("div", { id: IDS.container, class: "zocrates-container" });
  const rail = h("div", { id: IDS.rail, class: "zocrates-rail", hidden: true }, [
    h(
      "button",
      {
        type: "button",
        title: "Show Zocrates",
        "aria-label": "Show Zocrates",
        on: { click: () => setOpen(true) },
      },
      [h("span", { class: "zc-logo", "aria-hidden": "true" }, ["Z"])],
    ),
  ]);
  dock.after.after(resizer, container, rail);

  const width = attachResizer({
    handle: resizer,
    container,
    win,
    initial: env.getPref(PREFS.paneWidth, 400),
    onResize: (w) => env.setPref(PREFS.paneWidth, w),
  });

  function setOpen(open) {
    container.setAttribute("data-collapsed", String(!open));
    resizer.setAttribute("data-collapsed", String(!open));
    rail.hidden = open;
    env.setPref(PREFS.paneOpen, !!open);
    if (open) pane?.focus();
  }

  // The paper open in a reader tab goes to the front of the embedding queue, so meaning
  // search covers it first while a large library is still being embedded.
  let prioritized = "";
  const prioritizeReader = () => {
    const tabs = win.Zotero_Tabs;
    if (!tabs || tabs.selectedType !== "reader") return;
    const [open] = zoteroSelection(win, Zotero).selectedItems;
    const key = open?.parentKey || open?.key;
    if (!key || key === prioritized) return;
    prioritized = key;
    env
      .client()
      .prioritize([key])
      .catch((err) => app.log(`prioritize ${key}: ${err?.message || err}`));
  };
  const stopPrioritizing = watchSelection(win, Zotero, prioritizeReader);

  const pane = createPane({
    doc,
    root: container,
    env: {
      getClient: () => env.client(),
      prefs: { get: (k) => env.getPref(shortKey(k)), set: (k, v) => env.setPref(shortKey(k), v) },
      getSelection: () => zoteroSelection(win, Zotero),
      onSelectionChange: (cb) => watchSelection(win, Zotero, cb),
      getReaderSelection: () => app.data.lastSelection,
      onReaderSelection: (cb) => app.onReaderSelectionChange(cb),
      openCitation: ({ itemKey, page, quote }) =>
        openCitation({ Zotero, pane: win.ZoteroPane, itemKey, page, quote }),
      openURL: (url) => Zotero.launchURL?.(url),
      openPreferences: () => app.openPreferences(),
      isMac: !!Zotero.isMac,
      canCollapse: true,
      onCollapse: () => setOpen(false),
      AbortController: win.AbortController,
      setTimeout: (f, ms) => win.setTimeout(f, ms),
      clearTimeout: (id) => win.clearTimeout(id),
      log: (m) => app.log(`pane: ${m}`),
    },
  });
  // The selection can change while no listener is attached (a new items view): look again
  // whenever the pane is used.
  const onFocus = () => pane.refreshSelection();
  container.addEventListener("focusin", onFocus);
  setOpen(env.getPref(PREFS.paneOpen, true) !== false);
  pane.start();

  return {
    pane,
    setOpen,
    /** Pin a passage from the reader and bring the pane up, focused. */
    pinSnippet(snippet) {
      setOpen(true);
      pane.pinSnippet(snippet);
      pane.focus();
    },
    unmount() {
      stopPrioritizing();
      container.removeEventListener("focusin", onFocus);
      width.detach();
      pane.destroy();
      for (const el of [resizer, container, rail]) el.remove();
    },
  };
}
