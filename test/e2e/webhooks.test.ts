/**
 * Issue 38: the console's Webhooks page driven as a person would, in Debian's headless Chromium,
 * against the real service with a real build of the console and a local receiver (loopback, so
 * WEBHOOK_ALLOW_INSECURE=true). Controls are found by role and accessible name only; the page is
 * watched throughout as in console.test.ts (no console error, CSP violation, cross-origin request,
 * 5xx, or secret in the console or the URL).
 */
import type { Browser } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { startTestApp, type TestApp } from '../helpers/app';
import { buildConsole, type BuiltConsole } from '../helpers/console';
import { createApiKey, createUser, type TestUser } from '../helpers/factories';
import { startReceiver, type Receiver } from '../integration/webhooks/support';
import { closeWatched, describeInChromium, launchChromium, openConsole, requireChromium, scrollsSideways, sidewaysInside, untilQuiet, type Watched } from './browser';

jest.retryTimes(1, { logErrorsBeforeRetry: true });
jest.setTimeout(90_000);

describeInChromium("the console's webhook browser tests")('the console\'s Webhooks page in Chromium', () => {
  let built: BuiltConsole;
  let t: TestApp;
  let browser: Browser;
  let admin: TestUser;
  let editor: TestUser;
  let receiver: Receiver;
  let w: Watched | undefined;

  beforeAll(async () => {
    requireChromium();
    built = buildConsole();
    receiver = await startReceiver();
    t = await startTestApp({ CONSOLE_DIR: built.dir, WEBHOOK_ALLOW_INSECURE: 'true', WEBHOOK_POLL_INTERVAL_MS: '100' });
    browser = await launchChromium();
    admin = await createUser(t, { role: 'admin' });
    editor = await createUser(t, { role: 'editor' });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await receiver?.close();
    built?.remove();
  });

  afterEach(async () => {
    if (!w) return;
    const watched = w;
    w = undefined;
    await closeWatched(watched);
  });

  async function signedIn(user: TestUser, viewport?: { width: number; height: number }): Promise<Watched> {
    w = await openConsole(browser, t.baseUrl, viewport);
    w.page.setDefaultTimeout(20_000);
    w.secrets.add(user.password);
    await w.page.goto('/console/');
    await w.page.getByLabel('Username').fill(user.username);
    await w.page.getByLabel('Password').fill(user.password);
    await w.page.getByRole('button', { name: 'Sign in' }).click();
    await w.page.getByRole('button', { name: 'Sign out' }).waitFor();
    // The keys page's calls (its list, then each row's policy) are over before the test moves on.
    await untilQuiet(w.page);
    return w;
  }

  const verifies = (secret: string, got: Receiver['received'][number]) =>
    new Webhook(secret).verify(got.body, {
      'webhook-id': String(got.headers['webhook-id']),
      'webhook-timestamp': String(got.headers['webhook-timestamp']),
      'webhook-signature': String(got.headers['webhook-signature']),
    }) as { type: string };

  it('an admin creates an endpoint (the secret shown once, copied), sends a test event the receiver verifies, reads the delivery log, edits, rotates and deletes it', async () => {
    const { page, secrets, screenshot } = await signedIn(admin);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { name: 'Webhooks' }).waitFor();
    await page.getByText('No endpoints yet').waitFor();

    await page.getByRole('button', { name: 'Create endpoint' }).click();
    const create = page.getByRole('dialog', { name: 'Create endpoint' });
    await create.getByLabel('URL').fill(receiver.url);
    await create.getByLabel('All events').uncheck();
    await create.getByLabel('api_key.created').check();
    await create.getByLabel('Description').fill('Cache invalidation for the billing service');
    await screenshot('webhook-create');
    await create.getByRole('button', { name: 'Create' }).click();

    const shown = page.getByRole('dialog', { name: 'Endpoint created' });
    const secret = await shown.getByRole('textbox', { name: 'Signing secret' }).inputValue();
    secrets.add(secret);
    expect(secret).toMatch(/^whsec_/);
    await shown.getByRole('button', { name: 'Copy' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    await screenshot('webhook-secret');
    await shown.getByRole('button', { name: 'Close' }).click();
    const row = page.getByRole('row', { name: new RegExp(receiver.url.replace(/[.]/g, '\\.')) });
    await row.waitFor();

    await row.getByRole('button', { name: 'Send test event' }).click();
    await page.getByRole('status').filter({ hasText: 'Test event' }).waitFor();
    const [tested] = await receiver.waitFor(1);
    expect(verifies(secret, tested!).type).toBe('webhook.tested');
    await createApiKey(t);
    const [, created] = await receiver.waitFor(2);
    expect(verifies(secret, created!).type).toBe('api_key.created');

    await row.getByRole('button', { name: 'Deliveries' }).click();
    const log = page.getByRole('dialog', { name: /^Deliveries to / });
    await log.getByRole('row', { name: /api_key\.created delivered 1 200/ }).waitFor();
    await log.getByRole('row', { name: /webhook\.tested delivered 1 200/ }).waitFor();
    // Every column in sight, none cut off at the dialog's edge.
    expect(await sidewaysInside(log)).toEqual([]);
    await screenshot('webhook-deliveries');
    await log.getByRole('button', { name: 'Close' }).click();
    await screenshot('webhooks');

    await row.getByRole('button', { name: 'Edit' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit endpoint' });
    expect(await edit.getByLabel('URL').inputValue()).toBe(receiver.url);
    await edit.getByLabel('Enabled', { exact: true }).uncheck();
    await edit.getByRole('button', { name: 'Save' }).click();
    await row.getByRole('cell', { name: 'no', exact: true }).waitFor();
    expect(await row.getByRole('button', { name: 'Send test event' }).isDisabled()).toBe(true);

    await row.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByRole('dialog', { name: 'Rotate secret' }).getByRole('button', { name: 'Rotate secret' }).click();
    const rotated = page.getByRole('dialog', { name: 'New signing secret' });
    const newSecret = await rotated.getByRole('textbox', { name: 'Signing secret' }).inputValue();
    secrets.add(newSecret);
    expect(newSecret).not.toBe(secret);
    await rotated.getByRole('button', { name: 'Close' }).click();

    await row.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog', { name: 'Delete endpoint' }).getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No endpoints yet').waitFor();
  });

  it('a URL the API refuses is shown beside the URL field, and nothing is created', async () => {
    const { page } = await signedIn(admin);
    w!.expectStatus(400);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('button', { name: 'Create endpoint' }).click();
    const create = page.getByRole('dialog', { name: 'Create endpoint' });
    await create.getByLabel('URL').fill('ftp://example.test/hook');
    await create.getByRole('button', { name: 'Create' }).click();

    await create.getByText('must be an http: or https: URL').waitFor();
    expect(await create.getByLabel('URL').getAttribute('aria-invalid')).toBe('true');
  });

  it('an editor sees no Webhooks link, and the page itself says it is for admins', async () => {
    const { page } = await signedIn(editor);

    expect(await page.getByRole('link', { name: 'Webhooks' }).count()).toBe(0);
    // Opened directly: the reload resumes the session from its cookie (no second sign-in).
    await page.goto('/console/webhooks');
    await page.getByText('Webhooks are shown to admins only.').waitFor();
  });

  it('at 360 px wide the page and its dialogs do not scroll sideways', async () => {
    const { page, screenshot } = await signedIn(admin, { width: 360, height: 740 });
    await t.http().post('/api/v1/webhooks').set('Authorization', `Bearer ${(await t.http().post('/api/auth/bearer/token').type('form').send(admin)).body.access_token}`).send({ url: `${receiver.url}/a-long-path/for/the/narrow/screen?token=x`, events: ['*'], description: 'Every event, for the audit mirror' });
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('button', { name: 'Send test event' }).first().waitFor();

    expect(await scrollsSideways(page)).toBe(false);
    await screenshot('webhooks-360px');
    await page.getByRole('button', { name: 'Create endpoint' }).click();
    await page.getByRole('dialog', { name: 'Create endpoint' }).getByLabel('All events').uncheck();
    expect(await scrollsSideways(page)).toBe(false);
    await screenshot('webhook-create-360px');
    await page.getByRole('dialog', { name: 'Create endpoint' }).getByRole('button', { name: 'Cancel' }).click();

    // The delivery log: five columns (a date among them) in a dialog 336 px wide.
    await page.getByRole('button', { name: 'Send test event' }).first().click();
    await page.getByRole('status').filter({ hasText: 'Test event' }).waitFor();
    // The notice names the endpoint's long URL.
    expect(await scrollsSideways(page)).toBe(false);
    await page.getByRole('button', { name: 'Deliveries' }).first().click();
    const log = page.getByRole('dialog', { name: /^Deliveries to / });
    // Sent in the background: Refresh until the log says so.
    const tested = log.getByRole('row', { name: /webhook\.tested/ });
    for (let i = 0; i < 50 && (await tested.getByText('delivered', { exact: true }).count()) === 0; i += 1) {
      await page.waitForTimeout(200);
      await log.getByRole('button', { name: 'Refresh' }).click();
    }
    await tested.getByText('delivered', { exact: true }).first().waitFor();
    expect(await sidewaysInside(log)).toEqual([]);
    expect(await scrollsSideways(page)).toBe(false);
    await screenshot('webhook-deliveries-360px');
  });
});
