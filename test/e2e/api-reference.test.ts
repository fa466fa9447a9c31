/**
 * Issue 36: the API reference (Swagger UI over the service's OpenAPI document) in Debian's headless
 * Chromium, against the real service serving a real build of it. The page is watched throughout
 * (test/e2e/browser.ts): a console error, an uncaught exception, a CSP violation, a failed or
 * cross-origin request or a 5xx fails the test, and so does anything left in browser storage.
 */
import path from 'node:path';
import { startTestApp, type TestApp } from '../helpers/app';
import { buildApiReference, type BuiltConsole } from '../helpers/console';
import { freePort } from '../../scripts/harness/node-process';
import { browserForTests, describeInChromium, SCREENSHOTS } from './browser';

jest.retryTimes(1, { logErrorsBeforeRetry: true });
jest.setTimeout(90_000);

describeInChromium("the API reference's browser tests")('the API reference in Chromium', () => {
  const chromium = browserForTests();
  let built: BuiltConsole;
  let t: TestApp | undefined;

  beforeAll(async () => {
    built = buildApiReference();
    // The page's origin must be the issuer, which the document names as its server: "Try it out" sends
    // its requests there. So the port is chosen first, and chosen again if something took it meanwhile.
    for (let attempt = 1; !t; attempt++) {
      const port = await freePort();
      t = await startTestApp({ API_REFERENCE_DIR: built.dir, PORT: String(port), ISSUER: `http://127.0.0.1:${port}` }).catch((err: Error) => {
        if (attempt >= 3 || !/already in use/.test(err.message)) throw err;
        return undefined;
      });
    }
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    built?.remove();
  });

  it('when /api-reference/ is opened, then every operation of the OpenAPI document is listed, with no CSP violation and no request to another host', async () => {
    const document = (await (await fetch(`${t!.baseUrl}/api/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    const operations = Object.values(document.paths).reduce((n, item) => n + Object.keys(item).filter((k) => ['get', 'post', 'put', 'delete'].includes(k)).length, 0);
    const { page } = await chromium.open(t!.baseUrl);

    await page.goto('/api-reference/');
    await page.getByRole('heading', { name: /API Key Management and Token Issuance Service/ }).waitFor();
    await page.locator('.opblock').nth(operations - 1).waitFor();

    expect(await page.locator('.opblock').count()).toBe(operations);
    const regen = page.locator('#operations-API_keys-v1_api_keys_appname_regen_put');
    await regen.locator('.opblock-summary').click();
    await regen.getByText('grace_seconds').first().waitFor();
    await regen.screenshot({ path: path.join(SCREENSHOTS, '..', 'api-reference', 'regen.png') });
  });

  it('when "Try it out" runs GET /healthz, then the page shows the service\'s 200 answer', async () => {
    const { page } = await chromium.open(t!.baseUrl);
    await page.goto('/api-reference/');
    const operation = page.locator('#operations-Platform-healthz_get');
    await operation.locator('.opblock-summary').click();

    await operation.getByRole('button', { name: 'Try it out' }).click();
    const answered = page.waitForResponse((res) => res.url().endsWith('/healthz'));
    await operation.getByRole('button', { name: 'Execute' }).click();
    await answered;

    await operation.locator('.live-responses-table .response-col_status', { hasText: '200' }).waitFor();
    await expect(operation.locator('.live-responses-table').textContent()).resolves.toContain('"status": "ok"');
  });
});
