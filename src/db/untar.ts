import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';

const BLOCK = 512;

/** A NUL-terminated text field of a ustar header. */
function field(header: Buffer, from: number, length: number): string {
  const raw = header.subarray(from, from + length);
  const end = raw.indexOf(0);
  return raw.subarray(0, end < 0 ? length : end).toString('utf8');
}

/**
 * Unpacks a ustar archive (as PGlite's dumpDataDir writes it) under `dest`, every directory 0700 and
 * every file 0600 whatever the archive says: it holds a database only its owner may read. Only
 * directories and regular files, each named inside `dest`; anything else fails the whole unpacking.
 * Synchronous: it runs in a worker thread of its own (unpack-worker.ts), where a thousand files are
 * written fastest one call after the other.
 */
function untar(tar: Buffer, dest: string): void {
  const directories: string[] = [];
  const files: { file: string; data: Buffer }[] = [];
  for (let at = 0; at + BLOCK <= tar.length; ) {
    const header = tar.subarray(at, at + BLOCK);
    // The end: zero blocks, where an entry would have a name. The headers' checksums are not summed
    // (~60 ms at start): the archive comes out of gzip, whose CRC covers every byte.
    if (header[0] === 0) break;
    if (field(header, 257, 5) !== 'ustar') throw new Error(`not a ustar header at byte ${at}`);
    const prefix = field(header, 345, 155);
    const name = path.posix.normalize(`${prefix}/${field(header, 0, 100)}`).replace(/^\/+/, '');
    const size = Number.parseInt(field(header, 124, 12).trim() || '0', 8);
    const type = String.fromCharCode(header[156]!);
    if (!name || name.startsWith('..') || !Number.isSafeInteger(size) || at + BLOCK + size > tar.length) {
      throw new Error(`an entry of the archive at byte ${at} is malformed`);
    }
    const target = path.join(dest, name === '.' ? '' : name);
    if (type === '5') directories.push(target);
    else if (type === '0' || type === '\0') files.push({ file: target, data: tar.subarray(at + BLOCK, at + BLOCK + size) });
    else throw new Error(`${name}: entries of type ${JSON.stringify(type)} are not unpacked`);
    at += BLOCK + Math.ceil(size / BLOCK) * BLOCK;
  }
  const parents = new Set([dest, ...directories, ...files.map(({ file }) => path.dirname(file))]);
  for (const directory of [...parents].sort()) mkdirSync(directory, { recursive: true, mode: 0o700 });
  for (const { file, data } of files) writeFileSync(file, data, { mode: 0o600, flag: 'wx' });
}

/**
 * Unpacks the gzipped archive beside `pgdata`, then renames it over `pgdata` (missing, or an empty
 * folder): a start that dies halfway leaves no half database for the next start to open.
 */
export function unpackNow(archive: string, pgdata: string): void {
  const unpacking = `${pgdata}.unpacking`;
  rmSync(unpacking, { recursive: true, force: true });
  try {
    untar(gunzipSync(readFileSync(archive)), unpacking);
    renameSync(unpacking, pgdata);
  } catch (err) {
    rmSync(unpacking, { recursive: true, force: true });
    throw err;
  }
}
