/**
 * The chat pane (stub). The next step builds it here, with DOM made through
 * createElementNS and text nodes (no HTML strings are ever parsed) from the pure modules:
 *
 * - api.js: client.chat / client.resume give `{event, data}` streams;
 * - messages.js: startTurn, applyEvent, beginResume / abortResume, fromSession, rewindTarget;
 * - markdown.js: renderMarkdown(bubble.answer, {citations: bubble.citations, h});
 * - card.js: buildCardModel(bubble.checkpoint) and resumeBody(...);
 * - scope.js: scopeFromSelection, chatBody, snippetFromSelection, scopeFromContext;
 * - throttle.js: createThrottle(render, {interval: 50});
 * - zotero/items.js: selectionFromPane(ZoteroPane), openCitation({Zotero, pane, itemKey, page}).
 *
 * mount/unmount are called per main window by src/zotero/app.js.
 */
export function mountSidebar(win, app) {
  app.log("sidebar: not built yet");
  return { win, unmount() {} };
}
