import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

/** The first format: version | iv | tag | ciphertext. Still opened; `keys rewrap` moves it to the second. */
const LEGACY_VERSION = 1;
/** version | key id | iv | tag | ciphertext, the header (version and key id) authenticated with the value. */
const VERSION = 2;
const KEY_ID_BYTES = 8;
const HEADER_BYTES = 1 + KEY_ID_BYTES;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Thrown when no key of the box opens a sealed value: a wrong key, tampering, or other associated data. */
export class UnopenableSecretError extends Error {
  constructor() {
    super('A stored secret opens under neither MASTER_KEY nor MASTER_KEY_PREVIOUS');
    this.name = 'UnopenableSecretError';
  }
}

/**
 * Which key a sealed value says it was sealed under, read from its header without opening it: the
 * box's current key, its previous one, another key, or `legacy` (the first format names none).
 */
export type SealedUnder = 'current' | 'previous' | 'other' | 'legacy';

/**
 * A name for a master key that tells nothing of it: an HMAC of a fixed label under the key. Stored in
 * every sealed value, so the start can count what each key sealed without opening anything.
 */
function keyIdOf(key: Buffer): Buffer {
  return createHmac('sha256', key).update('apikeys secretbox key id').digest().subarray(0, KEY_ID_BYTES);
}

/** The first bytes of every value sealed under `key` (version and key id): what the start's census reads. */
export function sealedHeaderOf(key: Buffer): Buffer {
  return Buffer.concat([Buffer.from([VERSION]), keyIdOf(key)]);
}

/**
 * AES-256-GCM under a 32-byte key. Output: version | key id | iv | tag | ciphertext.
 *
 * During a MASTER_KEY rotation the box also holds the previous key: it seals only under the current
 * key and opens under either, so the service works on a database half re-sealed; `reseal` is what
 * `keys rewrap` uses to move a value from the previous key (or the first format) to the current one.
 */
export class SecretBox {
  private readonly keyId: Buffer;
  private readonly previousKeyId: Buffer | undefined;

  constructor(
    private readonly key: Buffer,
    private readonly previousKey?: Buffer,
  ) {
    if (key.length !== 32 || (previousKey && previousKey.length !== 32)) throw new Error('SecretBox keys must be 32 bytes');
    this.keyId = keyIdOf(key);
    this.previousKeyId = previousKey && keyIdOf(previousKey);
  }

  seal(plaintext: Buffer | string, associatedData?: string): Buffer {
    const header = sealedHeaderOf(this.key);
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(authenticatedData(header, associatedData));
    const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return Buffer.concat([header, iv, cipher.getAuthTag(), body]);
  }

  /** Throws UnopenableSecretError if the box was tampered with, sealed under another key, or for other associated data. */
  open(sealed: Buffer, associatedData?: string): Buffer {
    return this.openReporting(sealed, associatedData).plaintext;
  }

  /**
   * The value sealed again under the current key when it was sealed under the previous one or in the
   * first format; undefined when it already is under the current key. Throws as open() does.
   */
  reseal(sealed: Buffer, associatedData?: string): Buffer | undefined {
    const { plaintext, under } = this.openReporting(sealed, associatedData);
    return under === 'current' && sealed[0] === VERSION ? undefined : this.seal(plaintext, associatedData);
  }

  /** What a sealed value's first bytes (at least its header) say of the key that sealed it. */
  sealedUnder(head: Buffer): SealedUnder {
    if (head[0] !== VERSION || head.length < HEADER_BYTES) return 'legacy';
    // A key id is no secret (it is stored beside every value): a plain comparison will do.
    const id = head.subarray(1, HEADER_BYTES);
    if (id.equals(this.keyId)) return 'current';
    if (this.previousKeyId && id.equals(this.previousKeyId)) return 'previous';
    return 'other';
  }

  /** The plaintext and the key that opened it; throws UnopenableSecretError. */
  openReporting(sealed: Buffer, associatedData?: string): { plaintext: Buffer; under: 'current' | 'previous' } {
    const keys = this.keysFor(sealed);
    for (const [under, key] of keys) {
      const plaintext = sealed[0] === VERSION ? openCurrentFormat(key, sealed, associatedData) : openLegacyFormat(key, sealed, associatedData);
      if (plaintext) return { plaintext, under };
    }
    throw new UnopenableSecretError();
  }

  /** The keys worth trying: the one the header names, or both for the first format, which names none. */
  private keysFor(sealed: Buffer): [under: 'current' | 'previous', key: Buffer][] {
    const both: [under: 'current' | 'previous', key: Buffer][] = [['current', this.key]];
    if (this.previousKey) both.push(['previous', this.previousKey]);
    if (sealed[0] === LEGACY_VERSION) return both;
    const under = this.sealedUnder(sealed);
    return both.filter(([name]) => name === under);
  }
}

function authenticatedData(header: Buffer, associatedData: string | undefined): Buffer {
  return associatedData ? Buffer.concat([header, Buffer.from(associatedData)]) : header;
}

/** The plaintext, or undefined when this key does not open the box (GCM's tag check failed). */
function openCurrentFormat(key: Buffer, sealed: Buffer, associatedData?: string): Buffer | undefined {
  if (sealed.length < HEADER_BYTES + IV_BYTES + TAG_BYTES) return undefined;
  return decrypt(key, sealed.subarray(HEADER_BYTES), authenticatedData(sealed.subarray(0, HEADER_BYTES), associatedData));
}

function openLegacyFormat(key: Buffer, sealed: Buffer, associatedData?: string): Buffer | undefined {
  if (sealed.length < 1 + IV_BYTES + TAG_BYTES) return undefined;
  return decrypt(key, sealed.subarray(1), associatedData ? Buffer.from(associatedData) : undefined);
}

/** iv | tag | ciphertext opened under `key`, or undefined. */
function decrypt(key: Buffer, box: Buffer, aad: Buffer | undefined): Buffer | undefined {
  const decipher = createDecipheriv('aes-256-gcm', key, box.subarray(0, IV_BYTES));
  if (aad) decipher.setAAD(aad);
  decipher.setAuthTag(box.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(box.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
  } catch {
    return undefined;
  }
}
