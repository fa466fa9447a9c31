import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Cookie, type Locator, type Page } from 'playwright-core';
import { describeUnless } from '../helpers/skips';

/** Debian's chromium package: no browser download can work here, so Playwright drives this one. */
export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_MISSING = `${CHROMIUM} is missing; install it with: apt-get install -y chromium`;
export const chromiumAvailable = existsSync(CHROMIUM);

/**
 * `describe` for browser tests, or `describe.skip` with the reason in the run's summary when Chromium is
 * missing; under CI=true they run, and requireChromium() in their beforeAll fails them instead.
 */
export const describeInChromium = (what: string): jest.Describe =>
  describeUnless(!chromiumAvailable && process.env.CI !== 'true' && { what, why: CHROMIUM_MISSING });

/** For a browser test's beforeAll: under CI=true a missing Chromium is a failure, not a skip. */
export function requireChromium(): void {
  if (!chromiumAvailable) throw new Error(`CI=true: ${CHROMIUM_MISSING}`);
}

/** Where the screenshots of the main screens go: CONSOLE_SCREENSHOTS (docs/console to refresh those of docs/console.md), else a git-ignored folder. */
export const SCREENSHOTS = path.resolve(process.env.CONSOLE_SCREENSHOTS ?? path.join(__dirname, '..', '..', 'test-results', 'console'));

export function launchChromium(): Promise<Browser> {
  // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
}

/**
 * What a page did that the console must never do, collected as it happens: a console error or
 * warning, an uncaught exception, a CSP violation (reported by the page's own
 * securitypolicyviolation event, and by Chromium's console message), a failed request, a 5xx, any
 * request to another origin, and any secret in a console message or in the URL.
 */
export interface Watched {
  page: Page;
  context: BrowserContext;
  problems: string[];
  /** Every access and refresh token the service handed this page, as read off the wire. */
  tokens: string[];
  /** Secrets the console must not write anywhere but where shown: tokens, passwords, appkeys. */
  secrets: Set<string>;
  /**
   * Statuses the test provokes (a wrong password's 400, a 503 while the database is cut): Chromium
   * logs each refused request as a console error, which is the browser's report of that status and
   * not a fault of the page; and a 5xx named here is no server fault.
   */
  expectStatus: (...statuses: number[]) => void;
  screenshot: (name: string) => Promise<void>;
  close: () => Promise<void>;
}

export async function openConsole(browser: Browser, baseUrl: string, viewport = { width: 1280, height: 800 }): Promise<Watched> {
  const context = await browser.newContext({ viewport, baseURL: baseUrl });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseUrl });
  const page = await context.newPage();
  const problems: string[] = [];
  const tokens: string[] = [];
  const secrets = new Set<string>();
  const expected = new Set<number>();
  const origin = new URL(baseUrl).origin;

  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      console.error(`securitypolicyviolation: ${event.violatedDirective} blocked ${event.blockedURI}`);
    });
  });
  page.on('console', (message) => {
    const text = message.text();
    for (const secret of secrets) if (text.includes(secret)) problems.push(`a secret in a console message: ${text.slice(0, 80)}`);
    if (message.type() !== 'error' && message.type() !== 'warning') return;
    const status = /^Failed to load resource: the server responded with a status of (\d{3})/.exec(text)?.[1];
    if (status && expected.has(Number(status))) return;
    problems.push(`console ${message.type()}: ${text}`);
  });
  page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`));
  page.on('requestfailed', (request) => problems.push(`request failed: ${request.method()} ${request.url()} ${request.failure()?.errorText}`));
  page.on('request', (request) => {
    if (!request.url().startsWith(origin) && !request.url().startsWith('data:')) problems.push(`request to another origin: ${request.url()}`);
  });
  page.on('framenavigated', (frame) => {
    for (const secret of secrets) if (frame.url().includes(secret)) problems.push('a secret in the URL');
  });
  page.on('response', async (response) => {
    if (response.status() >= 500 && !expected.has(response.status())) problems.push(`${response.status()} from ${response.request().method()} ${response.url()}`);
    const pathname = new URL(response.url()).pathname;
    if ((pathname === '/oauth2/token' || pathname === CONSOLE_SESSION) && response.status() === 200) {
      // The session route answers in the envelope, with the access token only (its refresh token is in the cookie).
      // A token response still being read as the test closes its page cannot be read any more, and
      // the rejection lands outside any test's steps: one CI run had all 26 console tests fail with
      // this read's "has been closed" and nothing else. The page's storage was checked before it
      // closed (closeWatched), so that token can end up nowhere the watch looks.
      const answer = (await response.json().catch((err: Error) => {
        if (page.isClosed() || /has been closed/.test(err.message)) return undefined;
        throw err;
      })) as { access_token: string; refresh_token?: string; data?: { access_token: string } } | undefined;
      if (!answer) return;
      const body = answer.data ?? answer;
      for (const token of [body.access_token, (body as { refresh_token?: string }).refresh_token]) {
        if (token) {
          tokens.push(token);
          secrets.add(token);
        }
      }
    }
  });

  return {
    page,
    context,
    problems,
    tokens,
    secrets,
    expectStatus: (...statuses) => statuses.forEach((status) => expected.add(status)),
    async screenshot(name) {
      mkdirSync(SCREENSHOTS, { recursive: true });
      await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`) });
    },
    close: () => context.close(),
  };
}

/** The console's session route: the one path its refresh-token cookie is sent to. */
export const CONSOLE_SESSION = '/console/session';

/** The console's refresh-token cookie as the browser holds it (on loopback HTTP: console_session), if any. */
export async function sessionCookie(watched: Watched): Promise<Cookie | undefined> {
  return (await watched.context.cookies()).find((c) => c.name === 'console_session');
}

/**
 * Everything the browser keeps for this origin: Web Storage, IndexedDB databases, cookies (page's and
 * context's), except the one thing the contract allows: the console's refresh-token cookie, and only
 * as it must be (HttpOnly, SameSite=Strict, its own path, and so not readable by the page).
 */
export async function browserStorage(watched: Watched): Promise<string> {
  const inPage = await watched.page.evaluate(async () => {
    const dump = (storage: Storage) => Object.entries({ ...storage }).map(([k, v]) => `${k}=${v}`);
    const databases = await indexedDB.databases();
    return [...dump(localStorage), ...dump(sessionStorage), ...databases.map((d) => `indexedDB:${d.name}`), document.cookie].join('\n');
  });
  const allowed = (c: Cookie) => c.name === 'console_session' && c.httpOnly && c.sameSite === 'Strict' && c.path === CONSOLE_SESSION;
  const cookies = (await watched.context.cookies())
    .filter((c) => !allowed(c))
    .map((c) => `${c.name}=${c.value}`)
    .join('\n');
  return `${inPage}${cookies}`.trim();
}

/**
 * The hooks a browser test file needs: Chromium launched before its tests and closed after them, and
 * the page each test opened (`open`) closed and checked after it (closeWatched).
 */
export function browserForTests(): { open: (baseUrl: string, viewport?: { width: number; height: number }) => Promise<Watched> } {
  let browser: Browser | undefined;
  let current: Watched | undefined;
  beforeAll(async () => {
    requireChromium();
    browser = await launchChromium();
  }, 60_000);
  afterAll(() => browser?.close());
  afterEach(async () => {
    const watched = current;
    current = undefined;
    if (watched) await closeWatched(watched);
  });
  return {
    async open(baseUrl, viewport) {
      current = await openConsole(browser!, baseUrl, viewport);
      current.page.setDefaultTimeout(20_000);
      return current;
    },
  };
}

/** Closes a watched page at a test's end, failing the test on any problem seen or anything left in browser storage. */
export async function closeWatched(watched: Watched): Promise<void> {
  const storage = await browserStorage(watched);
  await watched.close();
  expect(watched.problems).toEqual([]);
  expect(storage).toBe('');
}

/** The text a control's aria-describedby points at: its hint and, when there is one, its error. */
export function descriptionOf(control: Locator): Promise<string> {
  return control.evaluate((element) =>
    (element.getAttribute('aria-describedby') ?? '')
      .split(/\s+/)
      .filter(Boolean)
      .map((id) => document.getElementById(id)?.textContent ?? '')
      .join(' '),
  );
}

/** True when the page scrolls sideways (the document is wider than the viewport). */
export function scrollsSideways(page: Page): Promise<boolean> {
  return page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
}

/**
 * Where, inside `root` (a dialog, a panel), something is wider than its box: the root itself, or a box
 * that scrolls sideways (a table in an overflow-x: auto wrapper, say), which a phone user must swipe.
 * Empty when everything fits.
 */
export function sidewaysInside(root: Locator): Promise<string[]> {
  return root.evaluate((element) =>
    [element, ...element.querySelectorAll('*')]
      .filter((el) => el === element || ['auto', 'scroll'].includes(getComputedStyle(el).overflowX))
      .filter((el) => el.scrollWidth > el.clientWidth + 1)
      .map((el) => `<${el.tagName.toLowerCase()} class="${el.className}"> ${el.scrollWidth} px in ${el.clientWidth} px`),
  );
}

/**
 * Until the page has sent or finished no request for a second: what a page loads after it shows (the
 * keys table reads each row's policy after its list) is over, so a test that then signs out, revokes
 * or navigates does not cut a request short.
 */
export async function untilQuiet(page: Page): Promise<void> {
  let inFlight = 0;
  let lastChange = Date.now();
  const up = () => ((inFlight += 1), (lastChange = Date.now()));
  const down = () => ((inFlight -= 1), (lastChange = Date.now()));
  page.on('request', up);
  page.on('requestfinished', down);
  page.on('requestfailed', down);
  try {
    while (inFlight > 0 || Date.now() - lastChange < 1_000) await new Promise((resolve) => setTimeout(resolve, 50));
  } finally {
    page.off('request', up);
    page.off('requestfinished', down);
    page.off('requestfailed', down);
  }
}
