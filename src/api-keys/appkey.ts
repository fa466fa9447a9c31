import { randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

export const APPKEY_PREFIX = 'ak_';
const RANDOM_BYTES = 32; // 256 bits
const RANDOM_CHARS = 43; // base64url of 32 bytes, unpadded
const CHECKSUM_CHARS = 6;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** The shape of an appkey (the checksum is checked by isWellFormedAppkey). */
export const APPKEY_PATTERN = new RegExp(`^${APPKEY_PREFIX}[A-Za-z0-9_-]{${RANDOM_CHARS}}[0-9A-Za-z]{${CHECKSUM_CHARS}}$`);

function base62(value: number, width: number): string {
  let out = '';
  for (let v = value; out.length < width; v = Math.floor(v / 62)) out = BASE62[v % 62] + out;
  return out;
}

function checksum(body: string): string {
  return base62(crc32(body), CHECKSUM_CHARS);
}

/**
 * A new appkey: `ak_`, 256 random bits in base64url, then a 6-character base62 CRC32 of all
 * that precedes it, so a typo or a leak scanner can recognise a key without asking the service.
 */
export function generateAppkey(): string {
  const body = APPKEY_PREFIX + randomBytes(RANDOM_BYTES).toString('base64url');
  return body + checksum(body);
}

/** True when the value has the appkey shape and its checksum matches. Says nothing of validity. */
export function isWellFormedAppkey(value: string): boolean {
  if (!APPKEY_PATTERN.test(value)) return false;
  const body = value.slice(0, -CHECKSUM_CHARS);
  return checksum(body) === value.slice(-CHECKSUM_CHARS);
}
