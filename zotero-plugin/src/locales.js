/**
 * The shipped Fluent files, bundled into the script as text (esbuild's text loader for .ftl,
 * scripts/build.mjs and test-ui/server.mjs), for l10n.js, which localizes every string the
 * plugin shows. The .xpi has no locale/ folder: Zotero does not localize the plugin's elements
 * (scripts/build.mjs says why).
 */
import deAddon from "../addon/locale/de/addon.ftl";
import dePreferences from "../addon/locale/de/preferences.ftl";
import deSidebar from "../addon/locale/de/sidebar.ftl";
import enAddon from "../addon/locale/en-US/addon.ftl";
import enPreferences from "../addon/locale/en-US/preferences.ftl";
import enSidebar from "../addon/locale/en-US/sidebar.ftl";

export const RESOURCES = Object.freeze({
  "en-US": [enSidebar, enAddon, enPreferences],
  de: [deSidebar, deAddon, dePreferences],
});
