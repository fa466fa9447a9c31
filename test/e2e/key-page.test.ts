/**
 * A key's own page in the console (/console/keys/{appname}), in Debian's headless Chromium against
 * the real service and database: a key that does not work says so and why, before anything else; and
 * its Usage (issue #35), a chart of the last 30 days drawn by the console as SVG, after real traffic.
 * Watched throughout as console.test.ts is (test/e2e/browser.ts): a console error, a CSP violation, a
 * cross-origin request, a 5xx or a secret in the console or the URL fails a test.
 */
import { runMaintenance } from '../../src/maintenance';
import { startTestApp, type TestApp } from '../helpers/app';
import { buildConsole, type BuiltConsole } from '../helpers/console';
import { bearer, createUser, randomName, tokenForRole, type TestUser } from '../helpers/factories';
import { signRequestToken } from '../helpers/tokens';
import { browserForTests, describeInChromium, scrollsSideways, untilQuiet, type Watched } from './browser';

jest.retryTimes(1, { logErrorsBeforeRetry: true });
jest.setTimeout(90_000);

const KEYS = '/api/v1/api-keys';
const VERIFY = '/api/v1/keys/verify';
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

  describe('Usage', () => {
    /** A token for the key the standard OAuth way (its appkey as the client secret): 200, or 429 past its rate limit. */
    const clientCredentials = async (key: { appname: string; appkey: string }) =>
      (
        await fetch(`${t.baseUrl}/oauth2/token`, {
          method: 'POST',
          headers: { Authorization: `Basic ${Buffer.from(`${key.appname}:${key.appkey}`).toString('base64')}`, 'Content-Type': 'application/x-www-form-urlencoded' },
          body: 'grant_type=client_credentials',
        })
      ).status;
    const keyRoute = async (key: { appname: string; appkey: string }) => (await t.http().post('/api/v1/auth/token').send({ jwt: signRequestToken(key.appname, key.appkey) })).status;
    const verify = async (key: { appkey: string }, extra: Record<string, unknown> = {}) =>
      (await t.http().post(VERIFY).set(bearer(await tokenForRole(t, 'viewer'))).send({ key: key.appkey, ...extra })).body.code as string;
    /** The counts each instance sums in memory, written now rather than at the next USAGE_FLUSH_SECONDS. */
    const flush = () => t.services.usageRecorder!.flush();

    const chart = (w: Watched) => w.page.getByRole('img', { name: /^Use of .* per day over the last 30 days/ });
    const legend = async (w: Watched) => (await w.page.locator('.legend li').allTextContents()).map((text) => text.replace(/\s+/g, ' ').trim());
    const totals = async (w: Watched) =>
      Object.fromEntries((await w.page.getByRole('table', { name: /^Totals over the last 30 days/ }).getByRole('row').allTextContents()).map((row) => {
        const [, label, n] = /^(.*?)([\d,]+)$/.exec(row.trim())!;
        return [label!.trim(), Number(n!.replace(/,/g, ''))];
      }));
    /** What each day's bar says on hover, oldest first. */
    const dayTitles = (w: Watched) => w.page.locator('.usage-chart .day > title').allTextContents();

    it('after tokens, verifications and refusals of a key, its Usage shows them: the legend, the chart\'s description, today\'s bar, the table per code; the other 29 days are zero', async () => {
      const key = await createWithPolicy({ permissions: ['billing:read'], rate_limit: { limit: 9, window_seconds: 3_600 } });
      // Nine uses within the rate limit: three tokens, five VALID, one INSUFFICIENT_PERMISSIONS...
      expect([await clientCredentials(key), await clientCredentials(key), await keyRoute(key)]).toEqual([200, 200, 200]);
      for (let n = 0; n < 5; n += 1) expect(await verify(key, { permissions: ['billing:read'] })).toBe('VALID');
      expect(await verify(key, { permissions: ['billing:write'] })).toBe('INSUFFICIENT_PERMISSIONS');
      // ...then the tenth is refused on each route: a token request (rate_limited) and a verification (RATE_LIMITED).
      expect(await clientCredentials(key)).toBe(429);
      expect(await verify(key)).toBe('RATE_LIMITED');
      await flush();

      const w = await openKeyPage(key.appname);
      await chart(w).waitFor();

      expect(await legend(w)).toEqual(['Verified (VALID) 5', 'Tokens issued 3', 'Refused: rate or usage limit 2', 'Refused: other reasons 1']);
      expect(await chart(w).getAttribute('aria-labelledby')).toBeTruthy();
      const described = await chart(w).evaluate((svg) => svg.querySelector('desc')?.textContent);
      expect(described).toMatch(/^Verified \(VALID\): 5; Tokens issued: 3; Refused: rate or usage limit: 2; Refused: other reasons: 1\. Busiest day: .+, 11 in all\.$/);
      const titles = await dayTitles(w);
      expect(titles).toHaveLength(30);
      expect(titles.at(-1)).toMatch(/: Verified \(VALID\): 5, Tokens issued: 3, Refused: rate or usage limit: 2, Refused: other reasons: 1$/);
      expect(titles.slice(0, -1).every((title) => title.endsWith('Verified (VALID): 0, Tokens issued: 0, Refused: rate or usage limit: 0, Refused: other reasons: 0'))).toBe(true);
      expect(await totals(w)).toEqual({
        'Tokens issued': 3,
        'Verifications: VALID': 5,
        'Verifications: INSUFFICIENT_PERMISSIONS': 1,
        'Verifications: RATE_LIMITED': 1,
        'Token requests refused: rate limit reached': 1,
      });
    });

    it('more use after the page loaded shows after Refresh', async () => {
      const key = await createWithPolicy({});
      expect(await verify(key)).toBe('VALID');
      await flush();
      const w = await openKeyPage(key.appname);
      await chart(w).waitFor();
      expect((await totals(w))['Verifications: VALID']).toBe(1);

      expect(await verify(key)).toBe('VALID');
      expect(await clientCredentials(key)).toBe(200);
      await flush();
      await w.page.getByRole('region', { name: 'Usage' }).getByRole('button', { name: 'Refresh' }).click();

      await w.page.getByRole('row', { name: 'Verifications: VALID 2' }).waitFor();
      expect((await totals(w))['Tokens issued']).toBe(1);
    });

    it('a key with no use in 30 days says so instead of drawing empty axes', async () => {
      const key = await createWithPolicy({});
      const w = await openKeyPage(key.appname);

      await w.page.getByText('No use in the last 30 days.').waitFor();
      expect(await chart(w).count()).toBe(0);
    });

    /** Four weeks of a busy key, written as the flushes would have (one row per hour and kind), for the screenshots. */
    async function history(appname: string) {
      const { id } = (await t.db.query<{ id: string }>('SELECT id FROM api_keys WHERE appname = $1', [appname])).rows[0]!;
      const today = Math.floor(Date.now() / 1000 / DAY) * DAY;
      const rows: [number, string, number][] = [];
      for (let back = 27; back >= 1; back -= 1) {
        const day = today - back * DAY;
        const weekend = [0, 6].includes(new Date(day * 1000).getUTCDay());
        const valid = weekend ? 40 + ((back * 7) % 23) : 160 + ((back * 37) % 90);
        rows.push([day + 9 * 3_600, 'verification:VALID', valid], [day + 9 * 3_600, 'tokens', Math.round(valid / 4)]);
        if (back % 5 === 0) rows.push([day + 14 * 3_600, 'verification:RATE_LIMITED', 30 + back], [day + 14 * 3_600, 'refused:rate_limited', 6]);
        if (back % 9 === 2) rows.push([day + 15 * 3_600, 'verification:INSUFFICIENT_PERMISSIONS', 12]);
      }
      for (const [hour, kind, n] of rows) await t.db.query('INSERT INTO api_key_usage (api_key_id, hour, kind, n) VALUES ($1, to_timestamp($2), $3, $4)', [id, hour, kind, n]);
      return rows;
    }

    it('a month of use: a bar a day in its place, the numbers add up, and at 360 px the chart fits with its dates legible', async () => {
      const key = await createWithPolicy(
        { permissions: ['billing:read', 'billing:write'], rate_limit: { limit: 600, window_seconds: 60 }, credits: { remaining: 48_000, refill: { amount: 50_000, interval: 'month' } } },
        randomName('billing-api'),
        'Charges customers; owned by the payments team',
      );
      const rows = await history(key.appname);
      expect(await clientCredentials(key)).toBe(200);
      for (let n = 0; n < 3; n += 1) expect(await verify(key)).toBe('VALID');
      await flush();
      const valid = rows.filter(([, kind]) => kind === 'verification:VALID').reduce((a, [, , n]) => a + n, 0) + 3;

      const w = await openKeyPage(key.appname);
      await chart(w).waitFor();
      expect((await totals(w))['Verifications: VALID']).toBe(valid);
      const titles = await dayTitles(w);
      // The oldest two days of the window had no use; the third holds what was written 27 days ago.
      expect(titles[0]).toMatch(/Verified \(VALID\): 0,/);
      expect(titles[2]).toMatch(new RegExp(`Verified \\(VALID\\): ${rows[0]![2]},`));
      // The pointer off the chart: a day under it is highlighted.
      await w.page.mouse.move(1, 1);
      await w.screenshot('key-usage');

      await w.page.setViewportSize({ width: 360, height: 740 });
      await w.page.getByRole('region', { name: 'Usage' }).evaluate((section) => section.scrollIntoView({ block: 'start' }));
      // The chart is drawn again at its new width, with fewer dates rather than smaller ones.
      await w.page.waitForFunction(() => (document.querySelector('.usage-chart svg')?.getBoundingClientRect().width ?? 999) < 340);
      expect(await scrollsSideways(w.page)).toBe(false);
      const labels = await w.page.locator('.usage-chart svg text').evaluateAll((texts) =>
        texts.map((text) => ({ box: text.getBoundingClientRect(), size: parseFloat(getComputedStyle(text).fontSize) })),
      );
      expect(labels.every(({ size }) => size >= 12)).toBe(true);
      const svgBox = await w.page.locator('.usage-chart svg').evaluate((svg) => svg.getBoundingClientRect());
      expect(labels.every(({ box }) => box.left >= svgBox.left - 1 && box.right <= svgBox.right + 1)).toBe(true);
      const dates = labels.filter(({ box }) => box.top > svgBox.top + svgBox.height - 24).map(({ box }) => box);
      expect(dates.length).toBeGreaterThanOrEqual(3);
      expect(dates.every((box, n) => n === 0 || box.left >= dates[n - 1]!.right)).toBe(true);
      await w.screenshot('key-usage-360px');
    });
  });
});
