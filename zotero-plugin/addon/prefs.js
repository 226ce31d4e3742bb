/* Default preferences (Zotero loads this file when the plugin starts). */
pref("extensions.zocrates.gatewayURL", "http://127.0.0.1:8765");
pref("extensions.zocrates.registerOnStartup", true);
pref("extensions.zocrates.lastSessionID", "");
pref("extensions.zocrates.showThoughts", false);
pref("extensions.zocrates.paneWidth", 400);
pref("extensions.zocrates.paneOpen", true);
pref("extensions.zocrates.toggleKey", "E");
