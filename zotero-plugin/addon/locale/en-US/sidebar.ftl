## The chat pane (src/ui/*-view.js). Messages without a value only set attributes
## (a button whose text is an icon and a label of its own).

zocrates-sidebar-title = Zocrates
zocrates-sidebar-chats-button =
    .title = Your chats
zocrates-sidebar-new-chat-button =
    .title = Start a new chat
zocrates-sidebar-new-chat = New chat
zocrates-sidebar-settings =
    .title = Zocrates settings
    .aria-label = Zocrates settings
zocrates-sidebar-collapse =
    .title = Hide Zocrates
    .aria-label = Hide Zocrates
zocrates-sidebar-send = Ask
zocrates-sidebar-send-button =
    .title = Ask ({ $shortcut })
zocrates-sidebar-stop = Stop
zocrates-sidebar-stop-button =
    .title = Stop the answer
zocrates-sidebar-input =
    .placeholder = Ask about your papers…
    .aria-label = Your question
zocrates-sidebar-hint-ask = { $shortcut } to ask
zocrates-sidebar-hint-replace = { $shortcut } to replace · Esc to cancel
zocrates-sidebar-hint-streaming = Answering… Esc or Stop to interrupt
zocrates-sidebar-editing = Editing an earlier question: sending replaces it and everything after it.
zocrates-sidebar-cancel = Cancel
zocrates-sidebar-steps =
    { $count ->
        [one] { $count } step
       *[other] { $count } steps
    }
zocrates-sidebar-edit = Edit
zocrates-sidebar-edit-button =
    .title = Edit this question: it comes back to the box with its scope; sending replaces this turn and everything after it
zocrates-sidebar-rewind = Rewind
zocrates-sidebar-rewind-button =
    .title = Discard this turn and everything after it; the question comes back to the box
zocrates-sidebar-user-scope =
    .title = What this question was asked about
zocrates-sidebar-copy = Copy

## Chats list.

zocrates-sessions-list =
    .aria-label = Your chats
zocrates-sessions-heading = Chats
zocrates-sessions-count =
    { $count ->
        [one] { $count } chat
       *[other] { $count } chats
    }
zocrates-sessions-keys = ↑↓ open ↩ · F2 rename · Del delete
zocrates-sessions-empty = No chats yet. Ask a question to start one.
zocrates-sessions-default-title = New Chat
zocrates-sessions-rename-input =
    .aria-label = Chat title
zocrates-sessions-save = Save
zocrates-sessions-confirm-delete = Delete “{ $title }” and its history?
zocrates-sessions-delete = Delete
zocrates-sessions-rename-button =
    .title = Rename (F2)
    .aria-label = Rename
zocrates-sessions-delete-button =
    .title = Delete (Del)
    .aria-label = Delete

## When something was updated.

zocrates-time-just-now = just now
zocrates-time-minutes = { $n } min ago
zocrates-time-hours = { $n } h ago
zocrates-time-yesterday = yesterday
zocrates-time-days = { $n } days ago

## Notices and the empty pane.

zocrates-notice-dismiss =
    .title = Dismiss
    .aria-label = Dismiss
zocrates-action-retry = Try again
zocrates-action-settings = Open settings
zocrates-action-show-card = Show the checkpoint
zocrates-action-discard-paused = Discard the paused turn
zocrates-action-reload = Reload chat
zocrates-action-new-chat = New chat
zocrates-empty-offline = Cannot reach Zocrates
zocrates-empty-connecting = Connecting to Zocrates…
zocrates-empty-heading = Ask your library
zocrates-empty-intro = Answers quote your papers and cite item and page; click a citation to open the PDF there. Choose below what to search: the selected papers, the current collection or the whole library.
zocrates-example-findings = What are the main findings of the selected papers?
zocrates-example-methods = Which methods do these papers use, and how do they differ?
zocrates-example-limitations = What limitations do the authors acknowledge?

## An answer.

zocrates-answer-author = Zocrates
zocrates-answer-status-writing = Writing…
zocrates-answer-status-researching = Researching…
zocrates-answer-status-paused = Waiting for your decision
zocrates-answer-status-stopped = Stopped
zocrates-answer-status-error = Interrupted
zocrates-answer-steps-title = Research steps
zocrates-answer-offline-label = Offline model:
zocrates-answer-offline-text = quotes your papers word for word instead of writing a synthesis.
zocrates-answer-choose-model = Choose a model…
zocrates-answer-open-reader =
    .title = Open in the reader
zocrates-answer-copy-markdown = Copy as Markdown
zocrates-answer-copy-markdown-button =
    .title = Copy the answer with its citations and sources, as Markdown
zocrates-answer-copy-text = Copy as text
zocrates-answer-copy-text-button =
    .title = Copy the answer with its citations and sources, as plain text
zocrates-answer-copied = Copied
zocrates-answer-save-note = Save as note
zocrates-answer-save-note-button =
    .title = Keep this answer as a Zotero note (a child note of the paper it cites most), with links that open the cited pages
zocrates-answer-saved-note = Saved as a note
zocrates-answer-save-failed = Could not save the note: { $message }
# An answer kept as a note or copied: the heading of its list of sources, and what is said of
# a quoted sentence found on another page than the cited one, or not found at all.
zocrates-note-sources = Sources
zocrates-note-quote-on-page = the quote is on p. { $page }
zocrates-note-quote-not-found = the quote was not found on the cited page
# A citation's tooltip; the last two mark a citation whose quoted sentence is not on the
# cited page ($cited is one of the first two).
zocrates-citation-title = { $title }
zocrates-citation-title-page = { $title }, p. { $page }
zocrates-citation-quote-elsewhere = { $cited } (the quote is on p. { $page })
zocrates-citation-quote-missing = { $cited } (the quote was not found on this page)
zocrates-citation-title-note = Your note in { $title }
zocrates-citation-title-highlight = Your highlight in { $title }, p. { $page }
zocrates-citation-title-comment = Your comment in { $title }, p. { $page }
# A remote model's turn: tokens in and out, and what they cost when the model's price is known.
zocrates-answer-usage = { NUMBER($input) } tokens in · { NUMBER($output) } out
zocrates-answer-usage-cost = { NUMBER($input) } tokens in · { NUMBER($output) } out · ≈ ${ $cost }
zocrates-answer-usage-line =
    .title = Tokens this turn used with { $model }

## Research steps in a bubble.

zocrates-steps-headline-searches =
    { $count ->
        [one] { $count } search
       *[other] { $count } searches
    }
zocrates-steps-headline-readings =
    { $count ->
        [one] { $count } reading
       *[other] { $count } readings
    }
zocrates-steps-headline-thoughts =
    { $count ->
        [one] { $count } thought
       *[other] { $count } thoughts
    }
zocrates-steps-headline-extensions =
    { $count ->
        [one] { $count } extension
       *[other] { $count } extensions
    }
zocrates-live-writing = Writing the answer…
zocrates-live-searching-further = Searching further…
zocrates-live-preparing = Preparing the answer…
zocrates-live-ranking = Ranking the evidence…
zocrates-live-searching = Searching your library…
zocrates-live-thinking = Thinking…
zocrates-live-starting = Starting…

## Composer: what to ask about.

zocrates-scope-ask-about = Ask about
zocrates-scope-mode-items = Selected
zocrates-scope-mode-items-count = Selected ({ $count })
zocrates-scope-mode-collection = Collection
zocrates-scope-mode-library = Library
zocrates-scope-why-items = Select papers in Zotero (or open one) to ask about them
zocrates-scope-why-collection = Select a collection in Zotero to ask about it
zocrates-scope-detail-collection = { $name }, with its sub-collections
zocrates-scope-detail-collections =
    { $count ->
        [one] { $names }, with their sub-collections: one paper
       *[other] { $names }, with their sub-collections: { $count } papers
    }
zocrates-scope-detail-library = Every indexed paper in your library
zocrates-snippet-unpin =
    .title = Unpin
    .aria-label = Unpin this passage
zocrates-snippet-page = p. { $page }
zocrates-snippet-offer =
    .title = Pin the text selected in the reader: the question will focus on it
zocrates-snippet-offer-text = Pin selected text: “{ $text }”
zocrates-snippet-offer-text-page = Pin selected text (p. { $page }): “{ $text }”
zocrates-snippet-image-label = Image
zocrates-snippet-image-wait =
    .title = Bringing the image back…
zocrates-snippet-image-unpin =
    .title = Unpin
    .aria-label = Unpin this image

## Scope chooser.

zocrates-scope-items =
    { $count ->
        [one] { $title }
       *[other] { $count } papers
    }
zocrates-scope-collection = Collection: { $name }
zocrates-scope-library = Whole library
zocrates-scope-snippets =
    { $count ->
        [one] { $count } pinned passage
       *[other] { $count } pinned passages
    }
zocrates-reader-pin = Ask Zocrates about this
zocrates-scope-images =
    { $count ->
        [one] { $count } pinned image
       *[other] { $count } pinned images
    }
zocrates-reader-pin-image = Ask Zocrates about this image

## Deep-research checkpoint card (ids match src/card.js ENGLISH keys).

zocrates-card-badge = Deep Research: Extension { $number } of { $max }
zocrates-card-badge-final = Deep Research: no extensions left
zocrates-card-grant-label = Grant Deep Research Extension (+{ $calls } calls, +{ $words } words)
zocrates-card-synthesize-label = Synthesize Response with Existing Evidence
zocrates-card-guidance-placeholder = Steer the search (optional), e.g. “focus on the ablation in Table 3”
zocrates-card-covered-heading = What the search covered
zocrates-card-gaps-heading = Not found yet
zocrates-card-trigger-budget_exhausted = The search used up its budget before it finished.
zocrates-card-trigger-gaps = The search left parts of the question without evidence.
zocrates-card-trigger-agent_request = The search agent asked for more room to finish.
zocrates-card-stats = { $evidence } passages found with { $calls } of { $budget } searches and { $words } of { $ceiling } words.
# The card around those: its title, the budget meters, the covered sources, the guidance box,
# what each choice costs and the discard button.
zocrates-card-title = The search paused before answering
zocrates-card-choose-prompt = Choose how to continue.
zocrates-card-meter-searches = Searches
zocrates-card-meter-words = Words read
zocrates-card-meter-value = { $used } of { $of }
zocrates-card-passages-found = Passages found
zocrates-card-meter-count = { $count }
zocrates-card-from-papers =
    { $count ->
        [one] from { $count } paper
       *[other] from { $count } papers
    }
zocrates-card-open-page = Open p. { $page } in the reader
zocrates-card-open = Open in the reader
zocrates-card-page = p. { $page }
zocrates-card-nothing-found = Nothing relevant was found yet.
zocrates-card-guidance-label = Guidance for the next pass
zocrates-card-guidance-optional = (optional)
zocrates-card-guidance-kept = The guidance is kept with your choice.
zocrates-card-guidance-shortcut = { $shortcut } grants the extension with this guidance.
zocrates-card-discard = Discard this turn
zocrates-card-discard-title = Remove this question and its search from the chat; the question comes back to the box below
# The line under the grant button: cost-grant or cost-grant-chunks, then cost-last-extension
# or cost-more-extensions.
zocrates-card-cost-grant = Another search pass, steered by your guidance, then the answer.
zocrates-card-cost-grant-chunks =
    { $chunks ->
        [one] Another search pass, steered by your guidance, then the answer from up to { $chunks } passage.
       *[other] Another search pass, steered by your guidance, then the answer from up to { $chunks } passages.
    }
zocrates-card-cost-last-extension = This is the last extension.
zocrates-card-cost-more-extensions =
    { $count ->
        [one] { $count } more extension possible after this one.
       *[other] { $count } more extensions possible after this one.
    }
zocrates-card-cost-none-left = No extensions left for this question.
zocrates-card-cost-synthesize =
    { $count ->
        [one] No more searching: answers now from the { $count } passage found so far.
       *[other] No more searching: answers now from the { $count } passages found so far.
    }

## A research step in an answer's steps ($query and $text are cut to a line).

zocrates-step-research = Research the library
zocrates-step-searched = Searched “{ $query }”
zocrates-step-searched-library = Searched the library
zocrates-step-passages =
    { $count ->
        [one] { $count } passage
       *[other] { $count } passages
    }
zocrates-step-items-more = { $items } and { $more } more
zocrates-step-page = p. { $page }
zocrates-step-pages = pp. { $start }–{ $end }
zocrates-step-read = Read { $where }
zocrates-step-read-paper = Read a paper
zocrates-step-toc = Looked at the table of contents
zocrates-step-conclude = Concluded the search
zocrates-step-extend = Asked for more room to search
zocrates-step-openalex = Searched OpenAlex for “{ $query }”
zocrates-step-openalex-any = Searched OpenAlex
zocrates-step-works =
    { $count ->
        [one] { $count } work
       *[other] { $count } works
    }
zocrates-step-failed = { $tool } failed
zocrates-step-thought = Thought
zocrates-step-note = Note
zocrates-step-paused = Paused for your decision: extension { $number } of { $max } offered
zocrates-step-paused-final = Paused for your decision: no extension left
zocrates-step-gaps =
    { $count ->
        [one] { $count } part of the question without evidence
       *[other] { $count } parts of the question without evidence
    }
zocrates-step-granted = You granted extension { $number }
zocrates-step-granted-any = You granted an extension
zocrates-step-synthesize = You chose to synthesize with the evidence found
zocrates-step-guidance = Guidance: “{ $text }”

## Short notices of the pane.

zocrates-notice-busy-switch = Zocrates is still answering. Wait for it, or press Stop, before you switch chats.
zocrates-notice-busy-new = Zocrates is still answering. Wait for it, or press Stop, before you start a new chat.
zocrates-notice-busy-delete = Zocrates is still answering. Wait for it, or press Stop, before you delete this chat.
zocrates-notice-busy-send = Zocrates is still answering. Wait for it, or press Stop, before you send another question.
zocrates-notice-busy-checkpoint = Zocrates is still answering. Wait for it, or press Stop, before you answer the checkpoint.
zocrates-notice-busy-rewind = Zocrates is still answering. Wait for it, or press Stop, before you rewind.
zocrates-notice-busy-edit = Zocrates is still answering. Wait for it, or press Stop, before you edit a question.
zocrates-notice-pin-limit = At most { $max } passages can be pinned to a question.
zocrates-notice-pin-image-limit = At most { $max } images can be pinned to a question.
zocrates-notice-image-lost =
    { $count ->
        [one] An image pinned to that question could not be brought back; pin it again from the reader.
       *[other] { $count } images pinned to that question could not be brought back; pin them again from the reader.
    }
zocrates-notice-image-unreadable = Zotero could not give the image of that annotation ({ $reason }). Scroll to it in the reader so that Zotero draws it, then pin it again.
zocrates-notice-image-too-large = That image is { $size } even scaled down; Zocrates takes images of up to { $max }. Draw a smaller image annotation.
zocrates-notice-rewind-unsaved = This question was not saved yet, so there is nothing to rewind.
zocrates-notice-rewound = Rewound: the question is back in the box below, with the scope and passages it was asked with.
zocrates-notice-edit-unsaved = This question was not saved yet, so it cannot be edited.
zocrates-notice-discarded = The paused turn was discarded. Your new question is ready to send.
zocrates-notice-question-too-long = The question has { $length } characters; at most { $max } fit.
zocrates-notice-guidance-too-long = The guidance has { $length } characters; at most { $max } fit.
zocrates-answer-save-read-only = The library “{ $library }” is read-only: the note cannot be saved there.
zocrates-reader-pin-button =
    .title = Pin this passage to your next question in the Zocrates pane
