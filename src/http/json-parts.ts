import type { Response } from 'express';

/**
 * Writes a JSON body given as consecutive parts, never joined into one string: V8 puts any string
 * over ~128 KiB (a page of 1000 keys is ~145 KiB) in its large-object space, and making one cost
 * ~1 ms of CPU per response on this machine, more than the rest of writing the page (see README,
 * Performance). The parts are encoded into one Buffer, whose bytes live outside the heap: one
 * allocation and one socket write per page, and a response still waiting for a slow client holds no
 * strings for the garbage collector to copy. Every part is in hand before the first byte is
 * written, so a failure cannot leave a response half-written.
 */
export function sendJsonParts(res: Response, parts: readonly string[]): void {
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
