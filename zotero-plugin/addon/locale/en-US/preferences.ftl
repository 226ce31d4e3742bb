## Zocrates settings (Zotero > Settings > Zocrates). The groups below the intro are built by
## src/ui/prefs-view.js.

zocrates-pref-title = Zocrates
zocrates-pref-intro = Zocrates answers questions about your library from a local service started with `make run`. These settings are stored by that service (zocrates_config.json in your Zotero data directory), except the gateway address, which Zotero keeps.
zocrates-pref-loading = Loading Zocrates settings…

## Connection. Text in `backticks` is shown as code.

zocrates-pref-connection = Connection
zocrates-pref-gateway-url = Gateway address
zocrates-pref-gateway-help = Where `make run` serves Zocrates (http://127.0.0.1:8765 by default). The token is read from `{ $path }`.
zocrates-pref-test-connection = Test connection
zocrates-pref-testing = Testing the connection…
zocrates-pref-connected =
    { $count ->
        [one] Connected: Zocrates answers at { $url } and accepts the token ({ $count } chat).
       *[other] Connected: Zocrates answers at { $url } and accepts the token ({ $count } chats).
    }
zocrates-pref-url-invalid = Enter a URL such as http://127.0.0.1:8765.
zocrates-pref-url-scheme = The URL must start with http:// or https://.
zocrates-pref-url-not-local = Zocrates only answers on this computer: use 127.0.0.1 or localhost with its port.

## Library index: the buttons, the two progress bars (keyword index, then embeddings) and
## the status line.

zocrates-pref-library = Library index
zocrates-pref-library-intro = Zocrates reads the PDFs of your Zotero library into a local search index. Indexing again only reads what changed.
zocrates-pref-sync = Index new and changed papers
zocrates-pref-sync-full = Re-index everything
    .title = Re-read every PDF (takes minutes on a large library)
zocrates-pref-sync-stop = Stop
zocrates-pref-progress-keyword =
    .aria-label = Library indexing
zocrates-pref-progress-embedding =
    .aria-label = Embedding passages
zocrates-pref-sync-searchable-status = Every paper is searchable by keyword; embeddings follow in the background.
zocrates-pref-sync-stopped-watching = Stopped watching; the embeddings go on in the background.
zocrates-pref-sync-stopped = Indexing stopped; what was indexed is kept.
zocrates-pref-sync-scanning = Reading your Zotero library…
zocrates-pref-sync-working = Indexing…
zocrates-pref-sync-indexing =
    { $total ->
        [one] Indexing: { $done } of { $total } page ({ $percent }%)
       *[other] Indexing: { $done } of { $total } pages ({ $percent }%)
    }
zocrates-pref-sync-searchable =
    { $pages ->
        [0] Searchable: nothing new to index
        [one] Searchable: { $pages } page indexed by keyword
       *[other] Searchable: { $pages } pages indexed by keyword
    }
zocrates-pref-sync-done =
    { $pages ->
        [0] Done: nothing new to index
        [one] Done: { $pages } page indexed
       *[other] Done: { $pages } pages indexed
    }
# The details under the bar, joined by " · ".
zocrates-pref-sync-papers =
    { $total ->
        [one] { $done } of { $total } paper
       *[other] { $done } of { $total } papers
    }
zocrates-pref-sync-rate = { NUMBER($rate, minimumFractionDigits: 1, maximumFractionDigits: 1) } pages/s
zocrates-pref-time-left = about { $duration } left
zocrates-pref-duration-seconds = { $s } s
zocrates-pref-duration-minutes = { $m } min
zocrates-pref-duration-hours = { $h } h { $m } min
zocrates-pref-embedding-progress =
    { $total ->
        [one] Embedding for meaning search: { $done } of { $total } passage ({ $percent }%)
       *[other] Embedding for meaning search: { $done } of { $total } passages ({ $percent }%)
    }
zocrates-pref-embedding-ready =
    { $total ->
        [one] Meaning search ready: { $total } passage embedded
       *[other] Meaning search ready: { $total } passages embedded
    }
zocrates-pref-embedding-pending = { $count } pending
zocrates-pref-embedding-rate = { NUMBER($rate, minimumFractionDigits: 1, maximumFractionDigits: 1) } passages/s
zocrates-pref-embedding-stalled = stalled: { $error }
zocrates-pref-embedding-meanwhile = keyword search covers the rest meanwhile
# The status line, its parts joined by " · ": "37 papers · 1,015 pages · 1,885 passages indexed".
zocrates-pref-library-papers =
    { $count ->
        [one] { $count } paper
       *[other] { $count } papers
    }
zocrates-pref-library-pages =
    { $count ->
        [one] { $count } page
       *[other] { $count } pages
    }
zocrates-pref-library-passages =
    { $count ->
        [one] { $count } passage indexed
       *[other] { $count } passages indexed
    }
# $when is a zocrates-time-* message ("5 min ago") or a date.
zocrates-pref-library-last-sync = last indexed { $when }
zocrates-pref-library-own = { $count } of your highlights, comments and notes
zocrates-pref-library-syncing = indexing now
zocrates-pref-library-waiting =
    { $count ->
        [one] { $count } passage waiting for embeddings
       *[other] { $count } passages waiting for embeddings
    }
# The PDFs that are not (fully) searchable; $what is the gateway's reason or
# zocrates-pref-pages-without-text.
zocrates-pref-pdfs-no-text =
    { $count ->
        [one] { $count } PDF without a text layer (scanned)
       *[other] { $count } PDFs without a text layer (scanned)
    }
zocrates-pref-pdfs-failed =
    { $count ->
        [one] { $count } PDF unreadable
       *[other] { $count } PDFs unreadable
    }
zocrates-pref-pdfs-missing =
    { $count ->
        [one] { $count } PDF missing
       *[other] { $count } PDFs missing
    }
# Pages of scanned PDFs: read by OCR now ($rate pages/s), or waiting for Tesseract ($error
# says how to install it).
zocrates-pref-ocr-reading =
    { $count ->
        [one] OCR is reading { $count } page of scanned PDFs ({ NUMBER($rate, maximumFractionDigits: 2) } pages/s)
       *[other] OCR is reading { $count } pages of scanned PDFs ({ NUMBER($rate, maximumFractionDigits: 2) } pages/s)
    }
zocrates-pref-ocr-unavailable =
    { $count ->
        [one] { $count } page of scanned PDFs waits for OCR: { $error }
       *[other] { $count } pages of scanned PDFs wait for OCR: { $error }
    }
zocrates-pref-problem = { $name }: { $what }
zocrates-pref-pages-without-text =
    { $count ->
        [one] { $count } page without text
       *[other] { $count } pages without text
    }

## The settings of zocrates_config.json, saved field by field. Each field's label has its
## help text in the message of the same id with "-help".

zocrates-pref-saving = Saving…
zocrates-pref-saved = Saved
zocrates-pref-saved-in = Saved in `{ $path }`
zocrates-pref-default = default { $value }
zocrates-pref-invalid-whole-number = Enter a whole number.
zocrates-pref-invalid-negative = Enter 0 or more.
zocrates-pref-invalid-number = Enter a number.
zocrates-pref-other = Other settings

zocrates-pref-models = Models
zocrates-pref-models-intro = Each role runs the built-in offline model (no key, no network: it quotes your papers), a Gemini model (needs GOOGLE_API_KEY) or any model LiteLLM reaches (openrouter/…, ollama_chat/…, openai/… with a base URL). API keys are read from Zocrates's environment, never stored here.
zocrates-pref-coordinator-model = Coordinator model
zocrates-pref-coordinator-model-help = Runs the chat itself: reads your question and plans the search.
zocrates-pref-subagent-model = Search model
zocrates-pref-subagent-model-help = Runs the search passes through your library.
zocrates-pref-synthesizer-model = Answer model
zocrates-pref-synthesizer-model-help = Writes the answer with its citations.
zocrates-pref-synthesizer-thinking = Answer model's thinking
zocrates-pref-synthesizer-thinking-help = How long the answer model thinks before it writes (Gemini 2.5 and later, reasoning models through LiteLLM; others ignore it). More thinking: better answers to hard questions, slower and dearer. Its thoughts show as steps, never in the answer.
zocrates-pref-thinking-off = Off (the model's own default)
zocrates-pref-thinking-low = Low
zocrates-pref-thinking-medium = Medium
zocrates-pref-thinking-high = High
zocrates-pref-model-api-base = Model server URL
zocrates-pref-model-api-base-help = Base URL of an OpenAI-compatible or Ollama server for LiteLLM models. API keys come from Zocrates's environment (GOOGLE_API_KEY, OPENROUTER_API_KEY, ZOCRATES_MODEL_API_KEY), never from this file.
zocrates-pref-model-tool-calling = Tool calling
zocrates-pref-model-tool-calling-help = Whether the models call Zocrates's search tools themselves. auto: probe the model once; on: always; off: the model only writes the answer and Zocrates searches with its fixed policy (for small local models).
zocrates-pref-tool-calling-auto = Auto (probe the model once)
zocrates-pref-tool-calling-on = On
zocrates-pref-tool-calling-off = Off (Zocrates searches, the model writes)
zocrates-pref-model-context-window = Context window (tokens)
zocrates-pref-model-context-window-help = Tokens the model's server holds; 0 reads it from the server.

## The model server's models (GET /models/local), offered in the model fields' lists, and
## Test model (POST /models/test) next to each role's model field.

zocrates-pref-local-models-loading = Asking the model server which models it serves…
# $server is zocrates-pref-local-server-openai or zocrates-pref-local-server-ollama.
zocrates-pref-local-models-found =
    { $count ->
        [0] The model server ({ $server }) lists no models: load one there, then leave this field to look again.
        [one] The model server ({ $server }) serves { $count } model: pick it from a model field's list.
       *[other] The model server ({ $server }) serves { $count } models: pick one from a model field's list.
    }
zocrates-pref-local-server-openai = OpenAI-compatible
zocrates-pref-local-server-ollama = Ollama
# A model the server lists, in a model field's list: the server's name for it, its context size.
zocrates-pref-local-model = { $id } (model server)
zocrates-pref-local-model-context = { $id } (model server, { NUMBER($tokens) } tokens of context)
zocrates-pref-models-unsupported = This version of Zocrates cannot list or test models: update Zocrates, then restart it (`make run`).
zocrates-pref-model-test = Test model
    .title = Ask this model for a short reply, through the model server URL of the Models group
zocrates-pref-model-testing = Testing { $model }…
# The test's one line, its parts joined by " · ":
# "Replied “Hello!” · 1.2 s · 41.2 tokens/s · context 4,096 tokens · can call tools".
zocrates-pref-model-test-reply = Replied “{ $reply }”
zocrates-pref-model-test-no-reply = Answered with no text
zocrates-pref-model-test-seconds = { NUMBER($seconds, maximumFractionDigits: 1) } s
zocrates-pref-model-test-rate = { NUMBER($rate, maximumFractionDigits: 1) } tokens/s
zocrates-pref-model-test-context = context { NUMBER($tokens) } tokens
zocrates-pref-model-test-context-unknown = context size unknown (set Context window)
zocrates-pref-model-test-tools-yes = can call tools
zocrates-pref-model-test-tools-no = cannot call tools: set Tool calling to Off
zocrates-pref-model-test-tools-unknown = tool calling not checked

zocrates-pref-research = Deep research
zocrates-pref-research-intro = A question's first search pass works within these limits. When it leaves gaps, the chat pauses at a checkpoint where you grant an extension or answer with what was found.
zocrates-pref-hitl-enabled = Pause at a checkpoint when the search leaves gaps
zocrates-pref-hitl-enabled-help = When the search finds gaps or runs out of budget, the answer waits until you grant an extension or have it written now. Off: the answer is written from what the first pass found.
zocrates-pref-max-retrieval-tools = Searches in the first pass
zocrates-pref-max-retrieval-tools-help = Library searches allowed before the first checkpoint.
zocrates-pref-hard-word-ceiling = Words read in the first pass
zocrates-pref-hard-word-ceiling-help = Words of retrieved text the first pass may read (7,500 words are about 10,000 tokens).
zocrates-pref-max-rerank-chunks = Passages given to the answer
zocrates-pref-max-rerank-chunks-help = Passages of evidence the answer model receives.
zocrates-pref-extension-call-increment = Searches added by an extension
zocrates-pref-extension-call-increment-help = Searches each granted extension adds.
zocrates-pref-extension-word-increment = Words added by an extension
zocrates-pref-extension-word-increment-help = Words of retrieved text each granted extension adds.
zocrates-pref-extension-chunk-increment = Passages added by an extension
zocrates-pref-extension-chunk-increment-help = Passages each granted extension adds to what the answer receives.
zocrates-pref-max-extensions = Extensions per question
zocrates-pref-max-extensions-help = How many extensions a single question may be granted.
zocrates-pref-online-search-enabled = Also search OpenAlex for literature beyond your library
zocrates-pref-online-search-enabled-help = The chat may search OpenAlex for papers outside your library (needs a network connection; without one, the chat goes on without it).

zocrates-pref-compaction = Long conversations
zocrates-pref-compaction-intro = After a turn, long chats can be compacted: older turns are summarized, the latest ones kept word for word, so the model keeps the thread without re-reading everything.
zocrates-pref-enable-adaptive-compaction = Compact long conversations
zocrates-pref-enable-adaptive-compaction-help = After a turn, a long conversation is compacted when it is worth it.
zocrates-pref-compaction-summarizer-model = Summary model
zocrates-pref-compaction-summarizer-model-help = Writes the summary of the older turns: offline (built in, quotes them), a Gemini name or a LiteLLM name.
zocrates-pref-compaction-retention-turns = Latest turns kept word for word
zocrates-pref-compaction-retention-turns-help = Completed turns that compaction keeps as they are.
zocrates-pref-compaction-min-turns = Turns before compaction is considered
zocrates-pref-compaction-min-turns-help = Completed turns a chat needs before compaction is considered (at least one more than the turns kept).
zocrates-pref-compaction-token-floor = Never compact below (tokens)
zocrates-pref-compaction-token-floor-help = Below this many tokens of conversation, compaction is not considered.
zocrates-pref-compaction-token-ceiling = Always compact above (tokens)
zocrates-pref-compaction-token-ceiling-help = From this many tokens of conversation on, the chat is compacted without asking the decision model.
zocrates-pref-compaction-threshold = Decision threshold (0–1)
zocrates-pref-compaction-threshold-help = How likely the decision model must find compaction useful (0 to 1) before the conversation is compacted.
zocrates-pref-compaction-decision-model = Decision model
zocrates-pref-compaction-decision-model-help = Decides whether to compact: local (built in, no network) or a Decisions API model such as inception/mercury-decide (needs OPENROUTER_API_KEY).

## Chat Sessions & Storage: retention, the database's size and Clean Up Now.

zocrates-pref-sessions = Chat Sessions & Storage
zocrates-pref-sessions-intro = Chats are kept in sessions.db in your Zotero data directory. Old chats are removed by these rules when Zotero starts, or now with Clean Up Now; chats that are answering are never touched.
zocrates-pref-retention-days = Delete chats not used for (days)
zocrates-pref-retention-days-help = Chats not updated for this many days are deleted. Empty or 0 keeps them however old they are.
zocrates-pref-max-sessions = Keep at most (chats)
zocrates-pref-max-sessions-help = Beyond this many chats, the least recently updated are deleted. Empty or 0: no limit.
zocrates-pref-clean-up = Clean Up Now
zocrates-pref-cleaning = Cleaning up: applying the retention rules, then compacting the database if it is worth it…
# The storage line, its parts joined by " · ": "Database 2.5 MB · 7 chats · 448 events · 2% free space".
zocrates-pref-storage-database = Database { $size }
zocrates-pref-storage-chats =
    { $count ->
        [one] { $count } chat
       *[other] { $count } chats
    }
zocrates-pref-storage-events =
    { $count ->
        [one] { $count } event
       *[other] { $count } events
    }
zocrates-pref-storage-free = { $percent }% free space
# The cleanup's report, its sentences joined by spaces; $why joins the clean-empty,
# clean-expired and clean-over-cap messages with commas.
zocrates-pref-clean-deleted =
    { $count ->
        [one] Deleted { $count } chat ({ $why }).
       *[other] Deleted { $count } chats ({ $why }).
    }
zocrates-pref-clean-empty = { $count } empty
zocrates-pref-clean-expired = { $count } expired
zocrates-pref-clean-over-cap = { $count } over the limit
zocrates-pref-clean-none = No chat needed deleting.
zocrates-pref-clean-kept-running =
    { $count ->
        [one] { $count } running chat kept.
       *[other] { $count } running chats kept.
    }
zocrates-pref-clean-compacted = Compacted the database: { $before } → { $after } ({ $saved } reclaimed).
zocrates-pref-clean-not-compacted = Not compacted.
# $reason is one of the zocrates-pref-vacuum-* messages.
zocrates-pref-clean-not-compacted-because = Not compacted: { $reason }.
zocrates-pref-clean-duration = ({ $ms } ms)
zocrates-pref-vacuum-below-threshold = not enough free space to be worth compacting
zocrates-pref-vacuum-chat-in-progress = a chat is running
zocrates-pref-vacuum-insufficient-disk = not enough free disk space
zocrates-pref-vacuum-database-busy = the database is busy
zocrates-pref-vacuum-failed = compacting failed (the database is unchanged)
