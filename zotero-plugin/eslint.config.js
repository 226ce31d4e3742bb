// ESLint for the plugin: the recommended rules, with the globals each part of the code really
// has (Zotero's privileged window scope for the plugin, Node for scripts and tests, a browser
// page for the UI harness).
import js from "@eslint/js";
import globals from "globals";

const zotero = {
  Zotero: "readonly",
  ChromeUtils: "readonly",
  Services: "readonly",
  Components: "readonly",
  Cc: "readonly",
  Ci: "readonly",
  Cu: "readonly",
  IOUtils: "readonly",
  PathUtils: "readonly",
  MozXULElement: "readonly",
  rootURI: "readonly",
};

export default [
  { ignores: ["build/**", "node_modules/**"] },
  js.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2023, sourceType: "module" },
    rules: {
      "no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" },
      ],
      eqeqeq: ["error", "smart"],
      "prefer-const": "error",
      "no-var": "error",
    },
  },
  {
    files: ["src/**/*.js", "addon/**/*.js"],
    languageOptions: { globals: { ...globals.browser, ...zotero } },
  },
  {
    // Zotero calls bootstrap.js's top-level functions and reads its `var`s; prefs.js is a
    // list of pref() calls.
    files: ["addon/bootstrap.js", "addon/prefs.js"],
    languageOptions: { sourceType: "script", globals: { pref: "readonly" } },
    rules: {
      "no-var": "off",
      "no-redeclare": ["error", { builtinGlobals: false }],
      "no-unused-vars": ["error", { vars: "local", args: "none" }],
    },
  },
  {
    // esbuild defines the add-on's version at build time.
    files: ["src/index.js"],
    languageOptions: { globals: { addonVersion: "readonly" } },
  },
  {
    files: ["scripts/**/*.mjs", "test/**/*.js", "test-ui/**/*.mjs", "eslint.config.js"],
    languageOptions: { globals: { ...globals.node } },
  },
  {
    // run.mjs's page.evaluate callbacks run in the page.
    files: ["test-ui/harness-entry.js", "test-ui/run.mjs"],
    languageOptions: { globals: { ...globals.browser } },
  },
];
