import { startTestApp, type TestApp } from '../../helpers/app';
import { expectError } from '../../helpers/errors';

describe('metrics: disabled (the default)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('when METRICS_ENABLED is unset and GET /metrics is requested, then 404 in the uniform error body', async () => {
    const res = await t.http().get('/metrics');

    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expectError(res, 404, 'NotFound');
    expect(res.body.message).toMatch(/set METRICS_ENABLED=true/);
  });

  it('when metrics are disabled, then nothing is collected and the OpenAPI document does not list /metrics', async () => {
    const res = await t.http().get('/api/v1/openapi.json');

    expect(t.metrics).toBeUndefined();
    expect(Object.keys(res.body.paths)).not.toContain('/metrics');
  });
});
