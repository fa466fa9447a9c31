import type { Response } from 'express';
import { ROLES, type Role } from '../shared/principals';
import { envelope } from '../shared/envelope';
import type { ListedApiKey } from './api-keys.repository';
import type { ApiKeyRecord } from './api-keys.responses';

/**
 * Sends a listed page as `res.json(envelope(200, keys.map(presentApiKey)))` would, for less: a page
 * of 1000 keys is ~145 KiB of JSON, and a string that large lands in V8's large-object space, which
 * costs more than the rest of writing the page (docs/performance.md, "list"). So the page is never
 * one string: its records are stringified in parts well below that size, encoded into one Buffer
 * (outside the heap) and sent in one write. Every part is in hand before the first byte goes out,
 * so a failure cannot leave a response half-written.
 */
export function sendListPage(res: Response, keys: readonly ListedApiKey[]): void {
  const parts = pageJsonParts(keys);
  let length = 0;
  for (const part of parts) length += Buffer.byteLength(part);
  // Not zero-filled, as every byte is written below; the check makes sure none is left unwritten.
  const body = Buffer.allocUnsafe(length);
  let written = 0;
  for (const part of parts) written += body.write(part, written);
  if (written !== length) throw new Error(`JSON body: ${written} bytes encoded of the ${length} counted`);
  res.type('json');
  res.setHeader('Content-Length', length);
  res.end(body);
}

// One shared roles array per role: a page of 1000 records then allocates one object per key, no more.
const ROLES_OF = Object.fromEntries(ROLES.map((role) => [role, Object.freeze([role])])) as unknown as Record<Role, Role[]>;
const NO_ROLES = Object.freeze([]) as unknown as Role[];

/** presentApiKey for a listed key (an array row, see listApiKeys). */
function presentListedApiKey([appname, description, role, lastLogin, lastIp]: ListedApiKey): ApiKeyRecord {
  return { appname, description, roles: role === null ? NO_ROLES : ROLES_OF[role], last_login: lastLogin, last_ip: lastIp };
}

/**
 * Records per part: ~7 KiB of JSON for typical records, far below the large-object size. Only
 * descriptions full of escaped characters could take a part over it, which would cost speed, not
 * correctness.
 */
const RECORDS_PER_PART = 50;

/** The page's envelope as JSON.stringify would write it, in consecutive parts. */
function pageJsonParts(keys: readonly ListedApiKey[]): string[] {
  // meta as envelope() writes it for these records; data follows, part by part.
  const parts = [`{"meta":${JSON.stringify(envelope(200, keys).meta)},"data":[`];
  for (let i = 0; i < keys.length; i += RECORDS_PER_PART) {
    const records = JSON.stringify(keys.slice(i, i + RECORDS_PER_PART).map(presentListedApiKey));
    // The records without their array's brackets (a slice, not a copy), after the comma that joins
    // them to the part before: a part of its own, as prefixing it would copy the records.
    if (i > 0) parts.push(',');
    parts.push(records.slice(1, -1));
  }
  parts.push(']}');
  return parts;
}
