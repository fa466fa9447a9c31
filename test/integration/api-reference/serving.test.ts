import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { startTestApp, type TestApp } from '../../helpers/app';
import { buildApiReference, type BuiltConsole } from '../../helpers/console';

/** The contract's page policy, copied from it (not from the code), so a drift in either shows here. */
const CONTRACT_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

const get = (t: TestApp, urlPath: string, init: RequestInit = {}) => fetch(`${t.baseUrl}${urlPath}`, { redirect: 'manual', ...init });

describe('the API reference, served at /api-reference/', () => {
  let built: BuiltConsole;
  let t: TestApp;
  let assets: string[];
  beforeAll(async () => {
    built = buildApiReference();
    // What a browser must never be handed: dist/api-reference/ also holds the compiled server module.
    writeFileSync(path.join(built.dir, 'api-reference.router.js'), 'module.exports = {};');
    t = await startTestApp({ API_REFERENCE_DIR: built.dir });
    assets = readdirSync(path.join(built.dir, 'assets')).filter((name) => !name.endsWith('.gz'));
  }, 60_000);
  afterAll(async () => {
    await t.close();
    built.remove();
  });

  it('when /api-reference is asked for, then it redirects to /api-reference/', async () => {
    const res = await get(t, '/api-reference');

    expect(res.status).toBe(301);
    expect(res.headers.get('location')).toBe('/api-reference/');
    expect(res.headers.get('content-security-policy')).toBe(CONTRACT_CSP);
  });

  it('when /api-reference/ is asked for, then the page comes with the contract CSP, not cached, loading only hashed files of this origin and nothing inline', async () => {
    const res = await get(t, '/api-reference/');
    const html = await res.text();

    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('content-security-policy')).toBe(CONTRACT_CSP);
    const loaded = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(loaded.filter((url) => url?.startsWith('/api-reference/assets/'))).toHaveLength(4);
    expect(loaded.every((url) => url === 'data:,' || url?.startsWith('/'))).toBe(true);
    expect(html).not.toMatch(/<script>|<style|style="/);
  });

  it('when an asset is asked for with gzip accepted, then the gzip copy comes, cached for good, and unzips to the file', async () => {
    const bundle = assets.find((name) => name.startsWith('swagger-ui-bundle-') && name.endsWith('.js'))!;

    const res = await get(t, `/api-reference/assets/${bundle}`, { headers: { 'accept-encoding': 'gzip' } });
    // fetch unzips by itself: the bytes read equal the file on disk.
    const body = Buffer.from(await res.arrayBuffer());

    expect(res.status).toBe(200);
    expect(res.headers.get('content-encoding')).toBe('gzip');
    expect(res.headers.get('vary')).toBe('Accept-Encoding');
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(body.equals(readFileSync(path.join(built.dir, 'assets', bundle)))).toBe(true);
    expect(gunzipSync(readFileSync(path.join(built.dir, 'assets', `${bundle}.gz`))).equals(body)).toBe(true);
  });

  it('when an asset is asked for without gzip, then the plain file comes with its length', async () => {
    const css = assets.find((name) => name.startsWith('swagger-ui-') && name.endsWith('.css'))!;

    const res = await get(t, `/api-reference/assets/${css}`, { headers: { 'accept-encoding': 'identity' } });

    expect(res.status).toBe(200);
    expect(res.headers.get('content-encoding')).toBeNull();
    expect(Number(res.headers.get('content-length'))).toBe(readFileSync(path.join(built.dir, 'assets', css)).length);
  });

  it('when a file the build did not list is asked for (the compiled router, files.json, a path outside), then 404 in the uniform body', async () => {
    for (const asked of ['/api-reference/api-reference.router.js', '/api-reference/files.json', '/api-reference/assets/nope.js', '/api-reference/assets/..%2Ffiles.json']) {
      const res = await get(t, asked);

      expect([asked, res.status, res.headers.get('content-type')]).toEqual([asked, 404, expect.stringMatching(/^application\/json/)]);
    }
  });

  it('when the page is asked for with another method, then 405 with Allow', async () => {
    const res = await get(t, '/api-reference/', { method: 'POST' });

    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
  });

  it('when the page loads the document it renders, then GET /api/v1/openapi.json answers it', async () => {
    const init = assets.find((name) => name.startsWith('init-'))!;
    const script = await (await get(t, `/api-reference/assets/${init}`)).text();
    const documentPath = /url: '([^']+)'/.exec(script)?.[1];

    const res = await t.http().get(documentPath!);

    expect(documentPath).toBe('/api/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
  });
});

describe('the API reference, switched off or not built', () => {
  it('when API_REFERENCE_ENABLED=false, then every path under /api-reference/ is 404', async () => {
    const t = await startTestApp({ API_REFERENCE_ENABLED: 'false' });
    try {
      for (const asked of ['/api-reference', '/api-reference/', '/api-reference/assets/x.js']) {
        expect([asked, (await get(t, asked)).status]).toEqual([asked, 404]);
      }
    } finally {
      await t.close();
    }
  });

  it('when nothing is built where it looks, then the page is a 404 that says to build, and the start logs it once', async () => {
    const t = await startTestApp({ API_REFERENCE_DIR: path.join(__dirname, 'not-built') });
    try {
      const res = await get(t, '/api-reference/');

      expect(res.status).toBe(404);
      expect(await res.json()).toEqual(expect.objectContaining({ message: 'The API reference is not built: run npm run build' }));
      expect(t.logs().match(/API reference not built/g)).toHaveLength(1);
    } finally {
      await t.close();
    }
  });
});
