/* The real-Zotero suite's driver (tests/real_zotero): a test-only bootstrapped add-on that runs
 * the suite's steps inside Zotero. It asks the test's local HTTP server (pref
 * extensions.apptest.reporter) for the next step, runs it with Zotero's own API (library.js, ui.js) and
 * posts the result back. Nothing is evaluated from the wire: a step names one of the driver's
 * functions and passes JSON arguments. */
/* global Zotero, Services, Components, ChromeUtils */

var driver = null;

function install() {}

function uninstall() {}

function startup({ rootURI }) {
  const scope = {
    Zotero,
    Services,
    Components,
    ChromeUtils,
    fetch: typeof fetch === "function" ? fetch : null,
  };
  for (const file of ["common.js", "library.js", "ui.js", "ops.js"])
    Services.scriptloader.loadSubScript(`${rootURI}${file}`, scope);
  driver = scope.createDriver();
  driver.start();
}

function shutdown() {
  driver?.stop();
  driver = null;
}
