import { startTestApp, type TestApp } from '../../helpers/app';
import { UNTRUSTED_FORWARDING_WARNING } from '../../../src/http/untrusted-forwarding';

const warnings = (t: TestApp) => t.logs().split('\n').filter((line) => line.includes(UNTRUSTED_FORWARDING_WARNING));

describe('behind a proxy the service was not told of (Hardening, round two)', () => {
  let untold: TestApp;
  let told: TestApp;
  beforeAll(async () => {
    untold = await startTestApp({ TRUST_PROXY: 'false' });
    told = await startTestApp({ TRUST_PROXY: 'loopback' });
  });
  afterAll(async () => {
    await untold?.close();
    await told?.close();
  });

  it('when requests carry X-Forwarded-For and TRUST_PROXY is unset, then one warning is logged for the start, however many come', async () => {
    expect(warnings(untold)).toHaveLength(0);

    for (const address of ['203.0.113.7', '203.0.113.8', '198.51.100.1']) {
      await untold.http().get('/healthz').set('X-Forwarded-For', address).expect(200);
    }

    expect(warnings(untold)).toHaveLength(1);
    expect(JSON.parse(warnings(untold)[0]!)).toMatchObject({ level: 40 });
  });

  it('when TRUST_PROXY names the proxy, then forwarded requests log no such warning', async () => {
    await told.http().get('/healthz').set('X-Forwarded-For', '203.0.113.7').expect(200);

    expect(warnings(told)).toHaveLength(0);
  });
});
