/**
 * Issue 23: the admin console driven as a person would, in Debian's headless Chromium through
 * playwright-core, against the real service (started in-process on a free port, on the real
 * database) serving a real build of the console. Controls are found by role and accessible name
 * only. Every test watches the page throughout (test/e2e/browser.ts): a console error, an uncaught
 * exception, a CSP violation, a failed or cross-origin request, a 5xx or a secret in the console
 * or the URL fails it, and so does any token left in browser storage at its end.
 */
import type { Browser, Locator } from 'playwright-core';
import { startTestApp, type TestApp } from '../helpers/app';
import { buildConsole, type BuiltConsole } from '../helpers/console';
import { bearer, createApiKey, createUser, loginAs, randomName, tokenForRole, type TestApiKey, type TestUser } from '../helpers/factories';
import { signRequestToken } from '../helpers/tokens';
import { proxiedTestDatabase, type TcpProxy } from '../integration/faults/tcp-proxy';
import type { TestDatabase } from '../helpers/database';
import {
  CONSOLE_SESSION,
  browserStorage,
  closeWatched,
  describeInChromium,
  requireChromium,
  descriptionOf,
  launchChromium,
  openConsole,
  scrollsSideways,
  sessionCookie,
  untilQuiet,
  type Watched,
} from './browser';

// A browser test that fails once on a loaded two-core CI machine (a page answering a few hundred
// milliseconds late) runs once more, its first failure logged: a real defect fails both times.
jest.retryTimes(1, { logErrorsBeforeRetry: true });

const KEYS = '/api/v1/api-keys';
/** Short, so the walk sees the console renew its access token many times over. */
const ACCESS_TOKEN_TTL = 10;

// npm test runs this file beside the others on two workers: a browser step may take a while there.
jest.setTimeout(90_000);

describeInChromium("the console's browser tests")('the admin console in Chromium', () => {
  let built: BuiltConsole;
  let t: TestApp;
  let browser: Browser;
  let admin: TestUser;
  let editor: TestUser;
  let viewer: TestUser;
  let w: Watched | undefined;

  beforeAll(async () => {
    // With CI=true a missing Chromium fails every test here instead of skipping them.
    requireChromium();
    built = buildConsole();
    t = await startTestApp({ CONSOLE_DIR: built.dir, ACCESS_TOKEN_TTL: String(ACCESS_TOKEN_TTL) });
    browser = await launchChromium();
    admin = await createUser(t, { role: 'admin' });
    editor = await createUser(t, { role: 'editor' });
    viewer = await createUser(t, { role: 'viewer' });
    await seedShowcaseKeys();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    built?.remove();
  });

  afterEach(async () => {
    if (!w) return;
    const watched = w;
    w = undefined;
    await closeWatched(watched);
  });

  /** A few keys with real-looking names, some used, for the screenshots. */
  async function seedShowcaseKeys() {
    const showcase = [
      { appname: 'billing-api', role: 'viewer', description: 'Charges customers; owned by the payments team' },
      { appname: 'ops-automation', role: 'admin', description: 'Runbooks that rotate keys at night' },
      { appname: 'reports-exporter', role: 'editor', description: 'Nightly CSV export to the data warehouse' },
      { appname: 'search-indexer', role: null, description: '' },
    ] as const;
    for (const key of showcase) {
      const created = await createApiKey(t, { appname: key.appname, role: key.role, description: key.description });
      if (key.role !== null && key.role !== 'admin') await exchange(created);
    }
  }

  async function exchange(key: TestApiKey): Promise<number> {
    const res = await fetch(`${t.baseUrl}/api/v1/auth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ jwt: signRequestToken(key.appname, key.appkey) }),
    });
    return res.status;
  }

  /** The standard OAuth way an API key gets a token: its appkey as the client secret. */
  async function clientCredentials(appname: string, appkey: string): Promise<number> {
    const res = await fetch(`${t.baseUrl}/oauth2/token`, {
      method: 'POST',
      headers: { Authorization: `Basic ${Buffer.from(`${appname}:${appkey}`).toString('base64')}`, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    });
    return res.status;
  }

  async function open(viewport?: { width: number; height: number }): Promise<Watched> {
    w = await openConsole(browser, t.baseUrl, viewport);
    w.page.setDefaultTimeout(20_000);
    return w;
  }

  async function signIn(watched: Watched, user: TestUser, path = '/console/') {
    const { page } = watched;
    watched.secrets.add(user.password);
    if (!page.url().includes('/console')) await page.goto(path);
    const before = watched.tokens.length;
    await page.getByLabel('Username').fill(user.username);
    await page.getByLabel('Password').fill(user.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    // The watch reads the token response off the wire a moment after the page got it.
    await eventually(async () => watched.tokens.length >= before + 2, true);
    // The first page's calls (the keys list, then each row's policy for its badge) are over before
    // the test acts, so none of them is in flight across a sign-out or a revocation it makes.
    await untilQuiet(page);
  }

  /** Narrows the list to keys whose appname starts with `prefix`, and waits for the answer. */
  async function filterKeys(watched: Watched, prefix: string) {
    const listed = watched.page.waitForResponse((res) => res.url().includes(`prefix=${encodeURIComponent(prefix)}`));
    await watched.page.getByRole('searchbox', { name: 'Filter by appname' }).fill(prefix);
    await listed;
  }

  const rowOf = (watched: Watched, appname: string) => watched.page.getByRole('row', { name: new RegExp(`^${appname.replace(/[.]/g, '\\.')}\\b`) });
  const dataRows = (watched: Watched) => watched.page.getByRole('row').filter({ hasNot: watched.page.getByRole('columnheader') });
  /** Polls until `read` gives `expected` (the page renders an answer a moment after it arrives), else fails showing the last value. */
  async function eventually<T>(read: () => Promise<T>, expected: T, timeoutMs = 5_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    let last = await read();
    while (JSON.stringify(last) !== JSON.stringify(expected) && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      last = await read();
    }
    expect(last).toEqual(expected);
  }
  const rowCount = (watched: Watched) => () => dataRows(watched).count();
  const isFocused = (control: Locator) => control.evaluate((element) => element === document.activeElement);
  const statusText = async (watched: Watched) => (await watched.page.getByRole('status').allTextContents()).join(' ');

  it('sign-in: a wrong password is refused with a message; the right one opens the keys table, and no token is kept in any browser storage', async () => {
    const { page } = await open();
    w!.expectStatus(400);
    await page.goto('/console/');
    await w!.screenshot('sign-in');

    await page.getByLabel('Username').fill(admin.username);
    await page.getByLabel('Password').fill('not-the-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'Wrong username or password.' }).waitFor();
    expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(0);

    await signIn(w!, admin);
    await page.getByRole('row', { name: /^billing-api/ }).waitFor();
    expect(await page.getByRole('columnheader').allTextContents()).toEqual(['Appname', 'Description', 'Role', 'Last login', 'Last IP']);
    expect(await page.getByRole('link', { name: 'API keys' }).count()).toBe(1);
    expect(await page.getByRole('link', { name: 'Audit log' }).count()).toBe(1);
    const billing = await page.getByRole('row', { name: /^billing-api/ }).getByRole('cell').allTextContents();
    expect(billing.slice(0, 4)).toEqual(['Charges customers; owned by the payments team', 'viewer', expect.stringContaining(String(new Date().getFullYear())), '127.0.0.1']);
    expect(await page.getByRole('row', { name: /^search-indexer/ }).getByRole('cell').allTextContents()).toEqual(expect.arrayContaining(['none', 'never']));
    await w!.screenshot('keys');
    expect(w!.tokens.length).toBeGreaterThanOrEqual(2);
    expect(await browserStorage(w!)).toBe('');

    // The access token lives in memory only; the refresh token in an HttpOnly cookie no script reads: a reload resumes the session.
    await page.reload();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    expect(await browserStorage(w!)).toBe('');
  });

  it('create: the appkey is shown once in a dialog with a working Copy, the row appears, and the key works for a token exchange', async () => {
    const { page } = await open();
    await signIn(w!, admin);
    const appname = randomName('created');

    await page.getByRole('button', { name: 'Create key' }).click();
    const form = page.getByRole('dialog', { name: 'Create key' });
    await form.getByRole('textbox', { name: 'Appname' }).fill(appname);
    await form.getByRole('textbox', { name: 'Description' }).fill('Created in the browser');
    await form.getByRole('combobox', { name: 'Role' }).selectOption('viewer');
    await form.getByRole('button', { name: 'Create' }).click();

    const shown = page.getByRole('dialog', { name: `Key ${appname} created` });
    const appkeyBox = shown.getByRole('textbox', { name: 'Appkey' });
    const appkey = await appkeyBox.inputValue();
    w!.secrets.add(appkey);
    expect(appkey).toMatch(/^ak_/);
    expect(await appkeyBox.isEditable()).toBe(false);
    expect(await shown.textContent()).toContain('it will not be shown again');
    await shown.getByRole('button', { name: 'Copy' }).click();
    await shown.getByRole('status').filter({ hasText: 'Copied to the clipboard.' }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(appkey);
    await w!.screenshot('new-key');
    expect(await browserStorage(w!)).toBe('');

    await shown.getByRole('button', { name: 'Close' }).click();
    await shown.waitFor({ state: 'detached' });
    expect(await page.content()).not.toContain(appkey);
    const row = await rowOf(w!, appname).getByRole('cell').allTextContents();
    expect(row.slice(0, 4)).toEqual(['Created in the browser', 'viewer', 'never', '—']);
    // Both ways a key gets tokens: a request token signed with the appkey, and OAuth client credentials.
    expect(await exchange({ appname, appkey })).toBe(200);
    expect(await clientCredentials(appname, appkey)).toBe(200);
  });

  it('create: an invalid appname is flagged beside the field as it is typed and sends nothing; a taken one gets the 409 beside Appname', async () => {
    const { page } = await open();
    w!.expectStatus(409);
    const taken = await createApiKey(t);
    await signIn(w!, admin);
    const posts: string[] = [];
    page.on('request', (request) => request.method() === 'POST' && request.url().endsWith(KEYS) && posts.push(request.url()));

    await page.getByRole('button', { name: 'Create key' }).click();
    const form = page.getByRole('dialog', { name: 'Create key' });
    const appname = form.getByRole('textbox', { name: 'Appname' });
    await appname.fill('Billing Service');
    expect(await descriptionOf(appname)).toContain('Must be 1 to 64 characters of a-z 0-9 . _ -, starting with a letter or digit.');
    expect(await appname.getAttribute('aria-invalid')).toBe('true');
    await form.getByRole('button', { name: 'Create' }).click();
    expect(posts).toEqual([]);

    await appname.fill(taken.appname);
    expect(await appname.getAttribute('aria-invalid')).toBeNull();
    const refused = page.waitForResponse((res) => res.url().endsWith(KEYS) && res.status() === 409);
    await form.getByRole('button', { name: 'Create' }).click();
    await refused;
    await form.getByText(`API key "${taken.appname}" already exists`).waitFor();
    expect(await descriptionOf(appname)).toContain(`API key "${taken.appname}" already exists`);
    expect(posts).toHaveLength(1);
  });

  it('edit: the dialog saves description and role with one PUT of the whole record, and the row shows them', async () => {
    const key = await createApiKey(t, { role: 'viewer', description: 'before' });
    const { page } = await open();
    await signIn(w!, admin);
    await filterKeys(w!, key.appname);

    await rowOf(w!, key.appname).getByRole('button', { name: 'Edit' }).click();
    const form = page.getByRole('dialog', { name: `Edit ${key.appname}` });
    expect(await form.getByRole('textbox', { name: 'Description' }).inputValue()).toBe('before');
    await form.getByRole('textbox', { name: 'Description' }).fill('after');
    await form.getByRole('combobox', { name: 'Role' }).selectOption('editor');
    const put = page.waitForRequest((request) => request.method() === 'PUT');
    await form.getByRole('button', { name: 'Save' }).click();

    expect((await put).postDataJSON()).toEqual({ description: 'after', roles: ['editor'] });
    await form.waitFor({ state: 'detached' });
    expect((await rowOf(w!, key.appname).getByRole('cell').allTextContents()).slice(0, 2)).toEqual(['after', 'editor']);
    const stored = await t.http().get(`${KEYS}/${key.appname}`).set(bearer(await tokenForRole(t, 'viewer')));
    expect(stored.body.data).toEqual(expect.objectContaining({ description: 'after', roles: ['editor'] }));
  });

  it('regenerate with a grace period: a bad period is flagged beside its field; then a new appkey is shown, and old and new both work within the grace', async () => {
    const key = await createApiKey(t, { role: 'viewer', description: 'kept through regen' });
    const { page } = await open();
    w!.expectStatus(400);
    await signIn(w!, admin);
    await filterKeys(w!, key.appname);

    await rowOf(w!, key.appname).getByRole('button', { name: 'Regenerate' }).click();
    const form = page.getByRole('dialog', { name: `Regenerate ${key.appname}` });
    const grace = form.getByRole('textbox', { name: 'Grace period (seconds)' });
    await grace.fill('ten minutes');
    await form.getByRole('button', { name: 'Regenerate' }).click();
    await form.getByText(/^Must be a whole number of seconds from 0 to 604800/).waitFor();
    expect(await descriptionOf(grace)).toContain('Must be a whole number of seconds from 0 to 604800');

    await grace.fill('600');
    await form.getByRole('button', { name: 'Regenerate' }).click();
    const shown = page.getByRole('dialog', { name: `New appkey for ${key.appname}` });
    const appkey = await shown.getByRole('textbox', { name: 'Appkey' }).inputValue();
    w!.secrets.add(appkey);
    expect(appkey).toMatch(/^ak_/);
    expect(appkey).not.toBe(key.appkey);
    await shown.getByRole('button', { name: 'Close' }).click();

    expect(await clientCredentials(key.appname, key.appkey)).toBe(200);
    expect(await clientCredentials(key.appname, appkey)).toBe(200);
    expect((await rowOf(w!, key.appname).getByRole('cell').allTextContents()).slice(0, 2)).toEqual(['kept through regen', 'viewer']);
  });

  it('delete: the Delete button waits until the appname is typed; then the key is gone', async () => {
    const key = await createApiKey(t, { role: 'viewer' });
    const { page } = await open();
    await signIn(w!, admin);
    await filterKeys(w!, key.appname);

    await rowOf(w!, key.appname).getByRole('button', { name: 'Delete' }).click();
    const form = page.getByRole('dialog', { name: `Delete ${key.appname}` });
    const confirm = form.getByRole('button', { name: 'Delete' });
    expect(await confirm.isDisabled()).toBe(true);
    await form.getByRole('textbox', { name: 'Type the appname to confirm' }).fill(`${key.appname}x`);
    expect(await confirm.isDisabled()).toBe(true);
    await form.getByRole('textbox', { name: 'Type the appname to confirm' }).fill(key.appname);
    await confirm.click();

    await form.waitFor({ state: 'detached' });
    expect(await rowOf(w!, key.appname).count()).toBe(0);
    const gone = await t.http().get(`${KEYS}/${key.appname}`).set(bearer(await tokenForRole(t, 'viewer')));
    expect(gone.status).toBe(404);
  });

  it('paging and the prefix filter: 55 matching keys come 50 then 5 with Load more; a prefix the API refuses is flagged beside the filter', async () => {
    const prefix = randomName('paged');
    const token = await tokenForRole(t, 'admin');
    for (let i = 0; i < 55; i++) {
      const res = await t.http().post(KEYS).set(bearer(token)).send({ appname: `${prefix}-${String(i).padStart(2, '0')}`, roles: [] });
      expect(res.status).toBe(201);
    }
    const { page } = await open();
    w!.expectStatus(400);
    await signIn(w!, admin);

    await filterKeys(w!, prefix);
    await eventually(rowCount(w!), 50);
    await page.getByRole('button', { name: 'Load more' }).click();
    await eventually(rowCount(w!), 55);
    expect(await page.getByRole('button', { name: 'Load more' }).count()).toBe(0);
    const names = await page.getByRole('rowheader').allTextContents();
    expect(names).toEqual(Array.from({ length: 55 }, (_, i) => `${prefix}-${String(i).padStart(2, '0')}`));

    const filter = page.getByRole('searchbox', { name: 'Filter by appname' });
    await filter.fill('Not Valid!');
    await page.getByText('must be 1 to 64 characters of a-z 0-9 . _ -').waitFor();
    expect(await descriptionOf(filter)).toBe('must be 1 to 64 characters of a-z 0-9 . _ -');
  });

  it('audit log: newest first, filtered by appname, type, username and time, page by page', async () => {
    const key = await createApiKey(t, { role: 'viewer' });
    await t.http().put(`${KEYS}/${key.appname}`).set(bearer(await tokenForRole(t, 'admin'))).send({ description: 'changed' });
    const { page } = await open();
    w!.expectStatus(400);
    await signIn(w!, admin);

    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/console/audit');
    expect(await page.getByRole('columnheader').allTextContents()).toEqual(['Time', 'Type', 'Actor', 'Appname', 'Username', 'Client address']);
    await dataRows(w!).first().waitFor();
    await w!.screenshot('audit');
    const busy = await createUser(t, { role: 'viewer' });
    for (let i = 0; i < 51; i++) await loginAs(t, busy);

    const audited = page.waitForResponse((res) => res.url().includes(`appname=${key.appname}`));
    await page.getByRole('searchbox', { name: 'Appname' }).fill(key.appname);
    await audited;
    // One read of every cell (Type is the first of each row's five), so a re-render cannot pull a row away mid-read.
    const types = async () => (await dataRows(w!).getByRole('cell').allTextContents()).filter((_, i) => i % 5 === 0);
    await eventually(types, ['api_key.updated', 'api_key.created']);

    const typed = page.waitForResponse((res) => res.url().includes('type=api_key.created'));
    await page.getByRole('combobox', { name: 'Type' }).selectOption('api_key.created');
    await typed;
    await eventually(types, ['api_key.created']);

    await page.getByRole('button', { name: 'Clear filters' }).click();
    const byUser = page.waitForResponse((res) => res.url().includes(`username=${busy.username}`));
    await page.getByRole('searchbox', { name: 'Username' }).fill(busy.username);
    await byUser;
    await eventually(rowCount(w!), 50);
    await page.getByRole('button', { name: 'Load more' }).click();
    // 51 logins and the user's creation.
    await eventually(rowCount(w!), 52);
    expect(await page.getByRole('button', { name: 'Load more' }).count()).toBe(0);

    await page.getByLabel('Since').fill('2030-01-01T00:00');
    await page.getByLabel('Until').fill('2029-01-01T00:00');
    await page.getByText('must be earlier than until').waitFor();
    expect(await descriptionOf(page.getByLabel('Since'))).toBe('must be earlier than until');
    await page.getByLabel('Until').fill('2031-01-01T00:00');
    await page.getByText('No event matches these filters.').waitFor();
  });

  it('a viewer sees no create, edit, regenerate or delete control and no audit log', async () => {
    const key = await createApiKey(t, { role: 'viewer' });
    const { page } = await open();
    await page.goto('/console/audit');
    await signIn(w!, viewer);

    await page.getByRole('alert').filter({ hasText: 'The audit log is shown to admins only.' }).waitFor();
    expect(await page.getByRole('link', { name: 'Audit log' }).count()).toBe(0);
    await page.getByRole('link', { name: 'API keys' }).click();
    await filterKeys(w!, key.appname);
    await rowOf(w!, key.appname).waitFor();
    for (const name of ['Create key', 'Edit', 'Regenerate', 'Delete']) expect([name, await page.getByRole('button', { name, exact: true }).count()]).toEqual([name, 0]);
  });

  it('an editor sees the controls, disabled with the reason on admin keys, and no audit log', async () => {
    const prefix = randomName('roles');
    await createApiKey(t, { appname: `${prefix}-admin`, role: 'admin' });
    await createApiKey(t, { appname: `${prefix}-viewer`, role: 'viewer' });
    const { page } = await open();
    await signIn(w!, editor);
    await filterKeys(w!, prefix);

    expect(await page.getByRole('button', { name: 'Create key' }).isEnabled()).toBe(true);
    expect(await page.getByRole('link', { name: 'Audit log' }).count()).toBe(0);
    for (const name of ['Edit', 'Regenerate', 'Delete']) {
      const onAdmin = rowOf(w!, `${prefix}-admin`).getByRole('button', { name, exact: true });
      const onViewer = rowOf(w!, `${prefix}-viewer`).getByRole('button', { name, exact: true });
      expect([name, await onAdmin.isDisabled(), await onViewer.isDisabled()]).toEqual([name, true, false]);
      expect(await descriptionOf(onAdmin)).toBe('Only admins can change admin keys.');
    }
  });

  it('when the API refuses an editor (the key became admin since the list loaded), the 403 is a message in the dialog, not a broken page', async () => {
    const key = await createApiKey(t, { role: 'viewer' });
    const { page } = await open();
    w!.expectStatus(403);
    await signIn(w!, editor);
    await filterKeys(w!, key.appname);
    const promoted = await t.http().put(`${KEYS}/${key.appname}`).set(bearer(await tokenForRole(t, 'admin'))).send({ roles: ['admin'] });
    expect(promoted.status).toBe(200);

    await rowOf(w!, key.appname).getByRole('button', { name: 'Edit' }).click();
    const form = page.getByRole('dialog', { name: `Edit ${key.appname}` });
    await form.getByRole('textbox', { name: 'Description' }).fill('an editor may not');
    await form.getByRole('button', { name: 'Save' }).click();

    await form.getByRole('alert').filter({ hasText: 'You are not allowed to perform this operation.' }).waitFor();
    await form.getByRole('button', { name: 'Cancel' }).click();
    await rowOf(w!, key.appname).waitFor();
    expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(1);
  });

  it('a session revoked elsewhere sends the console back to sign-in at its next call (401), saying the session ended', async () => {
    const { page } = await open();
    w!.expectStatus(400, 401);
    await signIn(w!, admin);
    const [accessToken] = w!.tokens;
    // The keys page's list and its rows' policies (the badges) are in first: the call after the
    // revocation is then the filter's, not one of those.
    await rowOf(w!, 'billing-api').waitFor();
    await untilQuiet(page);

    const revoked = await fetch(`${t.baseUrl}/oauth2/revoke`, { method: 'POST', body: new URLSearchParams({ token: accessToken! }) });
    expect(revoked.status).toBe(200);
    await page.getByRole('searchbox', { name: 'Filter by appname' }).fill('billing');

    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await statusText(w!)).toContain('Your session ended. Sign in again.');
    await signIn(w!, admin);
  });

  it('a session revoked while the console sits idle ends at the next renewal, back at sign-in saying so', async () => {
    const { page } = await open();
    w!.expectStatus(401);
    await signIn(w!, admin);
    // The keys page's first list, and its rows' policies (for their badges), must be in before the
    // revocation, or one of them is the 401 that ends the session (seen on a loaded CI machine), not
    // the renewal this test is about.
    await rowOf(w!, 'billing-api').waitFor();
    await untilQuiet(page);
    const renewal = page.waitForResponse((res) => res.url().endsWith(CONSOLE_SESSION) && res.request().method() === 'POST', {
      timeout: 2 * ACCESS_TOKEN_TTL * 1000,
    });

    const revoked = await fetch(`${t.baseUrl}/oauth2/revoke`, { method: 'POST', body: new URLSearchParams({ token: w!.tokens[w!.tokens.length - 1]! }) });
    expect(revoked.status).toBe(200);

    // Renewal goes through the session route, which redeems the cookie's refresh token: the session is gone.
    expect((await renewal).status()).toBe(401);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await statusText(w!)).toContain('Your session ended. Sign in again.');
  });

  it('the access token is renewed with the refresh token before it expires, so work goes on past its lifetime', async () => {
    const { page } = await open();
    const renewals: string[] = [];
    page.on('request', (request) => request.url().endsWith(CONSOLE_SESSION) && request.method() === 'POST' && renewals.push(request.url()));
    await signIn(w!, admin);

    renewals.length = 0;
    await page.waitForTimeout((ACCESS_TOKEN_TTL + 1) * 1000);
    // Renewed while idle, by the console's own timer (the refresh token in the cookie), before the first access token expired.
    expect(renewals.length).toBeGreaterThanOrEqual(1);
    expect(await browserStorage(w!)).toBe('');
    await filterKeys(w!, 'billing');

    await rowOf(w!, 'billing-api').waitFor();
    expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(1);
  });

  it('sign-out revokes the session through the session route, clears the cookie and forgets the access token', async () => {
    const { page } = await open();
    await signIn(w!, admin);
    expect(await sessionCookie(w!)).toEqual(expect.objectContaining({ httpOnly: true, sameSite: 'Strict', path: CONSOLE_SESSION, secure: false }));
    const signOut = page.waitForResponse((res) => res.url().endsWith(CONSOLE_SESSION) && res.request().method() === 'DELETE');

    await page.getByRole('button', { name: 'Sign out' }).click();
    expect((await signOut).status()).toBe(204);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await statusText(w!)).toContain('You signed out.');

    expect(await sessionCookie(w!)).toBeUndefined();
    const accessToken = w!.tokens[w!.tokens.length - 1]!;
    expect((await fetch(`${t.baseUrl}${KEYS}`, { headers: { Authorization: `Bearer ${accessToken}` } })).status).toBe(401);
  });

  it('keyboard only: Tab to Create key, fill the form, create, and Tab stays inside each dialog', async () => {
    const { page } = await open();
    await signIn(w!, admin);
    const appname = randomName('keyboard');
    const createKey = page.getByRole('button', { name: 'Create key' });

    for (let i = 0; i < 20 && !(await isFocused(createKey)); i++) await page.keyboard.press('Tab');
    expect(await isFocused(createKey)).toBe(true);
    await page.keyboard.press('Enter');
    const form = page.getByRole('dialog', { name: 'Create key' });
    expect(await isFocused(form.getByRole('textbox', { name: 'Appname' }))).toBe(true);
    await page.keyboard.type(appname);
    await page.keyboard.press('Tab');
    await page.keyboard.type('Typed, never clicked');
    await page.keyboard.press('Tab');
    expect(await isFocused(form.getByRole('combobox', { name: 'Role' }))).toBe(true);
    await page.keyboard.press('ArrowDown');
    for (let i = 0; i < 8; i++) {
      await page.keyboard.press('Tab');
      expect(await form.evaluate((dialog) => dialog.contains(document.activeElement))).toBe(true);
    }
    for (let i = 0; i < 20 && !(await isFocused(form.getByRole('button', { name: 'Create' }))); i++) await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Enter');

    const shown = page.getByRole('dialog', { name: `Key ${appname} created` });
    w!.secrets.add(await shown.getByRole('textbox', { name: 'Appkey' }).inputValue());
    expect(await isFocused(shown.getByRole('button', { name: 'Copy' }))).toBe(true);
    for (let i = 0; i < 5; i++) {
      await page.keyboard.press('Tab');
      expect(await shown.evaluate((dialog) => dialog.contains(document.activeElement))).toBe(true);
    }
    for (let i = 0; i < 5 && !(await isFocused(shown.getByRole('button', { name: 'Close' }))); i++) await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await shown.waitFor({ state: 'detached' });
    expect((await rowOf(w!, appname).getByRole('cell').allTextContents()).slice(0, 2)).toEqual(['Typed, never clicked', 'viewer']);
  });

  it('Escape closes a dialog, and focus goes back to the button that opened it', async () => {
    const { page } = await open();
    await signIn(w!, admin);
    const createKey = page.getByRole('button', { name: 'Create key' });

    await createKey.click();
    await page.getByRole('dialog', { name: 'Create key' }).waitFor();
    await page.keyboard.press('Escape');

    await page.getByRole('dialog').waitFor({ state: 'detached' });
    expect(await isFocused(createKey)).toBe(true);
    await rowOf(w!, 'billing-api').getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog', { name: 'Delete billing-api' }).waitFor();
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'detached' });
  });

  it('at 360 px wide nothing scrolls sideways (sign-in, keys, a dialog, the audit log), nor at 1920 px', async () => {
    const { page } = await open({ width: 360, height: 740 });
    await page.goto('/console/');
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await scrollsSideways(page)).toBe(false);
    await signIn(w!, admin);
    await rowOf(w!, 'billing-api').waitFor();
    expect(await scrollsSideways(page)).toBe(false);
    await w!.screenshot('keys-360px');
    // Rows are cards at this width, and still a table to a screen reader.
    expect(await page.getByRole('columnheader').allTextContents()).toEqual(['Appname', 'Description', 'Role', 'Last login', 'Last IP']);
    expect(await rowOf(w!, 'billing-api').getByRole('button', { name: 'Edit' }).count()).toBe(1);
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('dialog', { name: 'Create key' }).waitFor();
    expect(await scrollsSideways(page)).toBe(false);
    await w!.screenshot('create-360px');
    await page.keyboard.press('Escape');
    await page.getByRole('link', { name: 'Audit log' }).click();
    await dataRows(w!).first().waitFor();
    expect(await scrollsSideways(page)).toBe(false);
    await w!.screenshot('audit-360px');

    await page.setViewportSize({ width: 1920, height: 1080 });
    expect(await scrollsSideways(page)).toBe(false);
  });

  describe('a key\'s page and its policy (issue 34)', () => {
    const policyOf = async (appname: string) => (await t.http().get(`${KEYS}/${appname}/policy`).set(bearer(await tokenForRole(t, 'admin')))).body.data;
    const createWithPolicy = async (policy: Record<string, unknown>, role: 'viewer' | 'admin' = 'viewer', appname = randomName('policy')) => {
      const res = await t.http().post(KEYS).set(bearer(await tokenForRole(t, 'admin'))).send({ appname, roles: [role], policy });
      expect(res.status).toBe(201);
      return { appname, appkey: res.body.data.appkey as string };
    };

    it('an admin opens a key from its row, sees when it was created and last used, sets every policy field, and the API holds them', async () => {
      const key = await createWithPolicy({ permissions: ['billing:read'] });
      expect(await exchange(key)).toBe(200);
      const { page } = await open();
      w!.expectStatus(400);
      await signIn(w!, admin);
      await filterKeys(w!, key.appname);

      await rowOf(w!, key.appname).getByRole('link', { name: key.appname }).click();
      await page.getByRole('heading', { name: 'Policy', exact: true }).waitFor();
      expect(new URL(page.url()).pathname).toBe(`/console/keys/${key.appname}`);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(key.appname);
      const facts = await page.locator('.key-facts').textContent();
      expect(facts).toContain('Created');
      expect(facts).toContain(String(new Date().getFullYear()));
      expect(facts).not.toMatch(/Last used\s*never/);
      expect(await page.getByRole('textbox', { name: 'Permissions' }).inputValue()).toBe('billing:read');

      await page.getByRole('textbox', { name: 'Allowed addresses' }).fill('10.0.0.0/8\n10.0.0.1/8');
      await page.getByRole('button', { name: 'Save policy' }).click();
      const addresses = page.getByRole('textbox', { name: 'Allowed addresses' });
      await page.getByText(/has host bits set/).waitFor();
      expect(await descriptionOf(addresses)).toContain('"10.0.0.1/8" has host bits set');

      const expires = new Date(Date.now() + 7 * 86_400_000);
      expires.setMilliseconds(0);
      const local = new Date(expires.getTime() - expires.getTimezoneOffset() * 60_000).toISOString().slice(0, 19);
      await page.getByLabel('Expires at').fill(local);
      await addresses.fill('10.0.0.0/8\n2001:db8::/32');
      await page.getByRole('textbox', { name: 'Permissions' }).fill('billing:read\nreports:export');
      await page.getByRole('textbox', { name: 'Rate limit' }).fill('100');
      await page.getByRole('textbox', { name: 'Window (seconds)' }).fill('60');
      await page.getByRole('textbox', { name: 'Credits' }).fill('500');
      await page.getByRole('textbox', { name: 'Refill amount' }).fill('500');
      await page.getByRole('combobox', { name: 'Refill interval' }).selectOption('month');
      await page.getByRole('textbox', { name: 'Max idle days' }).fill('30');
      await page.getByRole('checkbox', { name: 'Enabled' }).uncheck();
      await w!.screenshot('key-page');
      await page.getByRole('button', { name: 'Save policy' }).click();
      await page.getByRole('status').filter({ hasText: 'Policy saved.' }).waitFor();

      expect(await policyOf(key.appname)).toMatchObject({
        expires_at: expires.getTime() / 1000,
        enabled: false,
        disabled_reason: 'manual',
        allowed_addresses: ['10.0.0.0/8', '2001:db8::/32'],
        permissions: ['billing:read', 'reports:export'],
        rate_limit: { limit: 100, window_seconds: 60 },
        credits: { remaining: 500, refill: { amount: 500, interval: 'month' } },
        max_idle_days: 30,
      });
      expect(await exchange(key)).toBe(401);
      await page.getByText('Disabled', { exact: true }).first().waitFor();

      await page.getByRole('link', { name: '← All keys' }).click();
      await filterKeys(w!, key.appname);
      await rowOf(w!, key.appname).getByText('Disabled', { exact: true }).waitFor();
    });

    it('a viewer sees the policy read-only, with no Save policy and the reason', async () => {
      const viewed = await createWithPolicy({ max_idle_days: 90 });
      const { page } = await open();
      // Straight to the key's page: the sign-in lands there.
      await signIn(w!, viewer, `/console/keys/${viewed.appname}`);

      await page.getByRole('heading', { name: 'Policy', exact: true }).waitFor();
      expect(await page.getByRole('textbox', { name: 'Max idle days' }).inputValue()).toBe('90');
      expect(await page.getByRole('textbox', { name: 'Max idle days' }).isEditable()).toBe(false);
      expect(await page.getByRole('checkbox', { name: 'Enabled' }).isDisabled()).toBe(true);
      expect(await page.getByRole('button', { name: 'Save policy' }).count()).toBe(0);
      expect(await page.getByText('Only editors and admins can change a key\u2019s policy.').count()).toBe(1);
    });

    it('an editor sees an admin key\'s policy read-only, with the reason', async () => {
      const adminKey = await createWithPolicy({ permissions: ['ops'] }, 'admin');
      const { page } = await open();
      await signIn(w!, editor, `/console/keys/${adminKey.appname}`);

      await page.getByRole('heading', { name: 'Policy', exact: true }).waitFor();
      expect(await page.getByRole('textbox', { name: 'Permissions' }).inputValue()).toBe('ops');
      expect(await page.getByRole('textbox', { name: 'Permissions' }).isEditable()).toBe(false);
      expect(await page.getByRole('button', { name: 'Save policy' }).count()).toBe(0);
      expect(await page.getByText('Only admins can change the policy of an admin key.').count()).toBe(1);
    });

    it('the keys table flags a disabled and an expired key; a key that works carries no badge', async () => {
      // Names that share a prefix put the three keys in one filtered list.
      const prefix = randomName('badged');
      await createWithPolicy({ enabled: false }, 'viewer', `${prefix}-off`);
      await createWithPolicy({ expires_at: Math.floor(Date.now() / 1000) + 2 }, 'viewer', `${prefix}-ending`);
      await createWithPolicy({}, 'viewer', `${prefix}-fine`);
      await new Promise((resolve) => setTimeout(resolve, 2_100));
      const { page } = await open();
      await signIn(w!, admin);
      await filterKeys(w!, prefix);

      await rowOf(w!, `${prefix}-off`).getByText('Disabled', { exact: true }).waitFor();
      await rowOf(w!, `${prefix}-ending`).getByText('Expired', { exact: true }).waitFor();
      // Every row's policy read by now, the key that works among them.
      await untilQuiet(page);
      expect(await rowOf(w!, `${prefix}-fine`).locator('.badge').count()).toBe(0);
      await w!.screenshot('keys-badges');
    });

    it('at 360 px wide a key\'s page does not scroll sideways', async () => {
      const key = await createWithPolicy({ allowed_addresses: ['2001:db8:ffff:ffff:ffff:ffff:ffff:0/112'], permissions: ['billing:read'] });
      const { page } = await open({ width: 360, height: 740 });
      await signIn(w!, admin, `/console/keys/${key.appname}`);
      await page.getByRole('heading', { name: 'Policy', exact: true }).waitFor();

      expect(await scrollsSideways(page)).toBe(false);
      await w!.screenshot('key-page-360px');
    });
  });

  it('the watch itself: an inline script the CSP blocks is reported, so a clean walk means no violation', async () => {
    const { page } = await open();
    await page.goto('/console/');
    await page.getByRole('button', { name: 'Sign in' }).waitFor();

    await page.evaluate(() => {
      const script = document.createElement('script');
      script.textContent = 'window.ran = true';
      document.head.append(script);
    });

    await page.waitForTimeout(200);
    expect(await page.evaluate(() => (window as unknown as { ran?: boolean }).ran)).toBeUndefined();
    expect(w!.problems.some((problem) => problem.includes('securitypolicyviolation: script-src'))).toBe(true);
    w!.problems.length = 0;
  });

  describe('with rate limits on and a database that can be cut', () => {
    let limited: TestApp;
    let proxy: TcpProxy;
    let database: TestDatabase;
    beforeAll(async () => {
      ({ proxy, database } = await proxiedTestDatabase());
      limited = await startTestApp({
        CONSOLE_DIR: built.dir,
        DATABASE_URL: database.url,
        DATABASE_CONNECT_TIMEOUT: '1',
        DATABASE_STATEMENT_TIMEOUT: '2',
        RATE_LIMIT_ENABLED: 'true',
        RATE_LIMIT_PASSWORD_FAILURES: '2',
      });
    }, 60_000);
    afterAll(async () => {
      proxy?.setMode('forward');
      await limited?.close();
      await database?.drop();
    });

    it('a 503 while the database is down says "service unavailable, try again", and Try again recovers', async () => {
      const user = await createUser(limited, { role: 'admin' });
      w = await openConsole(browser, limited.baseUrl);
      const { page } = w;
      w.expectStatus(503);
      w.page.setDefaultTimeout(20_000);
      await signIn(w, user);
      await page.getByRole('columnheader', { name: 'Appname' }).waitFor();

      proxy.setMode('refuse');
      const failed = page.waitForResponse((res) => res.url().includes('prefix=any') && res.status() === 503);
      await page.getByRole('searchbox', { name: 'Filter by appname' }).fill('any');
      await failed;
      await page.getByRole('alert').filter({ hasText: 'Service unavailable, try again.' }).waitFor();

      proxy.setMode('forward');
      await page.getByRole('button', { name: 'Try again' }).click();
      await page.getByRole('alert').waitFor({ state: 'detached' });
      expect(await page.getByText("No key's appname starts with “any”.").count()).toBe(1);
    });

    // Last: the failed logins count against this address too, so no one signs in here after it.
    it('a 429 says how long to wait', async () => {
      const user = await createUser(limited, { role: 'admin' });
      w = await openConsole(browser, limited.baseUrl);
      const { page } = w;
      w.expectStatus(400, 429);
      await page.goto('/console/');

      for (let attempt = 0; attempt < 3; attempt++) {
        await page.getByLabel('Username').fill(user.username);
        await page.getByLabel('Password').fill('wrong-password');
        const answered = page.waitForResponse((res) => res.url().endsWith('/oauth2/token'));
        await page.getByRole('button', { name: 'Sign in' }).click();
        await answered;
      }

      await page.getByRole('alert').filter({ hasText: /^Too many requests: try again in \d+ seconds\.$/ }).waitFor();
    });
  });
});
