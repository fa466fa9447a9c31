import { randomBytes } from 'node:crypto';
import { SecretBox } from '../../src/crypto/secretbox';

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
