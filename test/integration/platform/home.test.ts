import { startTestApp, type TestApp } from '../../helpers/app';

const SERVICE_LINKS = '</api/v1/openapi.json>; rel="service-desc", </api-reference/>; rel="service-doc"';

describe('GET /, the front door', () => {
  describe('with the console on (the default)', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp();
    });
    afterAll(() => t.close());

    it('when / is asked for, then it redirects to the console and names the API description and its reference in Link', async () => {
      const res = await t.http().get('/').redirects(0);

      expect(res.status).toBe(302);
      expect(res.headers.location).toBe('/console/');
      expect(res.headers.link).toBe(SERVICE_LINKS);
    });

    it('when / is sent a POST, then 405 with Allow: GET', async () => {
      const res = await t.http().post('/');

      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('GET');
    });
  });

  describe('with the console off', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp({ CONSOLE_ENABLED: 'false' });
    });
    afterAll(() => t.close());

    it('when / is asked for, then a small JSON index of links answers, each of them a path this service serves', async () => {
      const res = await t.http().get('/');

      expect(res.status).toBe(200);
      expect(res.headers.link).toBe(SERVICE_LINKS);
      expect(res.body).toEqual({
        service: 'api-key-token-service',
        links: {
          api_reference: '/api-reference/',
          openapi: '/api/v1/openapi.json',
          discovery: '/.well-known/openid-configuration',
          jwks: '/.well-known/jwks.json',
          health: '/healthz',
          readiness: '/readyz',
        },
      });
      for (const [name, path] of Object.entries(res.body.links as Record<string, string>)) {
        if (name === 'api_reference') continue; // not built for this test app: served by test/integration/api-reference
        expect([name, (await t.http().get(path)).status]).toEqual([name, 200]);
      }
    });
  });

  it('when the console and the API reference are both off, then the index leaves the reference out, and Link names only the document', async () => {
    const t = await startTestApp({ CONSOLE_ENABLED: 'false', API_REFERENCE_ENABLED: 'false' });
    try {
      const res = await t.http().get('/');

      expect(res.status).toBe(200);
      expect(res.body.links.api_reference).toBeUndefined();
      expect(res.headers.link).toBe('</api/v1/openapi.json>; rel="service-desc"');
    } finally {
      await t.close();
    }
  });
});
