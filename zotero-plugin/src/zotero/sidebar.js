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
 * app.onReaderSelection (Zotero.Reader's renderTextSelectionPopup, registered in app.js);
 * image annotations through app.pinImages (createAnnotationContextMenu, annotations.js).
 * Citations open with items.js openCitation (Zotero.Reader.open at the cited page).
 *
 * The pane itself (src/ui/pane.js) is the same code the browser harness (test-ui/) runs.
 */
import { config, PREFS } from "../config.js";
import { createH } from "../ui/dom.js";
import { createPane } from "../ui/pane.js";
import { attachResizer } from "../ui/resizer.js";
import { describeItem, openCitation, selectionFromPane } from "./items.js";
import { copyAnswer, saveAnswerNote } from "./notes.js";

export const IDS = Object.freeze({
  container: "zocrates-pane-container",
  resizer: "zocrates-pane-resizer",
  rail: "zocrates-pane-rail",
  viewMenuItem: "zocrates-view-pane-menuitem",
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
  const l10n = app.l10n?.() || null;
  const h = createH(doc, l10n);
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
        l10n: "zocrates-rail-show",
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

  // View > Zocrates Pane and Ctrl+Shift+E (Cmd+Shift+E; the letter is a pref) show and hide
  // the pane. Zotero's own shortcuts take Ctrl+Shift+ A C F G I K L N O R S T X Y and ` (and ;
  // in Zotero 10: zoteroPane.xhtml's keysets, extensions.zotero.keys.*).
  const toggleKey = String(env.getPref(PREFS.toggleKey, "E") || "E").toUpperCase();
  const accelText = `${Zotero.isMac ? "⌘⇧" : "Ctrl+Shift+"}${toggleKey}`;
  const viewMenu = doc.getElementById("menu_viewPopup");
  let menuItem = null;
  if (viewMenu && typeof doc.createXULElement === "function") {
    menuItem = doc.createXULElement("menuitem");
    menuItem.id = IDS.viewMenuItem;
    menuItem.setAttribute("type", "checkbox");
    menuItem.setAttribute("data-zc-l10n", "zocrates-menu-view-pane");
    const { attributes } = l10n?.message("zocrates-menu-view-pane") || { attributes: {} };
    for (const [name, value] of Object.entries(attributes)) menuItem.setAttribute(name, value);
    menuItem.setAttribute("acceltext", accelText);
    menuItem.addEventListener("command", () => toggle());
    viewMenu.appendChild(menuItem);
  }
  const onKey = (e) => {
    const accel = Zotero.isMac ? e.metaKey && !e.ctrlKey : e.ctrlKey && !e.metaKey;
    if (!accel || !e.shiftKey || e.altKey || String(e.key).toUpperCase() !== toggleKey) return;
    e.preventDefault();
    e.stopPropagation();
    toggle();
  };
  win.addEventListener("keydown", onKey, true);

  function isOpen() {
    return container.getAttribute("data-collapsed") !== "true";
  }

  function toggle() {
    setOpen(!isOpen());
  }

  function setOpen(open) {
    container.setAttribute("data-collapsed", String(!open));
    resizer.setAttribute("data-collapsed", String(!open));
    rail.hidden = open;
    menuItem?.setAttribute("checked", String(!!open));
    env.setPref(PREFS.paneOpen, !!open);
    if (open && pane) {
      pane.focus();
      pane.showing().catch((err) => app.log(`pane shown: ${err?.message || err}`));
    }
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
      openCitation: ({ itemKey, attachmentKey, page, quote, origin, sourceKey }) =>
        openCitation({
          Zotero,
          pane: win.ZoteroPane,
          itemKey,
          attachmentKey,
          page,
          quote,
          origin,
          sourceKey,
        }),
      openURL: (url) => Zotero.launchURL?.(url),
      openPreferences: () => app.openPreferences(),
      isMac: !!Zotero.isMac,
      canCollapse: true,
      onCollapse: () => setOpen(false),
      AbortController: win.AbortController,
      setTimeout: (f, ms) => win.setTimeout(f, ms),
      clearTimeout: (id) => win.clearTimeout(id),
      log: (m) => app.log(`pane: ${m}`),
      l10n: app.l10n?.(),
      firstSession: app.firstSession,
      copyAnswer: (answer) => copyAnswer({ Zotero, pane: win.ZoteroPane, ...answer }),
      saveNote: (answer) => saveAnswerNote({ Zotero, pane: win.ZoteroPane, ...answer }),
    },
  });
  // The selection can change while no listener is attached (a new items view): look again
  // whenever the pane is used.
  const onFocus = () => pane.refreshSelection();
  container.addEventListener("focusin", onFocus);
  setOpen(env.getPref(PREFS.paneOpen, true) !== false);
  // Not awaited (the window must not wait for the gateway); a failure is the pane's to show,
  // and must never become an unhandled rejection in Zotero's console.
  pane.start().catch((err) => app.log(`the pane could not start: ${err?.message || err}`));

  return {
    pane,
    setOpen,
    toggle,
    isOpen,
    /** Pin a passage or an image from the reader and bring the pane up, focused. */
    pinSnippet(snippet) {
      setOpen(true);
      pane.pinSnippet(snippet);
      pane.focus();
    },
    /** Tell the user something in the pane (and bring it up). */
    notify(message) {
      setOpen(true);
      pane.notify(message);
    },
    unmount() {
      stopPrioritizing();
      container.removeEventListener("focusin", onFocus);
      width.detach();
      pane.destroy();
      win.removeEventListener("keydown", onKey, true);
      for (const el of [resizer, container, rail, menuItem]) el?.remove();
    },
  };
}
