## Strings used from code (Localization in src/) and in the main window.

zocrates-addon-name = Zocrates
zocrates-error-gateway-down = Zocrates is not running: start it with `make run` in your Zocrates folder, then try again (nothing answered at { $url }).
zocrates-error-token-missing = No gateway token at { $path }: start Zocrates with `make run` for this Zotero data directory, then try again.
zocrates-error-unauthorized = Zocrates refused the request, wrong token: the plugin reads { $path }, which the gateway writes when it starts. Restart Zocrates (`make run`) for this Zotero data directory.
zocrates-error-session-busy = This chat is still working on another request. Wait until it finishes (or stop it), then try again.
zocrates-error-checkpoint-pending = This chat is paused at a deep-research checkpoint. Answer the card first, or discard that turn, before asking something new.
zocrates-error-stale-interrupt = This checkpoint was already answered or discarded (perhaps in another window). Reload the chat to see where it stands.
zocrates-error-stream-interrupted = The connection to Zocrates was lost before the answer finished. Reload the chat to see what was saved.

## The main window: View menu and the rail that shows a hidden pane.

zocrates-menu-view-pane =
    .label = Zocrates Pane
    .accesskey = Z
zocrates-rail-show =
    .title = Show Zocrates
    .aria-label = Show Zocrates
