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

/** Fluent files (addon/locale/en-US/<name>.ftl, shipped as zocrates-<name>.ftl). */
export const FTL = Object.freeze({
  addon: `${config.addonRef}-addon.ftl`,
  preferences: `${config.addonRef}-preferences.ftl`,
  sidebar: `${config.addonRef}-sidebar.ftl`,
});
