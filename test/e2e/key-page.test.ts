/**
 * A key's own page in the console (/console/keys/{appname}), in Debian's headless Chromium against
 * the real service and database: a key that does not work says so and why, before anything else.
 * Watched throughout as console.test.ts is (test/e2e/browser.ts): a console error, a CSP violation, a
 * cross-origin request, a 5xx or a secret in the console or the URL fails a test.
 */
import { runMaintenance } from '../../src/maintenance';
import { startTestApp, type TestApp } from '../helpers/app';
import { buildConsole, type BuiltConsole } from '../helpers/console';
import { bearer, createUser, randomName, tokenForRole, type TestUser } from '../helpers/factories';
import { browserForTests, describeInChromium, scrollsSideways, untilQuiet, type Watched } from './browser';

jest.retryTimes(1, { logErrorsBeforeRetry: true });
jest.setTimeout(90_000);

const KEYS = '/api/v1/api-keys';
const DAY = 86_400;

describeInChromium("the key page's browser tests")("a key's page in Chromium", () => {
  let built: BuiltConsole;
  let t: TestApp;
  let admin: TestUser;
  const browser = browserForTests();

  beforeAll(async () => {
    built = buildConsole();
    t = await startTestApp({ CONSOLE_DIR: built.dir });
    admin = await createUser(t, { role: 'admin' });
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    built?.remove();
  });

  async function createWithPolicy(policy: Record<string, unknown>, appname = randomName('page'), description = '') {
    const res = await t.http().post(KEYS).set(bearer(await tokenForRole(t, 'admin'))).send({ appname, description, roles: ['viewer'], policy });
    expect(res.status).toBe(201);
    return { appname, appkey: res.body.data.appkey as string };
  }

  /** Signs in at the key's page (the sign-in lands there) and waits for the page and its calls. */
  async function openKeyPage(appname: string, viewport?: { width: number; height: number }): Promise<Watched> {
    const w = await browser.open(t.baseUrl, viewport);
    w.secrets.add(admin.password);
    await w.page.goto(`/console/keys/${appname}`);
    await w.page.getByLabel('Username').fill(admin.username);
    await w.page.getByLabel('Password').fill(admin.password);
    await w.page.getByRole('button', { name: 'Sign in' }).click();
    await w.page.getByRole('heading', { name: 'Policy', exact: true }).waitFor();
    await untilQuiet(w.page);
    return w;
  }

  const head = (w: Watched) => w.page.locator('.page-head');
  /** What the page says beside a fact's name ("Expires", "Last used"). */
  const factOf = async (w: Watched, term: string) =>
    (await w.page.locator('.key-facts > div').filter({ has: w.page.getByRole('term').getByText(term, { exact: true }) }).getByRole('definition').textContent())?.trim();

  it('a key the maintenance pass turned off as idle shows the Disabled badge and why; ticked Enabled and saved, the page shows a key that works', async () => {
    const key = await createWithPolicy({ max_idle_days: 1 });
    // The pass two days on: the key, never used, has been idle for longer than its one day.
    await runMaintenance(t.db, { intervalSeconds: 60, clockTolerance: 0, webhookRetentionDays: 30, clock: () => Date.now() / 1000 + 2 * DAY });
    const w = await openKeyPage(key.appname);

    await head(w).getByText('Disabled', { exact: true }).waitFor();
    expect(await w.page.getByText(/^Disabled: unused for longer than its max idle days\./).count()).toBe(1);
    expect(await factOf(w, 'Expires')).toBe('never');

    await w.page.getByRole('checkbox', { name: 'Enabled' }).check();
    await w.page.getByRole('button', { name: 'Save policy' }).click();
    await w.page.getByRole('status').filter({ hasText: 'Policy saved.' }).waitFor();
    expect(await head(w).locator('.badge').count()).toBe(0);
    expect(await w.page.getByText(/^Disabled:/).count()).toBe(0);
  });

  it('a key turned off by hand that has also expired says both, with the date it expired; one that expires later says when', async () => {
    const now = Math.floor(Date.now() / 1000);
    // Named as in life: this page is in docs/console.md.
    const off = await createWithPolicy({ enabled: false, expires_at: now + 2, permissions: ['reports:export'] }, randomName('legacy-exporter'), 'The old CSV export, replaced by reports-exporter');
    const later = await createWithPolicy({ expires_at: now + 6 * DAY + 3_600 });
    await new Promise((resolve) => setTimeout(resolve, 2_100));

    const w = await openKeyPage(off.appname);
    await head(w).getByText('Disabled', { exact: true }).waitFor();
    expect(await w.page.getByText(/^Disabled: turned off by hand\./).count()).toBe(1);
    expect(await w.page.getByText(/^Expired on .*\d{4}.*\. It authenticates nowhere/).count()).toBe(1);
    expect(await factOf(w, 'Expires')).toMatch(/\(expired\)$/);
    await w.screenshot('key-page-disabled');

    await w.page.goto(`/console/keys/${later.appname}`);
    await w.page.getByRole('heading', { name: 'Policy', exact: true }).waitFor();
    expect(await head(w).locator('.badge').count()).toBe(0);
    expect(await factOf(w, 'Expires')).toMatch(/\(in 6 days\)$/);
  });

  it('at 360 px wide a disabled key\'s page does not scroll sideways', async () => {
    const key = await createWithPolicy({ enabled: false, expires_at: Math.floor(Date.now() / 1000) + 30 * DAY }, randomName('legacy-exporter'), 'The old CSV export, replaced by reports-exporter');
    const w = await openKeyPage(key.appname, { width: 360, height: 740 });

    await head(w).getByText('Disabled', { exact: true }).waitFor();
    expect(await factOf(w, 'Expires')).toMatch(/\(in 30 days\)$/);
    expect(await scrollsSideways(w.page)).toBe(false);
    await w.screenshot('key-page-disabled-360px');
  });
});
