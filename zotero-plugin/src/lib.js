/** The pure modules in one namespace (for the pane, Zotero's "Run JavaScript", a harness). */
export * as api from "./api.js";
export * as card from "./card.js";
export * as citations from "./citations.js";
export * as errors from "./errors.js";
export * as markdown from "./markdown.js";
export * as messages from "./messages.js";
export * as scope from "./scope.js";
export * as sse from "./sse.js";
export * as throttle from "./throttle.js";
