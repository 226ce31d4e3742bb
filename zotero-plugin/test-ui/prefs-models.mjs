/**
 * run.mjs's step "preferences: a local model server": the settings pane with a model server
 * URL. No model server runs in the test: the harness answers GET /models/local and POST
 * /models/test itself (server.mjs's `control.models`), everything else goes to the real
 * gateway (the base URL and model fields are saved there through PUT /config; the values of
 * before are put back at the end).
 *
 * It checks that the role model fields' <datalist> holds what /models/local listed, that Test
 * model is disabled on "offline", busy while the test runs and then shows the one-line result,
 * and that a failed test and a failed lookup show the gateway's message as it is.
 */

export const FAKE_BASE = "http://127.0.0.1:8080/v1";
const UNREACHABLE_BASE = "http://127.0.0.1:9/v1";
export const LISTED = {
  status: "success",
  api_base: FAKE_BASE,
  server: "openai",
  models: [
    { id: "smollm2", model: "openai/smollm2", context_window: 4096 },
    { id: "qwen2.5-0.5b-instruct", model: "openai/qwen2.5-0.5b-instruct", context_window: null },
  ],
};
const TESTED = {
  status: "success",
  model: "openai/smollm2",
  reply: "Hello! I am SmolLM, a small model running on your computer.",
  seconds: 1.23,
  prompt_tokens: 20,
  completion_tokens: 8,
  tokens_per_second: 41.2,
  context_window: 4096,
  tool_calling: false,
};
export const RESULT_LINE =
  "Replied “Hello! I am SmolLM, a small model running on your computer.” · 1.2 s · " +
  "41.2 tokens/s · context 4,096 tokens · cannot call tools: set Tool calling to Off";
export const TEST_FAILED =
  "The model server at http://127.0.0.1:8080/v1 has no model named missing-model: " +
  "load it there, or pick one of the models it lists.";
export const UNREACHABLE =
  "Nothing answers at http://127.0.0.1:9/v1: start the model server (llama-server, " +
  "Ollama, LM Studio), or correct the URL.";

const KEYS = ["model_api_base", "coordinator_model"];

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * @param {{page, control, api, check, shot, results}} options
 *   page: Playwright's; control: server.mjs's; api(method, path, body): the gateway's JSON
 *   API; check(condition, message) throws the runner's StepError; shot(name) a screenshot
 */
export async function checkLocalModels({ page, control, api, check, shot, results }) {
  const prefs = "#zocrates-prefs-root .zocrates-prefs";
  const field = (key) => `${prefs} [data-key="${key}"]`;
  const until = async (condition, what = "the gateway's config", timeout = 10000) => {
    for (const t0 = Date.now(); !(await condition()); await sleep(100))
      check(Date.now() - t0 < timeout, `${what} did not change within ${timeout} ms`);
  };
  const before = (await api("GET", "/config")).config;
  const saved = Object.fromEntries(KEYS.filter((k) => k in before).map((k) => [k, before[k]]));
  check("model_api_base" in before, "GET /config has no model_api_base");

  let release = () => {};
  const held = new Promise((r) => (release = r));
  control.modelCalls.length = 0;
  control.models = {
    local: ({ apiBase }) =>
      apiBase === UNREACHABLE_BASE
        ? {
            status: 503,
            body: { status: "error", code: "model_server_unreachable", message: UNREACHABLE },
          }
        : { body: { ...LISTED, api_base: apiBase } },
    test: async ({ model }) => {
      if (model !== "openai/smollm2")
        return {
          status: 503,
          body: { status: "error", code: "model_test_failed", message: TEST_FAILED },
        };
      await held; // the button shows its busy state until the runner lets the reply go
      return { body: TESTED };
    },
  };
  try {
    await page.evaluate("window.zh.openPrefs()");
    const base = page.locator(`${field("model_api_base")} input`);
    await base.waitFor({ state: "visible" });
    // the base URL typed and saved: the model fields offer the server's models
    await base.fill(FAKE_BASE);
    await base.press("Enter");
    const listed = page.locator(`${prefs} #zocrates-local-models-status[data-kind="ok"]`);
    await listed.waitFor();
    const found = await listed.innerText();
    check(/serves 2 models/.test(found), `the lookup line reads "${found}"`);
    check(
      control.modelCalls.some(
        (c) => c.url === `/gateway/models/local?api_base=${encodeURIComponent(FAKE_BASE)}`,
      ),
      `no GET /models/local for ${FAKE_BASE}: ${JSON.stringify(control.modelCalls)}`,
    );
    await until(
      async () => (await api("GET", "/config")).config.model_api_base === FAKE_BASE,
      "model_api_base (saved through PUT /config)",
    );
    for (const key of ["coordinator_model", "synthesizer_model", "compaction_summarizer_model"]) {
      const options = await page
        .locator(`${field(key)} datalist option`)
        .evaluateAll((els) => els.map((o) => [o.value, o.label]));
      check(
        options[0]?.[0] === "openai/smollm2" &&
          /smollm2 \(model server, 4,096 tokens of context\)/.test(options[0]?.[1]) &&
          options[1]?.[0] === "openai/qwen2.5-0.5b-instruct",
        `${key}'s list: ${JSON.stringify(options.slice(0, 3))}`,
      );
      const bound = await page.locator(`${field(key)} input`).evaluate((el) => el.list?.id || null);
      check(bound, `${key}'s input is not bound to its list`);
    }

    // Test model: disabled on "offline", busy while the model answers, then one line
    const button = page.locator(`${field("coordinator_model")} .zc-model-test`);
    const coordinator = page.locator(`${field("coordinator_model")} input`);
    const result = page.locator(`${prefs} #zocrates-model-test-coordinator_model`);
    if ((await coordinator.inputValue()) === "offline")
      check(await button.isDisabled(), "Test model is enabled on the offline model");
    await coordinator.fill("openai/smollm2");
    check(await button.isEnabled(), "Test model stays disabled with a model name");
    await button.click();
    await page
      .locator(`${prefs} #zocrates-model-test-coordinator_model[data-kind="busy"]`)
      .waitFor();
    check(
      (await button.getAttribute("aria-busy")) === "true" && (await button.isDisabled()),
      "the Test model button is not busy while the test runs",
    );
    check(
      /^Testing openai\/smollm2…$/.test((await result.innerText()).trim()),
      `the busy line reads "${await result.innerText()}"`,
    );
    release();
    await page.locator(`${prefs} #zocrates-model-test-coordinator_model[data-kind="ok"]`).waitFor();
    const line = (await result.innerText()).trim();
    check(line === RESULT_LINE, `the result reads "${line}"`);
    const sent = control.modelCalls.find((c) => c.method === "POST");
    check(
      sent?.body?.model === "openai/smollm2" && sent?.body?.api_base === FAKE_BASE,
      `POST /models/test sent ${JSON.stringify(sent?.body)}`,
    );
    await result.scrollIntoViewIfNeeded();
    await shot("preferences-local-models.png");

    // a failed test: the gateway's message, as it is
    await coordinator.fill("openai/missing-model");
    await button.click();
    await page
      .locator(`${prefs} #zocrates-model-test-coordinator_model[data-kind="error"]`)
      .waitFor();
    const failed = (await result.innerText()).trim();
    check(failed === TEST_FAILED, `the failed test reads "${failed}"`);

    // a base URL where nothing answers: the gateway's message under the base URL
    await base.fill(UNREACHABLE_BASE);
    await base.press("Enter");
    await until(
      async () => (await api("GET", "/config")).config.model_api_base === UNREACHABLE_BASE,
    );
    const refused = page.locator(`${prefs} #zocrates-local-models-status[data-kind="error"]`);
    await refused.waitFor();
    const said = (await refused.innerText()).trim();
    check(said === UNREACHABLE, `the failed lookup reads "${said}"`);
    const left = await page
      .locator(`${field("coordinator_model")} datalist option`)
      .evaluateAll((els) => els.map((o) => o.value));
    check(!left.includes("openai/smollm2"), `the old server's models stayed: ${left}`);
    results.localModels = { listed: found, tested: line, failed, unreachable: said };
  } finally {
    release();
    control.models = null;
    await api("PUT", "/config", saved);
    await page.evaluate("window.zh.closePrefs()");
  }
}
