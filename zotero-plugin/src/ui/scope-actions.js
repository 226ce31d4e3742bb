/**
 * The controller's scope chooser and composer: Zotero's selection (followed until the user
 * picks a scope), the scope's mode, the reader's selection, pinned passages and images, the
 * draft in the question box.
 */
import * as S from "../scope.js";
import { infoNotice } from "./notices.js";

/** @param {object} ctx the controller's core (controller-core.js) */
export function createScopeActions(ctx) {
  const { state, emit, setNotice, say, restoreComposer } = ctx;
  return {
    /** Zotero's selection changed: selected items / current collection. */
    setSelection(selection) {
      const next = {
        selectedItems: selection?.selectedItems || [],
        collection: selection?.collection || null,
      };
      if (JSON.stringify(next) === JSON.stringify(state.selection) && state.selectionSeen) return;
      state.selectionSeen = true;
      state.selection = next;
      // Until the user picks a scope, it follows Zotero: the narrowest one the selection allows.
      const previous = state.modeChosen ? state.scope : { ...state.scope, mode: undefined };
      state.scope = S.scopeFromSelection(previous, state.selection);
      emit();
    },

    setMode(mode) {
      state.scope = S.setMode(state.scope, mode);
      state.modeChosen = true;
      emit();
    },

    /** The reader's current text selection (offered as a focal snippet), or null. */
    setReaderSelection(snippet) {
      state.readerSelection = snippet || null;
      emit();
    },

    pinSnippet(snippet) {
      const s = snippet || state.readerSelection;
      if (!s) return false;
      const before = state.scope.snippets.length;
      const image = S.isImageSnippet(s);
      state.scope = S.addSnippet(state.scope, s);
      if (!image && state.readerSelection && s.text === state.readerSelection.text)
        state.readerSelection = null;
      if (state.scope.snippets.length === before && !S.canAddSnippet(state.scope, { image })) {
        setNotice(
          infoNotice(
            image && S.canAddSnippet(state.scope)
              ? say(
                  "zocrates-notice-pin-image-limit",
                  `At most ${S.LIMITS.images} images can be pinned to a question.`,
                  { max: S.LIMITS.images },
                )
              : say(
                  "zocrates-notice-pin-limit",
                  `At most ${S.LIMITS.snippets} passages can be pinned to a question.`,
                  { max: S.LIMITS.snippets },
                ),
          ),
        );
      }
      restoreComposer(state.composer.text);
      emit();
      return state.scope.snippets.length > before;
    },

    removeSnippet(index) {
      state.scope = S.removeSnippet(state.scope, index);
      emit();
    },

    /** The composer's text as the user types (kept so that nothing is lost on re-render). */
    setDraft(text) {
      state.composer = { ...state.composer, text: String(text ?? ""), focus: false };
    },
  };
}
