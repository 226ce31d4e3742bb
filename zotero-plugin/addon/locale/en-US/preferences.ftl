## Zocrates settings (Zotero > Settings > Zocrates). The groups below the intro are built by
## src/ui/prefs-view.js.

zocrates-pref-title = Zocrates
zocrates-pref-intro = Zocrates answers questions about your library from a local service started with `make run`. These settings are stored by that service (zocrates_config.json in your Zotero data directory), except the gateway address, which Zotero keeps.
zocrates-pref-loading = Loading Zocrates settings…
zocrates-pref-connection = Connection
zocrates-pref-gateway-url = Gateway URL
zocrates-pref-gateway-help = Where `make run` serves Zocrates (http://127.0.0.1:8765 by default). The token is read from your Zotero data directory: zocrates-data/gateway.token.
zocrates-pref-test-connection =
    .label = Test Connection
zocrates-pref-sessions = Chat Sessions & Storage
zocrates-pref-storage-stats = Database size and sessions: { $size }, { $sessions } sessions
zocrates-pref-retention-days = Delete chats not updated for (days, 0 keeps them)
zocrates-pref-max-sessions = Keep at most this many chats (0: no limit)
zocrates-pref-clean-up =
    .label = Clean Up Now
zocrates-pref-research = Deep Research
zocrates-pref-hitl-enabled =
    .label = Pause at a checkpoint when a search leaves gaps
