## Strings used from code (Localization in src/) and in the main window.

zocrates-addon-name = Zocrates

## The gateway's errors (src/errors.js describeError), shown as the pane's notices and in the
## settings. $url is the gateway address, $path the token file, $status an HTTP status,
## $server what the gateway said. Text in `backticks` is shown as code.

zocrates-error-gateway-down = Zocrates is not running: start it with `make run` in your Zocrates folder, then try again (nothing answered at { $url }).
zocrates-error-token-missing = No gateway token at { $path }: start Zocrates with `make run` for this Zotero data directory (it writes the token there when it starts), then try again.
zocrates-error-unauthorized = Zocrates refused the request, wrong token: the plugin reads { $path }, which the gateway writes when it starts. Restart Zocrates (`make run`) for this Zotero data directory; if you set ZOCRATES_GATEWAY_TOKEN, that file must hold the same token.
# Follows zocrates-error-unauthorized when the gateway gave a reason.
zocrates-error-gateway-said = (The gateway said: { $server })
zocrates-error-host-not-allowed = Zocrates only answers local requests: set the gateway URL in Zocrates's settings to http://127.0.0.1 or http://localhost with its port (now { $url }).
zocrates-error-session-busy = This chat is still working on another request. Wait until it finishes (or stop it), then try again.
zocrates-error-checkpoint-pending = This chat is paused at a deep-research checkpoint. Answer the card first — grant an extension or synthesize with the evidence found so far — or discard that turn, before asking something new.
zocrates-error-stale-interrupt = This checkpoint was already answered or discarded (perhaps in another window). Reload the chat to see where it stands.
zocrates-error-session-not-found = This chat no longer exists (it was deleted, or removed by the retention settings). Pick another chat or start a new one.
zocrates-error-stream-interrupted = The connection to Zocrates was lost before the answer finished. Reload the chat to see what was saved.
zocrates-error-bad-response = Zocrates sent an answer the plugin could not read (HTTP { $status }).
zocrates-error-http-status = Zocrates answered with HTTP { $status }.
zocrates-error-failed = Zocrates failed.

## The main window: View menu and the rail that shows a hidden pane.

zocrates-menu-view-pane =
    .label = Zocrates Pane
    .accesskey = Z
zocrates-rail-show =
    .title = Show Zocrates
    .aria-label = Show Zocrates
