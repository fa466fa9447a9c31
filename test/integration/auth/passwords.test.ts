import bcrypt from 'bcrypt';
import { startTestApp, type TestApp } from '../../helpers/app';
import { createUser, randomName } from '../../helpers/factories';
import { CLI_CONTEXT } from '../../../src/shared/audit-context';

/** Contract, Hardening, "Passwords": the rule for a new password, and hashes kept at BCRYPT_COST. */
describe('passwords', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const login = (username: string, password: string) => t.http().post('/api/auth/bearer/token').type('form').send({ username, password });
  const storedHash = async (username: string) =>
    (await t.db.query<{ password_hash: string }>('SELECT password_hash FROM users WHERE username = $1', [username])).rows[0]!.password_hash;

  describe('the rule for a new password (users add and users set-password)', () => {
    it.each([
      ['11 characters', 'abcdefgh-12', /at least 12 characters/],
      ['common, in another case', 'PASSWORD1234', /too common/],
      ['common', 'qwertyuiop123', /too common/],
      ['one character repeated', 'zzzzzzzzzzzzzzzz', /one character repeated/],
      ['one emoji repeated', '🔑'.repeat(12), /one character repeated/],
      ['over 72 bytes', 'é'.repeat(37), /at most 72 bytes/],
    ])('when it is %s, then it is refused (400 naming password) and no user is made or changed', async (_label, password, reason) => {
      const username = randomName('rule');
      const existing = await createUser(t, { role: 'viewer' });
      const before = await storedHash(existing.username);

      await expect(t.services.users.add(username, password, 'viewer', CLI_CONTEXT)).rejects.toMatchObject({ status: 400, message: expect.stringMatching(reason) });
      await expect(t.services.users.setPassword(existing.username, password, CLI_CONTEXT)).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/^password: /) });
      expect((await t.db.query('SELECT 1 FROM users WHERE username = $1', [username])).rows).toEqual([]);
      expect(await storedHash(existing.username)).toBe(before);
    });

    it('when it is 12 characters that are not common, or 72 bytes, then it is accepted and logs in', async () => {
      for (const password of ['correct-hors', `${'é'.repeat(35)}ab`, '🔑🔒 twelve ch']) {
        const username = randomName('ok');

        await t.services.users.add(username, password, 'viewer', CLI_CONTEXT);

        expect((await login(username, password)).status).toBe(200);
      }
    });
  });

  describe('re-hash at login', () => {
    it('when a stored hash has another cost than BCRYPT_COST, then the next successful login re-hashes it at BCRYPT_COST, and the password keeps working', async () => {
      const user = await createUser(t, { role: 'viewer' });
      const oldHash = await bcrypt.hash(user.password, t.config.bcryptCost + 1);
      await t.db.query('UPDATE users SET password_hash = $2 WHERE username = $1', [user.username, oldHash]);

      const first = await login(user.username, user.password);
      const rehashed = await storedHash(user.username);
      const second = await login(user.username, user.password);
      const wrong = await login(user.username, `${user.password}x`);

      expect(first.status).toBe(200);
      expect(bcrypt.getRounds(rehashed)).toBe(t.config.bcryptCost);
      expect(await bcrypt.compare(user.password, rehashed)).toBe(true);
      expect(second.status).toBe(200);
      expect(wrong.status).toBe(401);
      expect(await storedHash(user.username)).toBe(rehashed);
    });

    it('when a login fails, then a hash of another cost is left as it is', async () => {
      const user = await createUser(t, { role: 'viewer' });
      const oldHash = await bcrypt.hash(user.password, t.config.bcryptCost + 1);
      await t.db.query('UPDATE users SET password_hash = $2 WHERE username = $1', [user.username, oldHash]);

      expect((await login(user.username, 'not-the-password')).status).toBe(401);
      expect(await storedHash(user.username)).toBe(oldHash);
    });
  });
});
