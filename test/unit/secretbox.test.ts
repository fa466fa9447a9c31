import { createCipheriv, randomBytes } from 'node:crypto';
import { SecretBox, UnopenableSecretError } from '../../src/crypto/secretbox';

describe('SecretBox (AES-256-GCM)', () => {
  const key = randomBytes(32);
  const box = new SecretBox(key);
  const secret = 'ak_the-appkey-in-the-clear-0123456789';

  it('when a value is sealed and opened with the same key and associated data, then the original comes back', () => {
    const sealed = box.seal(secret, 'my-app');

    expect(box.open(sealed, 'my-app').toString('utf8')).toBe(secret);
  });

  it('when binary data is sealed without associated data, then it opens byte for byte', () => {
    const data = randomBytes(200);

    expect(box.open(box.seal(data)).equals(data)).toBe(true);
  });

  it('when a value is sealed, then the output does not contain the plaintext', () => {
    const sealed = box.seal(secret, 'my-app');

    expect(sealed.includes(Buffer.from(secret))).toBe(false);
    expect(sealed.toString('latin1')).not.toContain(secret);
  });

  it('when the same value is sealed twice, then the two outputs differ (fresh IV) and both open', () => {
    const a = box.seal(secret, 'my-app');
    const b = box.seal(secret, 'my-app');

    expect(a.equals(b)).toBe(false);
    expect(box.open(a, 'my-app').toString()).toBe(secret);
    expect(box.open(b, 'my-app').toString()).toBe(secret);
  });

  it.each([
    ['the first byte', 0],
    ['an IV byte', 5],
    ['a tag byte', 20],
    ['a ciphertext byte', -1],
  ])('when %s of the sealed value is flipped, then opening throws', (_what, index) => {
    const sealed = box.seal(secret, 'my-app');
    const tampered = Buffer.from(sealed);
    const i = index < 0 ? tampered.length + index : index;
    tampered[i] = tampered[i]! ^ 0x01;

    expect(() => box.open(tampered, 'my-app')).toThrow();
  });

  it('when the sealed value is truncated, then opening throws', () => {
    const sealed = box.seal(secret, 'my-app');

    expect(() => box.open(sealed.subarray(0, sealed.length - 1), 'my-app')).toThrow();
    expect(() => box.open(sealed.subarray(0, 10), 'my-app')).toThrow();
  });

  it('when opened under another key, then opening throws', () => {
    const sealed = box.seal(secret, 'my-app');

    expect(() => new SecretBox(randomBytes(32)).open(sealed, 'my-app')).toThrow();
  });

  it('when opened with other associated data, or none, then opening throws', () => {
    const sealed = box.seal(secret, 'my-app');

    expect(() => box.open(sealed, 'other-app')).toThrow();
    expect(() => box.open(sealed)).toThrow();
  });

  it('when sealed without associated data but opened with some, then opening throws', () => {
    const sealed = box.seal(secret);

    expect(() => box.open(sealed, 'my-app')).toThrow();
  });

  it.each([16, 31, 33, 0])('when the key is %i bytes instead of 32, then the box refuses it', (length) => {
    expect(() => new SecretBox(randomBytes(length))).toThrow(/32 bytes/);
  });
});

describe('SecretBox during a MASTER_KEY rotation (current key and previous key)', () => {
  const oldKey = randomBytes(32);
  const newKey = randomBytes(32);
  const before = new SecretBox(oldKey);
  const during = new SecretBox(newKey, oldKey);
  const after = new SecretBox(newKey);
  const secret = 'ak_sealed-before-the-rotation';

  it('when a value sealed under the old key is opened with the old key as previous, then it opens', () => {
    expect(during.open(before.seal(secret, 'app'), 'app').toString()).toBe(secret);
  });

  it('when the rotating box seals, then it seals under the new key: the new key alone opens it, the old alone does not', () => {
    const sealed = during.seal(secret, 'app');

    expect(after.open(sealed, 'app').toString()).toBe(secret);
    expect(() => before.open(sealed, 'app')).toThrow(UnopenableSecretError);
  });

  it('when a value under the old key is resealed, then the result opens under the new key alone; resealing that again gives nothing to do', () => {
    const resealed = during.reseal(before.seal(secret, 'app'), 'app');

    expect(resealed).toBeDefined();
    expect(after.open(resealed!, 'app').toString()).toBe(secret);
    expect(during.reseal(resealed!, 'app')).toBeUndefined();
  });

  it('when a value sealed under a third key is opened or resealed, then an UnopenableSecretError naming both variables is thrown, not a crypto error', () => {
    const foreign = new SecretBox(randomBytes(32)).seal(secret, 'app');

    expect(() => during.open(foreign, 'app')).toThrow(UnopenableSecretError);
    expect(() => during.reseal(foreign, 'app')).toThrow(/MASTER_KEY.*MASTER_KEY_PREVIOUS/);
  });

  it('when the previous key opens a value but the associated data differs, then it is refused as under any key', () => {
    expect(() => during.open(before.seal(secret, 'app'), 'other-app')).toThrow(UnopenableSecretError);
  });
});

describe('SecretBox: the key a value names (Hardening, round two: every sealed secret counted at start)', () => {
  const oldKey = randomBytes(32);
  const newKey = randomBytes(32);
  const rotating = new SecretBox(newKey, oldKey);

  /** A value in the first format (version 1 | iv | tag | body, AAD the associated data alone), as stored before key ids. */
  function legacySealed(key: Buffer, plaintext: string, aad: string): Buffer {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(aad));
    const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return Buffer.concat([Buffer.from([1]), iv, cipher.getAuthTag(), body]);
  }

  it('when values are sealed by the new key, the old key and a stranger, then their headers say which, without opening them', () => {
    expect(rotating.sealedUnder(new SecretBox(newKey).seal('a', 'x'))).toBe('current');
    expect(rotating.sealedUnder(new SecretBox(oldKey).seal('a', 'x'))).toBe('previous');
    expect(rotating.sealedUnder(new SecretBox(randomBytes(32)).seal('a', 'x'))).toBe('other');
    expect(rotating.sealedUnder(legacySealed(newKey, 'a', 'x'))).toBe('legacy');
  });

  it('when the key id in a header is changed, then the value no longer opens (the header is authenticated)', () => {
    const sealed = new SecretBox(oldKey).seal('secret', 'my-app');
    const relabelled = Buffer.concat([sealed.subarray(0, 1), new SecretBox(newKey).seal('x').subarray(1, 9), sealed.subarray(9)]);

    expect(rotating.sealedUnder(relabelled)).toBe('current');
    expect(() => rotating.open(relabelled, 'my-app')).toThrow(UnopenableSecretError);
  });

  it('when a value is in the first format, then it opens under either key, and reseal moves it to the current format even under the current key', () => {
    const underNew = legacySealed(newKey, 'appkey-1', 'my-app');
    const underOld = legacySealed(oldKey, 'appkey-2', 'my-app');

    expect(rotating.open(underNew, 'my-app').toString()).toBe('appkey-1');
    expect(rotating.open(underOld, 'my-app').toString()).toBe('appkey-2');
    const resealed = rotating.reseal(underNew, 'my-app')!;
    expect(rotating.sealedUnder(resealed)).toBe('current');
    expect(new SecretBox(newKey).open(resealed, 'my-app').toString()).toBe('appkey-1');
    expect(rotating.reseal(resealed, 'my-app')).toBeUndefined();
  });
});
