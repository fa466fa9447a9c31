import { startTestApp, type TestApp } from '../../helpers/app';
import { bearer, tokenForRole } from '../../helpers/factories';
import { expectError } from '../../helpers/errors';

// Without METRICS_PORT, /metrics is on the public port: in production it needs an admin's token.
describe('GET /metrics on the main port in production (no METRICS_PORT)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ NODE_ENV: 'production', METRICS_ENABLED: 'true' });
  });
  afterAll(() => t.close());

  it('when scraped without a token, then 401 and no figures', async () => {
    const res = await t.http().get('/metrics');

    expectError(res, 401, 'Unauthorized');
    expect(res.text).not.toContain('http_request');
  });

  it('when scraped with an editor’s token, then 403', async () => {
    const res = await t.http().get('/metrics').set(bearer(await tokenForRole(t, 'editor')));

    expectError(res, 403, 'Forbidden');
  });

  it('when scraped with an admin’s token, then 200 Prometheus text', async () => {
    const res = await t.http().get('/metrics').set(bearer(await tokenForRole(t, 'admin')));

    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toContain('process_cpu_user_seconds_total');
  });

  it('when the OpenAPI document is served, then /metrics is listed with bearer security and its 401/403', async () => {
    const doc = (await t.http().get('/api/v1/openapi.json')).body as { paths: Record<string, { get: { security?: unknown; responses: Record<string, unknown> } }> };

    expect(doc.paths['/metrics']!.get.security).toEqual([{ bearerAuth: [] }, { dpopAuth: [] }]);
    expect(Object.keys(doc.paths['/metrics']!.get.responses)).toEqual(expect.arrayContaining(['200', '401', '403']));
  });
});
