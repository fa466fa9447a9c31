import { startTestApp, type TestApp } from '../../helpers/app';
import { sample, scrape } from './support';

describe('metrics: rate-limit rejections', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ METRICS_ENABLED: 'true', RATE_LIMIT_ENABLED: 'true', RATE_LIMIT_TOKEN_REQUESTS: '1', RATE_LIMIT_TOKEN_WINDOW: '60' });
  });
  afterAll(() => t.close());

  it('when a token route answers 429, then rate_limit_rejections_total counts it under its limiter', async () => {
    const refresh = () => t.http().post('/api/auth/bearer/refresh').type('form').send({ refresh_token: 'not-a-token' });
    expect((await refresh()).status).toBe(401);

    const limited = await refresh();

    const text = await scrape(t);
    expect(limited.status).toBe(429);
    expect(sample(text, 'rate_limit_rejections_total', { limiter: 'token-routes' })).toBe(1);
    expect(sample(text, 'tokens_issued_total', { route: '/api/auth/bearer/refresh', outcome: 'refused' })).toBe(2);
  });
});
