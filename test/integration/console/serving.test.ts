import { readFileSync, readdirSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { startTestApp, type TestApp } from '../../helpers/app';
import { buildConsole, type BuiltConsole } from '../../helpers/console';

/** The contract's policy, copied from it (not from the code), so a drift in either shows here. */
const CONTRACT_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

const get = (t: TestApp, urlPath: string, init: RequestInit = {}) => fetch(`${t.baseUrl}${urlPath}`, { redirect: 'manual', ...init });

describe('the admin console, served at /console/', () => {
  let built: BuiltConsole;
  let t: TestApp;
  let assets: string[];
  beforeAll(async () => {
    built = buildConsole();
    // What a browser must never be handed: dist/console/ also holds the compiled server module.
    writeFileSync(path.join(built.dir, 'console.router.js'), 'module.exports = {};');
    t = await startTestApp({ CONSOLE_DIR: built.dir });
    assets = readdirSync(path.join(built.dir, 'assets'));
  }, 60_000);
  afterAll(async () => {
    await t.close();
    built.remove();
  });

  it('when /console is asked for, then it redirects to /console/', async () => {
    const res = await get(t, '/console');

    expect(res.status).toBe(301);
    expect(res.headers.get('location')).toBe('/console/');
    expect(res.headers.get('content-security-policy')).toBe(CONTRACT_CSP);
  });

  it('when /CONSOLE or /Console?x=1 is asked for (Express matches the mount without regard to case), then it redirects to the canonical /console/', async () => {
    for (const [asked, location] of [['/CONSOLE', '/console/'], ['/Console?x=1', '/console/?x=1']] as const) {
      const res = await get(t, asked);

      expect([asked, res.status, res.headers.get('location')]).toEqual([asked, 301, location]);
    }
  });

  it('when a path under /console/assets/ names no single asset, then 404, not the page', async () => {
    for (const asked of ['/console/assets/', `/console/assets/${assets[0]}/extra`]) {
      const res = await get(t, asked);

      expect([asked, res.status, res.headers.get('content-type')]).toEqual([asked, 404, expect.stringMatching(/^application\/json/)]);
    }
  });

  it('when /console/ is asked for, then the page comes with the contract CSP, not cached, with hashed assets of this origin and nothing inline', async () => {
    const res = await get(t, '/console/');
    const html = await res.text();

    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('content-security-policy')).toBe(CONTRACT_CSP);
    const script = /<script type="module" src="(\/console\/assets\/app-[A-Z0-9]{8}\.js)"><\/script>/.exec(html)?.[1];
    const stylesheet = /<link rel="stylesheet" href="(\/console\/assets\/app-[A-Z0-9]{8}\.css)">/.exec(html)?.[1];
    expect(script).toBeDefined();
    expect(stylesheet).toBeDefined();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/\sstyle=|<style|https?:\/\//);
  });

  it('when a path under /console/ is a client-side route, then it gets the page', async () => {
    const index = await (await get(t, '/console/')).text();

    for (const route of ['/console/audit', '/console/audit/', '/console/some/deep/route?x=1']) {
      const res = await get(t, route);
      expect([route, res.status, res.headers.get('cache-control')]).toEqual([route, 200, 'no-store']);
      expect(await res.text()).toBe(index);
    }
  });

  it('when a hashed asset is asked for, then it is served with its type, cached immutably, under the same CSP', async () => {
    expect(assets.map((name) => path.extname(name)).sort()).toEqual(['.css', '.js']);
    for (const name of assets) {
      const res = await get(t, `/console/assets/${name}`);

      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe(name.endsWith('.js') ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8');
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(res.headers.get('content-security-policy')).toBe(CONTRACT_CSP);
      expect(Buffer.from(await res.arrayBuffer())).toEqual(readFileSync(path.join(built.dir, 'assets', name)));
    }
  });

  it('when the whole console JavaScript is gzipped, then it stays within 80 KiB', () => {
    const js = assets.filter((name) => name.endsWith('.js')).map((name) => readFileSync(path.join(built.dir, 'assets', name)));
    const gzipped = js.reduce((sum, body) => sum + gzipSync(body, { level: 9 }).length, 0);

    expect(js.length).toBeGreaterThan(0);
    expect(gzipped).toBeLessThanOrEqual(80 * 1024);
  });

  it('when an asset name is unknown, or names a file beside the page that is not an asset, then no script is served', async () => {
    const missing = await get(t, '/console/assets/app-DEADBEEF.js');
    const stray = await get(t, '/console/console.router.js');

    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-security-policy')).toBe(CONTRACT_CSP);
    expect(await missing.json()).toEqual(expect.objectContaining({ status: 404, name: 'NotFound' }));
    expect(stray.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await stray.text()).not.toContain('module.exports');
  });

  it('when a method other than GET or HEAD is used, then it is 405 with Allow', async () => {
    const res = await get(t, '/console/', { method: 'POST' });

    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
  });

  it('when the API answers beside the console, then it keeps its own deny-all CSP', async () => {
    const res = await get(t, '/healthz');

    expect(res.headers.get('content-security-policy')).toBe("default-src 'none';frame-ancestors 'none'");
  });
});

describe('the admin console, switched off or not built', () => {
  it('when CONSOLE_ENABLED=false, then /console and every path under it are 404', async () => {
    const built = buildConsole();
    const t = await startTestApp({ CONSOLE_DIR: built.dir, CONSOLE_ENABLED: 'false' });
    try {
      for (const route of ['/console', '/console/', '/console/audit']) {
        const res = await get(t, route);
        expect([route, res.status]).toEqual([route, 404]);
      }
      const asset = readdirSync(path.join(built.dir, 'assets'))[0]!;
      expect((await get(t, `/console/assets/${asset}`)).status).toBe(404);
    } finally {
      await t.close();
      built.remove();
    }
  }, 60_000);

  it('when nothing is built where the console is looked for, then /console/ is a 404 that says to build it', async () => {
    const empty = mkdtempSync(path.join(tmpdir(), 'console-empty-'));
    const t = await startTestApp({ CONSOLE_DIR: empty });
    try {
      const res = await get(t, '/console/');

      expect(res.status).toBe(404);
      expect(await res.json()).toEqual(expect.objectContaining({ message: 'The console is not built: run npm run build' }));
      expect(t.logs()).toContain('console not built');
    } finally {
      await t.close();
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
