import request from 'supertest';
import { startTestApp, type TestApp } from '../../helpers/app';
import { expectError } from '../../helpers/errors';
import { sample } from './support';

describe('metrics: on their own port (METRICS_PORT)', () => {
  let t: TestApp;
  let metricsUrl: string;
  beforeAll(async () => {
    t = await startTestApp({ METRICS_ENABLED: 'true', METRICS_PORT: '0' });
    metricsUrl = t.metricsUrl!;
  });
  afterAll(async () => {
    await t.close();
  });

  it('when METRICS_PORT is set, then the main app answers GET /metrics with 404 and its document does not list it', async () => {
    const res = await t.http().get('/metrics');
    const document = await t.http().get('/api/v1/openapi.json');

    expectError(res, 404, 'NotFound');
    expect(res.body.message).toMatch(/METRICS_PORT/);
    expect(Object.keys(document.body.paths)).not.toContain('/metrics');
  });

  it('when the metrics server is scraped, then 200 with the main app\'s requests in it', async () => {
    await t.http().get('/healthz');

    const res = await request(metricsUrl).get('/metrics');

    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(sample(res.text, 'http_request_duration_seconds_count', { method: 'GET', route: '/healthz', status: '200' })).toBe(1);
    expect(res.text).toMatch(/^# TYPE process_cpu_user_seconds_total counter$/m);
  });

  it('when the metrics server gets any other path, then 404 in the uniform error body', async () => {
    const res = await request(metricsUrl).get('/api/v1/api-keys');

    expectError(res, 404, 'NotFound');
  });
});
