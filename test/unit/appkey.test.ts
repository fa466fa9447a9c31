import { APPKEY_PREFIX, generateAppkey, isWellFormedAppkey } from '../../src/api-keys/appkey';

const URL_SAFE = /^[A-Za-z0-9_-]+$/;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** The same key with the character at `index` replaced by a different character of the same class. */
function withTypoAt(key: string, index: number): string {
  const current = key[index]!;
  const replacement = ALPHABET[(ALPHABET.indexOf(current) + 1) % ALPHABET.length]!;
  return key.slice(0, index) + replacement + key.slice(index + 1);
}

describe('generateAppkey', () => {
  it('when a key is generated, then it is "ak_" followed only by URL-safe characters', () => {
    const key = generateAppkey();

    expect(key.startsWith('ak_')).toBe(true);
    expect(APPKEY_PREFIX).toBe('ak_');
    expect(key.slice(3)).toMatch(URL_SAFE);
  });

  it('when a key is generated, then it carries 43 base64url characters (256 bits) and a 6-character checksum', () => {
    const key = generateAppkey();

    expect(key).toHaveLength(3 + 43 + 6);
    const randomPart = key.slice(3, 3 + 43);
    expect(Buffer.from(randomPart, 'base64url')).toHaveLength(32);
    expect(Buffer.from(randomPart, 'base64url').toString('base64url')).toBe(randomPart);
  });

  it('when 1000 keys are generated, then all are distinct and their random parts are distinct too', () => {
    const keys = Array.from({ length: 1000 }, () => generateAppkey());

    expect(new Set(keys).size).toBe(1000);
    expect(new Set(keys.map((k) => k.slice(3, 3 + 43))).size).toBe(1000);
  });

  it('when 1000 keys are generated, then every character position varies (no fixed filler inside the random part)', () => {
    const keys = Array.from({ length: 1000 }, () => generateAppkey());

    for (let i = 3; i < 3 + 42; i++) {
      // The last base64url character of 32 bytes only carries 4 bits, so it is left out here.
      expect(new Set(keys.map((k) => k[i])).size).toBeGreaterThan(32);
    }
  });
});

describe('isWellFormedAppkey', () => {
  it('when given freshly generated keys, then each is recognised', () => {
    const keys = Array.from({ length: 200 }, () => generateAppkey());

    expect(keys.every((k) => isWellFormedAppkey(k))).toBe(true);
  });

  it.each([3, 10, 25, 45, 47, 51])(
    'when one character at position %i is mistyped, then the key is not recognised',
    (index) => {
      const key = generateAppkey();

      const typo = withTypoAt(key, index);

      expect(typo).not.toBe(key);
      expect(isWellFormedAppkey(typo)).toBe(false);
    },
  );

  it('when every single-character typo of one key is tried, then none is recognised', () => {
    const key = generateAppkey();

    const accepted = [];
    for (let i = 3; i < key.length; i++) {
      const typo = withTypoAt(key, i);
      if (isWellFormedAppkey(typo)) accepted.push(i);
    }

    expect(accepted).toEqual([]);
  });

  it.each(['sk_', 'AK_', 'ak-', 'ak', ''])('when the prefix is "%s" instead of "ak_", then the key is not recognised', (prefix) => {
    const key = generateAppkey();

    expect(isWellFormedAppkey(prefix + key.slice(3))).toBe(false);
  });

  it('when the key is truncated by one or more characters, then it is not recognised', () => {
    const key = generateAppkey();

    for (const cut of [1, 6, 20]) expect(isWellFormedAppkey(key.slice(0, -cut))).toBe(false);
  });

  it('when the key is wrapped in whitespace or has a character appended, then it is not recognised', () => {
    const key = generateAppkey();

    expect(isWellFormedAppkey(` ${key}`)).toBe(false);
    expect(isWellFormedAppkey(`${key}\n`)).toBe(false);
    expect(isWellFormedAppkey(`${key}A`)).toBe(false);
  });
});
