/** Names the plugin is known by in Zotero (kept in step with package.json "config"). */
export const config = Object.freeze({
  addonName: "Zocrates",
  addonID: "zocrates@zocrates.dev",
  addonRef: "zocrates",
  addonInstance: "Zocrates",
  prefsPrefix: "extensions.zocrates",
});

/** Preference keys (full names; defaults in addon/prefs.js). */
export const PREFS = Object.freeze({
  gatewayURL: `${config.prefsPrefix}.gatewayURL`,
  lastSessionID: `${config.prefsPrefix}.lastSessionID`,
  registerOnStartup: `${config.prefsPrefix}.registerOnStartup`,
  showThoughts: `${config.prefsPrefix}.showThoughts`,
  paneWidth: `${config.prefsPrefix}.paneWidth`,
  paneOpen: `${config.prefsPrefix}.paneOpen`,
  toggleKey: `${config.prefsPrefix}.toggleKey`,
});
