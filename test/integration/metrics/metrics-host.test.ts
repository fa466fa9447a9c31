import { networkInterfaces } from 'node:os';
import request from 'supertest';
import { startTestApp, type TestApp } from '../../helpers/app';
import { itUnless } from '../../helpers/skips';

/** An IPv4 address of this machine that is not loopback, if it has one. */
const nonLoopbackAddress = Object.values(networkInterfaces())
  .flat()
  .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;

/** The address and port the metrics server reported when it started listening. */
function metricsListening(t: TestApp): { address: string; port: number } {
  const line = t
    .logs()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { msg?: string; address?: string; port?: number })
    .find((l) => l.msg === 'metrics listening');
  if (!line) throw new Error('no "metrics listening" log line');
  return { address: line.address!, port: line.port! };
}

/** Whether something accepts an HTTP request at this address and port. */
async function answersAt(address: string, port: number): Promise<boolean> {
  try {
    await fetch(`http://${address}:${port}/metrics`, { signal: AbortSignal.timeout(2_000) });
    return true;
  } catch {
    return false;
  }
}

describe('metrics: where METRICS_PORT listens (Hardening: start-up)', () => {
  describe('without METRICS_HOST, the API listening on every address (HOST=0.0.0.0)', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp({ HOST: '0.0.0.0', METRICS_ENABLED: 'true', METRICS_PORT: '0' });
    });
    afterAll(() => t.close());

    it('when the metrics server starts, then it listens on 127.0.0.1 and answers there', async () => {
      expect(metricsListening(t).address).toBe('127.0.0.1');
      expect(new URL(t.metricsUrl!).hostname).toBe('127.0.0.1');
      expect((await request(t.metricsUrl!).get('/metrics')).status).toBe(200);
    });

    itUnless(!nonLoopbackAddress && { what: 'the check that /metrics is not reachable from the network', why: 'this machine has no IPv4 address but loopback' })('when /metrics is asked for on a non-loopback address of this machine, then nothing answers there, while the API does', async () => {
      const apiPort = Number(new URL(t.baseUrl).port);

      expect(await answersAt(nonLoopbackAddress!, apiPort)).toBe(true);
      expect(await answersAt(nonLoopbackAddress!, metricsListening(t).port)).toBe(false);
    });
  });

  describe('with METRICS_HOST', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp({ METRICS_ENABLED: 'true', METRICS_PORT: '0', METRICS_HOST: '0.0.0.0' });
    });
    afterAll(() => t.close());

    it('when METRICS_HOST=0.0.0.0, then the metrics server listens on every address', async () => {
      expect(metricsListening(t).address).toBe('0.0.0.0');
      expect((await request(t.metricsUrl!).get('/metrics')).status).toBe(200);
      if (nonLoopbackAddress) expect(await answersAt(nonLoopbackAddress, metricsListening(t).port)).toBe(true);
    });
  });
});
