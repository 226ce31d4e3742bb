## The chat pane.

zocrates-sidebar-title = Zocrates
zocrates-sidebar-new-chat = New Chat
zocrates-sidebar-send = Ask
zocrates-sidebar-stop = Stop
zocrates-sidebar-input-placeholder = Ask about your papers…
zocrates-sidebar-steps =
    { $count ->
        [one] { $count } step
       *[other] { $count } steps
    }
zocrates-sidebar-edit = Edit
zocrates-sidebar-rewind = Discard this turn
zocrates-sidebar-copy = Copy

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
