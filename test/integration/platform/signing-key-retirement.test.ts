import { decodeProtectedHeader } from 'jose';
import { runKeysCommand } from '../../../src/cli/keys.command';
import { startTestApp, type TestApp } from '../../helpers/app';
import { createUser, loginAs } from '../../helpers/factories';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const kidsIn = async (t: TestApp): Promise<string[]> =>
  ((await t.http().get('/.well-known/jwks.json')).body.keys as { kid: string }[]).map((k) => k.kid);

describe('signing key rotation from the command line, and retirement of the old key', () => {
  let t: TestApp;
  beforeAll(async () => {
    // Longest token lifetime 2 s (refresh), no leeway: a retired key is published for 2 s.
    t = await startTestApp({ ACCESS_TOKEN_TTL: '1', REFRESH_TOKEN_TTL: '2', CLOCK_TOLERANCE: '0' });
  });
  afterAll(() => t.close());

  it('when `keys rotate` runs, then the new key signs, and the old one leaves the JWK Set once its tokens have expired', async () => {
    const user = await createUser(t, { role: 'viewer' });
    const oldKid = decodeProtectedHeader((await loginAs(t, user)).access_token).kid!;

    const output = await runKeysCommand(t.services.signingKeys, ['rotate']);
    const newKid = decodeProtectedHeader((await loginAs(t, user)).access_token).kid!;

    expect(newKid).not.toBe(oldKid);
    expect(output).toContain(newKid);
    expect((await kidsIn(t)).sort()).toEqual([oldKid, newKid].sort());

    await sleep(2_200);

    expect(await kidsIn(t)).toEqual([newKid]);
  });

  it('when an unknown keys subcommand is given, then it fails with the usage', async () => {
    await expect(runKeysCommand(t.services.signingKeys, ['spin'])).rejects.toThrow(/keys rotate/);
  });
});
