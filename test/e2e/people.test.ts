/**
 * Issue 37 ("People") in Debian's headless Chromium, as console.test.ts drives the console: the Users
 * page, changing one's own password, a reload that stays signed in (the refresh token in the session
 * route's HttpOnly cookie), filters and the open page in the URL, an audit event's details, sign-out
 * leaving no usable cookie, and a page of another origin that cannot use the cookie. Each test is
 * watched throughout (test/e2e/browser.ts): a console error, an uncaught exception, a CSP violation,
 * a failed or cross-origin request, a 5xx or a secret in the console or the URL fails it, and so does
 * anything left in browser storage but the session cookie as the contract has it.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../helpers/app';
import { buildConsole, type BuiltConsole } from '../helpers/console';
import { bearer, createUser, loginAs, randomName, type TestUser } from '../helpers/factories';
import {
  CONSOLE_SESSION,
  browserStorage,
  describeInChromium,
  descriptionOf,
  requireChromium,
  launchChromium,
  openConsole,
  scrollsSideways,
  sessionCookie,
  type Watched,
} from './browser';

jest.retryTimes(1, { logErrorsBeforeRetry: true });
jest.setTimeout(90_000);

describeInChromium('the People browser tests')('People in the console (Chromium)', () => {
  let built: BuiltConsole;
  let t: TestApp;
  let browser: Browser;
  let admin: TestUser;
  let watched: Watched[] = [];

  beforeAll(async () => {
    requireChromium();
    built = buildConsole();
    t = await startTestApp({ CONSOLE_DIR: built.dir });
    browser = await launchChromium();
    admin = await createUser(t, { role: 'admin' });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    built?.remove();
  });

  afterEach(async () => {
    const all = watched;
    watched = [];
    for (const w of all) {
      const storage = await browserStorage(w);
      await w.close();
      expect(w.problems).toEqual([]);
      expect(storage).toBe('');
    }
  });

  async function open(viewport?: { width: number; height: number }): Promise<Watched> {
    const w = await openConsole(browser, t.baseUrl, viewport);
    w.page.setDefaultTimeout(20_000);
    watched.push(w);
    return w;
  }

  async function signIn(w: Watched, user: TestUser, path = '/console/') {
    const { page } = w;
    w.secrets.add(user.password);
    if (!page.url().includes('/console')) await page.goto(path);
    await page.getByLabel('Username').fill(user.username);
    await page.getByLabel('Password', { exact: true }).fill(user.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
  }

  /** Polls until `read` gives `expected`, else fails showing the last value. */
  async function eventually<T>(read: () => Promise<T>, expected: T, timeoutMs = 5_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    let last = await read();
    while (JSON.stringify(last) !== JSON.stringify(expected) && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      last = await read();
    }
    expect(last).toEqual(expected);
  }

  const rowOf = (page: Page, name: string) => page.getByRole('row', { name: new RegExp(`^${name.replace(/[.]/g, '\\.')}\\b`) });
  const cellsOf = async (page: Page, name: string) => rowOf(page, name).getByRole('cell').allTextContents();
  const passwordLogin = (user: TestUser) => fetch(`${t.baseUrl}/api/auth/bearer/token`, { method: 'POST', body: new URLSearchParams({ ...user }) });

  it('Users page: create with a generated password shown once, change the role (the select explains it), disable and enable, reset the password, delete', async () => {
    const w = await open();
    const { page } = w;
    w.expectStatus(400);
    await signIn(w, admin);
    await page.getByRole('link', { name: 'Users' }).click();
    await page.getByRole('heading', { name: 'Users' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/console/users');
    expect(await page.getByRole('columnheader').allTextContents()).toEqual(['Username', 'Role', 'Status', 'Created', 'Last login']);
    await rowOf(page, admin.username).waitFor();
    const username = randomName('operator');

    // Create, without a password: the service generates one, shown once.
    await page.getByRole('button', { name: 'Create user' }).click();
    const form = page.getByRole('dialog', { name: 'Create user' });
    await form.getByRole('textbox', { name: 'Username' }).fill(username);
    const role = form.getByRole('combobox', { name: 'Role' });
    expect(await descriptionOf(role)).toBe('Viewer: lists and reads API keys; changes nothing.');
    await role.selectOption('editor');
    expect(await descriptionOf(role)).toBe('Editor: also creates, edits, regenerates and deletes keys whose role is viewer, editor or none.');
    await w.screenshot('create-user');
    await form.getByRole('button', { name: 'Create' }).click();
    const shown = page.getByRole('dialog', { name: `User ${username} created` });
    const password = await shown.getByRole('textbox', { name: 'Password' }).inputValue();
    w.secrets.add(password);
    expect(await shown.textContent()).toContain('it will not be shown again');
    await shown.getByRole('button', { name: 'Copy' }).click();
    await shown.getByRole('status').filter({ hasText: 'Copied to the clipboard.' }).waitFor();
    await w.screenshot('new-user-password');
    await shown.getByRole('button', { name: 'Close' }).click();
    await shown.waitFor({ state: 'detached' });
    expect(await page.content()).not.toContain(password);
    expect((await cellsOf(page, username)).slice(0, 4)).toEqual(['editor', 'active', expect.stringContaining(String(new Date().getFullYear())), 'never']);
    const user = { username, password };
    expect((await passwordLogin(user)).status).toBe(200);
    await page.reload();
    await rowOf(page, username).waitFor();
    expect((await cellsOf(page, username))[3]).not.toBe('never');
    await w.screenshot('users');

    // Change the role: the select says what the new one may do; the user's sessions end.
    const session = await loginAs(t, user);
    await rowOf(page, username).getByRole('button', { name: 'Edit' }).click();
    const edit = page.getByRole('dialog', { name: `Edit ${username}` });
    await edit.getByRole('combobox', { name: 'Role' }).selectOption('admin');
    expect(await descriptionOf(edit.getByRole('combobox', { name: 'Role' }))).toBe('Admin: everything: admin keys too, users and the audit log.');
    await w.screenshot('edit-user');
    await edit.getByRole('button', { name: 'Save' }).click();
    await edit.waitFor({ state: 'detached' });
    await eventually(async () => (await cellsOf(page, username))[0], 'admin');
    expect((await fetch(`${t.baseUrl}/api/v1/me`, { headers: bearer(session.access_token) })).status).toBe(401);

    // Disable (confirmed), then enable.
    await rowOf(page, username).getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('dialog', { name: `Disable ${username}` }).getByRole('button', { name: 'Disable' }).click();
    await eventually(async () => (await cellsOf(page, username))[1], 'disabled');
    expect((await passwordLogin(user)).status).toBe(401);
    await rowOf(page, username).getByRole('button', { name: 'Enable' }).click();
    await page.getByRole('dialog', { name: `Enable ${username}` }).getByRole('button', { name: 'Enable' }).click();
    await eventually(async () => (await cellsOf(page, username))[1], 'active');
    expect((await passwordLogin(user)).status).toBe(200);

    // Reset the password: a rule the API refuses shows beside the field; a good one replaces the old.
    await rowOf(page, username).getByRole('button', { name: 'Reset password' }).click();
    const reset = page.getByRole('dialog', { name: `Reset password of ${username}` });
    const field = reset.getByLabel('New password');
    await field.fill('too-short');
    await reset.getByRole('button', { name: 'Reset password' }).click();
    await reset.getByText('Must be at least 12 characters.').waitFor();
    expect(await descriptionOf(field)).toContain('Must be at least 12 characters.');
    const newPassword = 'reset-by-the-admin-1';
    w.secrets.add(newPassword);
    await field.fill(newPassword);
    await reset.getByRole('button', { name: 'Reset password' }).click();
    await reset.waitFor({ state: 'detached' });
    expect((await passwordLogin(user)).status).toBe(401);
    expect((await passwordLogin({ username, password: newPassword })).status).toBe(200);

    // Delete, confirmed by typing the name.
    await rowOf(page, username).getByRole('button', { name: 'Delete' }).click();
    const remove = page.getByRole('dialog', { name: `Delete ${username}` });
    const confirm = remove.getByRole('button', { name: 'Delete' });
    expect(await confirm.isDisabled()).toBe(true);
    await remove.getByRole('textbox', { name: 'Type the username to confirm' }).fill(username);
    await confirm.click();
    await remove.waitFor({ state: 'detached' });
    expect(await rowOf(page, username).count()).toBe(0);
    expect((await passwordLogin({ username, password: newPassword })).status).toBe(401);
  });

  it('Users page at 360 px: rows are cards, nothing scrolls sideways, the dialogs fit; a non-admin sees no Users link', async () => {
    const w = await open({ width: 360, height: 740 });
    const { page } = w;
    await signIn(w, admin, '/console/users');
    await rowOf(page, admin.username).waitFor();
    expect(await scrollsSideways(page)).toBe(false);
    await w.screenshot('users-360px');
    await page.getByRole('button', { name: 'Create user' }).click();
    await page.getByRole('dialog', { name: 'Create user' }).waitFor();
    expect(await scrollsSideways(page)).toBe(false);
    await w.screenshot('create-user-360px');
    await page.keyboard.press('Escape');

    const viewer = await createUser(t, { role: 'viewer' });
    const other = await open();
    await signIn(other, viewer, '/console/users');
    await other.page.getByRole('alert').filter({ hasText: 'Users are managed by admins only.' }).waitFor();
    expect(await other.page.getByRole('link', { name: 'Users' }).count()).toBe(0);
  });

  it('Change password: a wrong current password is shown beside its field without signing out; a weak new one beside its own; then other sessions end and this one stays', async () => {
    const user = await createUser(t, { role: 'viewer' });
    const elsewhere = await loginAs(t, user);
    const w = await open();
    const { page } = w;
    w.expectStatus(400, 401);
    await signIn(w, user);

    await page.getByRole('button', { name: 'Change password' }).click();
    const dialog = page.getByRole('dialog', { name: 'Change password' });
    const current = dialog.getByLabel('Current password');
    const next = dialog.getByLabel('New password');
    await current.fill('not-my-password');
    await next.fill('my-very-own-password-1');
    await dialog.getByRole('button', { name: 'Change password' }).click();
    await dialog.getByText('The current password is wrong.').waitFor();
    expect(await descriptionOf(current)).toBe('The current password is wrong.');
    expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(1);

    await current.fill(user.password);
    await next.fill('aaaaaaaaaaaaaaaa');
    await dialog.getByRole('button', { name: 'Change password' }).click();
    await dialog.getByText('Must not be one character repeated.').waitFor();
    expect(await descriptionOf(next)).toContain('Must not be one character repeated.');
    await w.screenshot('change-password');

    const newPassword = 'my-very-own-password-2';
    w.secrets.add(newPassword);
    await next.fill(newPassword);
    await dialog.getByRole('button', { name: 'Change password' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByRole('status').filter({ hasText: 'Your password was changed.' }).waitFor();

    expect((await fetch(`${t.baseUrl}/api/v1/me`, { headers: bearer(elsewhere.access_token) })).status).toBe(401);
    await page.getByRole('searchbox', { name: 'Filter by appname' }).fill('still-signed-in');
    await page.getByText('No key\'s appname starts with “still-signed-in”.').waitFor();
    expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(1);
    expect((await passwordLogin(user)).status).toBe(401);
    expect((await passwordLogin({ ...user, password: newPassword })).status).toBe(200);
  });

  it('Change password at 360 px fits without scrolling sideways', async () => {
    const user = await createUser(t, { role: 'editor' });
    const w = await open({ width: 360, height: 740 });
    await signIn(w, user);
    await w.page.getByRole('button', { name: 'Change password' }).click();
    await w.page.getByRole('dialog', { name: 'Change password' }).waitFor();
    expect(await scrollsSideways(w.page)).toBe(false);
    await w.screenshot('change-password-360px');
  });

  it('a reload keeps the operator signed in, on the same page with the same filters; a second tab opens signed in; nothing but the HttpOnly session cookie is kept', async () => {
    const w = await open();
    const { page } = w;
    await signIn(w, admin);
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByRole('combobox', { name: 'Type' }).selectOption('token.issued');
    await page.getByRole('searchbox', { name: 'Username' }).fill(admin.username);
    await eventually(async () => new URL(page.url()).search, `?type=token.issued&username=${admin.username}`);
    const cookie = await sessionCookie(w);
    expect(cookie).toEqual(expect.objectContaining({ httpOnly: true, sameSite: 'Strict', path: CONSOLE_SESSION, secure: false }));
    expect(await page.evaluate(() => document.cookie)).toBe('');
    const signIns = w.tokens.length;

    await page.reload();

    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    expect(await page.getByRole('button', { name: 'Sign in' }).count()).toBe(0);
    expect(await page.getByRole('combobox', { name: 'Type' }).inputValue()).toBe('token.issued');
    expect(await page.getByRole('searchbox', { name: 'Username' }).inputValue()).toBe(admin.username);
    // Resumed through the session route, which rotated the refresh token in the cookie; no new sign-in.
    expect((await sessionCookie(w))!.value).not.toBe(cookie!.value);
    expect(w.tokens.length).toBe(signIns + 1);

    const second = await w.context.newPage();
    await second.goto('/console/');
    await second.getByRole('button', { name: 'Sign out' }).waitFor();
    await second.close();
  });

  it('a shared URL opens the same filtered view: the keys prefix and the audit filters, after sign-in in another browser', async () => {
    const w = await open();
    const { page } = w;
    const keys = `${t.baseUrl}/console/?prefix=billing`;
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const audit = `${t.baseUrl}/console/audit?type=login.failed&username=${admin.username}&since=${encodeURIComponent(since)}`;
    w.expectStatus(401);
    await passwordLogin({ ...admin, password: 'wrong-password-here' });

    await page.goto(audit);
    await signIn(w, admin);

    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    expect(await page.getByRole('combobox', { name: 'Type' }).inputValue()).toBe('login.failed');
    expect(await page.getByRole('searchbox', { name: 'Username' }).inputValue()).toBe(admin.username);
    expect(new Date(await page.getByLabel('Since').inputValue()).getTime()).toBe(Math.floor(Date.parse(since) / 1000) * 1000);
    await eventually(async () => (await page.getByRole('row').filter({ hasNot: page.getByRole('columnheader') }).getByRole('cell').allTextContents()).filter((_, i) => i % 5 === 0), ['login.failed']);

    const other = await open();
    await other.page.goto(keys);
    await signIn(other, admin);
    expect(await other.page.getByRole('searchbox', { name: 'Filter by appname' }).inputValue()).toBe('billing');
    expect(new URL(other.page.url()).search).toBe('?prefix=billing');
    // Changing page drops the filters of the page left; Back brings them.
    await other.page.getByRole('link', { name: 'Users' }).click();
    expect(new URL(other.page.url()).pathname + new URL(other.page.url()).search).toBe('/console/users');
    await other.page.goBack();
    await other.page.getByRole('searchbox', { name: 'Filter by appname' }).waitFor();
    expect(await other.page.getByRole('searchbox', { name: 'Filter by appname' }).inputValue()).toBe('billing');
  });

  it('audit details: an event’s row opens to show its request id, route, reason and the rest of its details', async () => {
    const user = await createUser(t, { role: 'editor' });
    await loginAs(t, user);
    const adminToken = (await loginAs(t, admin)).access_token;
    const demoted = await fetch(`${t.baseUrl}/api/v1/users/${user.username}`, {
      method: 'PUT',
      headers: { ...bearer(adminToken), 'Content-Type': 'application/json', 'X-Request-Id': `e2e-${user.username}` },
      body: JSON.stringify({ role: 'viewer' }),
    });
    expect(demoted.status).toBe(200);
    const w = await open();
    const { page } = w;
    await signIn(w, admin, `/console/audit?type=session.revoked&username=${user.username}`);

    const row = page.getByRole('row').filter({ hasText: 'session.revoked' });
    await row.waitFor();
    const toggle = row.getByRole('button');
    expect(await toggle.getAttribute('aria-expanded')).toBe('false');
    await toggle.click();

    expect(await toggle.getAttribute('aria-expanded')).toBe('true');
    const details = page.getByRole('group', { name: /^Details of event \d+$/ });
    const facts = Object.fromEntries(
      await details.locator('.fact').evaluateAll((nodes) => nodes.map((n) => [n.querySelector('dt')!.textContent, n.querySelector('dd')!.textContent])),
    );
    expect(facts).toEqual(
      expect.objectContaining({ 'Request id': `e2e-${user.username}`, route: '/api/v1/users/:username', reason: 'role_changed', session_id: expect.stringMatching(/^[0-9a-f-]{36}$/) }),
    );
    await w.screenshot('audit-details');
    await page.setViewportSize({ width: 360, height: 740 });
    expect(await scrollsSideways(page)).toBe(false);
    // The details, not the filters above them, in the picture.
    await toggle.evaluate((element) => element.scrollIntoView({ block: 'start' }));
    await w.screenshot('audit-details-360px');
    await toggle.click();
    await details.waitFor({ state: 'detached' });
  });

  it('sign-out leaves no usable cookie: a second tab’s reload lands on sign-in, and the old cookie renews nothing', async () => {
    const w = await open();
    w.expectStatus(401);
    await signIn(w, admin);
    const second = await w.context.newPage();
    await second.goto('/console/');
    await second.getByRole('button', { name: 'Sign out' }).waitFor();
    const before = (await sessionCookie(w))!.value;

    await w.page.getByRole('button', { name: 'Sign out' }).click();
    await w.page.getByRole('button', { name: 'Sign in' }).waitFor();

    expect(await sessionCookie(w)).toBeUndefined();
    await second.reload();
    await second.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await second.getByRole('status').allTextContents()).not.toContain('Your session ended. Sign in again.');
    await second.close();
    const replayed = await fetch(`${t.baseUrl}${CONSOLE_SESSION}`, { method: 'POST', headers: { 'X-Console-Session': '1', Cookie: `console_session=${before}` } });
    expect(replayed.status).toBe(401);
  });

  describe('a page of another origin', () => {
    let evil: Server;
    let evilOrigin: string;
    beforeAll(async () => {
      // Same site as the console (127.0.0.1), another origin (port): SameSite alone would let the cookie go.
      evil = createServer((_req, res) => {
        res.setHeader('Content-Type', 'text/html');
        res.end('<!doctype html><title>elsewhere</title><form id="f" method="post"></form>');
      });
      await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
      evilOrigin = `http://127.0.0.1:${(evil.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise((resolve) => evil.close(resolve)));

    it('when it posts to the session route (a simple fetch with credentials, a form, a fetch with the header), then the cookie is never used: 403, or no request at all', async () => {
      const w = await open();
      await signIn(w, admin);
      const cookie = (await sessionCookie(w))!.value;
      const attacker = await w.context.newPage();
      await attacker.goto(evilOrigin);
      const target = `${t.baseUrl}${CONSOLE_SESSION}`;
      const logsBefore = t.logs().length;

      // Each carries the cookie (same site); none carries both the header and the console's own origin.
      await attacker.evaluate((url) => fetch(url, { method: 'POST', credentials: 'include', mode: 'no-cors' }).catch(() => undefined), target);
      const withHeader = await attacker.evaluate(
        (url) => fetch(url, { method: 'POST', credentials: 'include', headers: { 'X-Console-Session': '1' } }).then((r) => `answered ${r.status}`, (e: Error) => e.name),
        target,
      );
      await attacker.evaluate((url) => {
        const form = document.getElementById('f') as HTMLFormElement;
        form.action = url;
        form.submit();
      }, target);
      await attacker.waitForURL(target);
      const formAnswer = await attacker.textContent('body');
      await attacker.close();

      const served = t
        .logs()
        .slice(logsBefore)
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { req?: { method: string; path: string }; res?: { status: number } })
        .filter((line) => line.req?.path === CONSOLE_SESSION)
        .map((line) => `${line.req!.method} ${line.res!.status}`);
      // The preflight that the header needs is refused, so the POST carrying the header never leaves the browser.
      expect(served.sort()).toEqual(['OPTIONS 403', 'POST 403', 'POST 403']);
      expect(withHeader).toBe('TypeError');
      expect(formAnswer).toContain('"status":403');
      expect((await sessionCookie(w))!.value).toBe(cookie);
      await w.page.reload();
      await w.page.getByRole('button', { name: 'Sign out' }).waitFor();
    });
  });
});
