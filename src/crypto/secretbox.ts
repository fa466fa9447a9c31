import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const VERSION = 1;
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
 * AES-256-GCM under a 32-byte key. Output: version | iv | tag | ciphertext.
 *
 * During a MASTER_KEY rotation the box also holds the previous key: it seals only under the current
 * key and opens under either, so the service works on a database half re-sealed; `reseal` is what
 * `keys rewrap` uses to move a value from the previous key to the current one.
 */
export class SecretBox {
  constructor(
    private readonly key: Buffer,
    private readonly previousKey?: Buffer,
  ) {
    if (key.length !== 32 || (previousKey && previousKey.length !== 32)) throw new Error('SecretBox keys must be 32 bytes');
  }

  seal(plaintext: Buffer | string, associatedData?: string): Buffer {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    if (associatedData) cipher.setAAD(Buffer.from(associatedData));
    const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), body]);
  }

  /** Throws UnopenableSecretError if the box was tampered with, sealed under another key, or for other associated data. */
  open(sealed: Buffer, associatedData?: string): Buffer {
    return this.openReporting(sealed, associatedData).plaintext;
  }

  /**
   * The value sealed again under the current key when it was sealed under the previous one;
   * undefined when it already is under the current key. Throws as open() does.
   */
  reseal(sealed: Buffer, associatedData?: string): Buffer | undefined {
    const { plaintext, underPrevious } = this.openReporting(sealed, associatedData);
    return underPrevious ? this.seal(plaintext, associatedData) : undefined;
  }

  private openReporting(sealed: Buffer, associatedData?: string): { plaintext: Buffer; underPrevious: boolean } {
    const current = openWith(this.key, sealed, associatedData);
    if (current) return { plaintext: current, underPrevious: false };
    const previous = this.previousKey && openWith(this.previousKey, sealed, associatedData);
    if (previous) return { plaintext: previous, underPrevious: true };
    throw new UnopenableSecretError();
  }
}

/** The plaintext, or undefined when this key does not open the box (GCM's tag check failed). */
function openWith(key: Buffer, sealed: Buffer, associatedData?: string): Buffer | undefined {
  if (sealed.length < 1 + IV_BYTES + TAG_BYTES || sealed[0] !== VERSION) return undefined;
  const iv = sealed.subarray(1, 1 + IV_BYTES);
  const tag = sealed.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES);
  const decipher = createDecipheriv('aes-256-gcm', key, iv);
  if (associatedData) decipher.setAAD(Buffer.from(associatedData));
  decipher.setAuthTag(tag);
  try {
    return Buffer.concat([decipher.update(sealed.subarray(1 + IV_BYTES + TAG_BYTES)), decipher.final()]);
  } catch {
    return undefined;
  }
}
