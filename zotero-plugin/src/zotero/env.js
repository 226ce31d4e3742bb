/**
 * The plugin's view of Zotero: preferences, the data directory, the gateway token and a
 * gateway client. Every Zotero global is passed in, so a browser harness can hand in a shim.
 */
import { createClient, DEFAULT_BASE_URL } from "../api.js";
import { Codes, GatewayError } from "../errors.js";
import { PREFS } from "../config.js";

export const TOKEN_FILE = ["zocrates-data", "gateway.token"];

/**
 * @param {{Zotero: any, fetch: typeof fetch, IOUtils: any, PathUtils: any,
 *          t?: (id: string, args?: object) => string}} globals
 *   t: the app's localization (l10n.js), for the gateway errors' messages
 */
export function createEnv({ Zotero, fetch, IOUtils, PathUtils, t }) {
  let cachedToken = null;

  const getPref = (key, fallback = undefined) => {
    const value = Zotero.Prefs.get(key, true);
    return value === undefined || value === null ? fallback : value;
  };
  const setPref = (key, value) => Zotero.Prefs.set(key, value, true);

  /** Zotero.DataDirectory.dir: the folder that holds zotero.sqlite. */
  const dataDir = () => Zotero.DataDirectory.dir;
  const tokenPath = () => PathUtils.join(dataDir(), ...TOKEN_FILE);

  async function readToken({ refresh = false } = {}) {
    if (cachedToken && !refresh) return cachedToken;
    const path = tokenPath();
    let text;
    try {
      text = await IOUtils.readUTF8(path);
    } catch (err) {
      cachedToken = null;
      throw new GatewayError({
        code: Codes.TOKEN_MISSING,
        message: String(err?.message || err),
        context: { tokenPath: path, baseURL: gatewayURL(), t },
        cause: err,
      });
    }
    cachedToken = text.trim();
    return cachedToken;
  }

  const gatewayURL = () => getPref(PREFS.gatewayURL, DEFAULT_BASE_URL) || DEFAULT_BASE_URL;

  /** A client for the gateway URL currently set in the preferences. */
  function client() {
    return createClient({
      fetch,
      getToken: readToken,
      baseURL: gatewayURL(),
      tokenPath: tokenPath(),
      t,
    });
  }

  return { getPref, setPref, dataDir, tokenPath, readToken, gatewayURL, client };
}
