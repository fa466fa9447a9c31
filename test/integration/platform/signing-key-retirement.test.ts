import { decodeProtectedHeader } from 'jose';
import { runKeysCommand } from '../../../src/cli/keys.command';
import { startTestApp, type TestApp } from '../../helpers/app';
import { createUser, loginAs } from '../../helpers/factories';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
const PUBLISHED_SECONDS = 4;
const kidsIn = async (t: TestApp): Promise<string[]> =>
  ((await t.http().get('/.well-known/jwks.json')).body.keys as { kid: string }[]).map((k) => k.kid);

describe('signing key rotation from the command line, and retirement of the old key', () => {
  let t: TestApp;
  beforeAll(async () => {
    // A retired key is published for the access-token lifetime plus leeway: here 4 s. Long enough
    // that a slow machine still reads the JWK Set inside the window, short enough to wait out.
    t = await startTestApp({ ACCESS_TOKEN_TTL: String(PUBLISHED_SECONDS), REFRESH_TOKEN_TTL: '8', CLOCK_TOLERANCE: '0' });
  });
  afterAll(() => t.close());

  it('when `keys rotate` runs, then the new key signs, and the old one leaves the JWK Set once its tokens have expired', async () => {
    const user = await createUser(t, { role: 'viewer' });
    const oldKid = decodeProtectedHeader((await loginAs(t, user)).access_token).kid!;

    const output = await runKeysCommand(t.services, ['rotate']);
    // The old key was retired before this instant, so it is gone from the set by this + 4 s.
    const rotatedBy = Date.now();
    const kidsAfterRotation = await kidsIn(t);
    const newKid = decodeProtectedHeader((await loginAs(t, user)).access_token).kid!;

    expect(newKid).not.toBe(oldKid);
    expect(output).toContain(newKid);
    expect(kidsAfterRotation.sort()).toEqual([oldKid, newKid].sort());

    await sleep(rotatedBy + PUBLISHED_SECONDS * 1000 + 200 - Date.now());

    expect(await kidsIn(t)).toEqual([newKid]);
  });

  it('when an unknown keys subcommand is given, then it fails with the usage', async () => {
    await expect(runKeysCommand(t.services, ['spin'])).rejects.toThrow(/keys rotate/);
  });
});
