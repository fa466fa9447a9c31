import ipaddr from 'ipaddr.js';
import { z } from 'zod';

const TRUST_PROXY_INSTEAD =
  'set the number of proxies in front of the service (a hop count, e.g. 1), loopback, or a comma-separated list of ' +
  "the proxies' addresses or CIDR ranges (e.g. 10.0.0.0/8,192.168.1.5)";

/** The names Express (proxy-addr) knows for address ranges, beside addresses and CIDR ranges. */
const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** The widest ranges a proxy list may hold: wider ones reach far beyond any deployment's own proxies. */
const MAX_WIDTH = { ipv4: 8, ipv6: 16 } as const;

/** A proxy entry as an IPv4 or IPv6 range (an address alone is a range of one). */
interface ProxyRange {
  kind: 'ipv4' | 'ipv6';
  bytes: number[];
  prefix: number;
}

/**
 * An entry as Express (proxy-addr) reads it: an address, address/prefix, or IPv4 address/netmask.
 * Undefined when malformed. An IPv6 range inside the IPv4-mapped block is the IPv4 range it maps,
 * since proxy-addr matches IPv4 clients against it.
 */
function parseProxyRange(entry: string): ProxyRange | undefined {
  const [address = '', suffix, ...rest] = entry.split('/');
  if (rest.length || !ipaddr.isValid(address) || (suffix !== undefined && !/^\d{1,3}$/.test(suffix) && !ipaddr.IPv4.isValidFourPartDecimal(suffix))) return undefined;
  const parsed = ipaddr.parse(address);
  const bits = parsed.kind() === 'ipv4' ? 32 : 128;
  let prefix = bits;
  if (suffix !== undefined) {
    if (/^\d{1,3}$/.test(suffix)) prefix = Number(suffix);
    else if (parsed.kind() === 'ipv4') prefix = ipaddr.IPv4.parse(suffix).prefixLengthFromSubnetMask() ?? -1;
    else return undefined;
  }
  if (prefix < 0 || prefix > bits) return undefined;
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress() && prefix >= 96) {
    return { kind: 'ipv4', bytes: (parsed as ipaddr.IPv6).toIPv4Address().toByteArray(), prefix: prefix - 96 };
  }
  return { kind: parsed.kind(), bytes: parsed.toByteArray(), prefix };
}

/** The first and last address of a range, as numbers. */
function boundsOf({ bytes, prefix }: ProxyRange): [bigint, bigint] {
  const value = bytes.reduce((n, byte) => (n << 8n) | BigInt(byte), 0n);
  const hostBits = BigInt(bytes.length * 8 - prefix);
  const first = (value >> hostBits) << hostBits;
  return [first, first + (1n << hostBits) - 1n];
}

/** Whether the ranges of one family together hold every address of it. */
function coverEverything(ranges: ProxyRange[], bits: number): boolean {
  const sorted = ranges.map(boundsOf).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  let next = 0n;
  for (const [first, last] of sorted) {
    if (first > next) return false;
    if (last + 1n > next) next = last + 1n;
  }
  return next === 1n << BigInt(bits);
}

/** IPv6 ranges that hold the whole IPv4-mapped block (e.g. ::/80) trust every IPv4 client too. */
const MAPPED_BLOCK: ProxyRange = { kind: 'ipv6', bytes: ipaddr.parse('::ffff:0:0').toByteArray(), prefix: 96 };
function holdsEveryMappedAddress(range: ProxyRange): boolean {
  if (range.kind !== 'ipv6' || range.prefix > 96) return false;
  const [first, last] = boundsOf(range);
  const [mappedFirst, mappedLast] = boundsOf(MAPPED_BLOCK);
  return first <= mappedFirst && mappedLast <= last;
}

/**
 * What is wrong with a list of proxies, or undefined. Named ranges hold only addresses that never come
 * from the internet (loopback, link-local, private), so they are taken as they are.
 */
function proxyListProblem(entries: string[]): string | undefined {
  const ranges: ProxyRange[] = [];
  for (const entry of entries) {
    if (PROXY_RANGE_NAMES.has(entry)) continue;
    const range = parseProxyRange(entry);
    if (!range) return `${entry} is not an address, a CIDR range or a range name; ${TRUST_PROXY_INSTEAD}`;
    if (holdsEveryMappedAddress(range)) {
      return `${entry} holds every IPv4-mapped address, so it would trust every IPv4 client's X-Forwarded-For; ${TRUST_PROXY_INSTEAD}`;
    }
    if (range.prefix < MAX_WIDTH[range.kind]) {
      return (
        `${entry} is wider than /${MAX_WIDTH[range.kind]} for ${range.kind === 'ipv4' ? 'IPv4' : 'IPv6'}: it would trust hops far beyond your proxies, ` +
        `so clients could forge X-Forwarded-For; ${TRUST_PROXY_INSTEAD}`
      );
    }
    ranges.push(range);
  }
  for (const [kind, bits] of [['ipv4', 32], ['ipv6', 128]] as const) {
    if (coverEverything(ranges.filter((r) => r.kind === kind), bits)) {
      return `its ranges together cover every ${kind === 'ipv4' ? 'IPv4' : 'IPv6'} address, which trusts every hop like true; ${TRUST_PROXY_INSTEAD}`;
    }
  }
  return undefined;
}

/**
 * TRUST_PROXY follows Express's `trust proxy` setting: `false`, a hop count, or a comma-separated
 * list of addresses/subnets (or `loopback`). Kept as the value Express expects. `true` is refused:
 * it trusts every hop, so any client could forge X-Forwarded-For and with it the address that
 * rate limits, the audit trail and last_ip rely on; so is a list that amounts to it (ranges wider
 * than /8 or /16, or together covering everything).
 */
export const trustProxy = z
  .string()
  .default('false')
  .transform((v) => v.trim())
  .superRefine((v, ctx) => {
    if (v.toLowerCase() === 'true') {
      ctx.addIssue({ code: 'custom', message: `true would trust every hop, so any client could forge X-Forwarded-For; ${TRUST_PROXY_INSTEAD}` });
    } else if (v !== 'false' && v !== '' && !/^\d+$/.test(v)) {
      const problem = proxyListProblem(v.split(',').map((entry) => entry.trim()));
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }
  })
  .transform((v): false | number | string => {
    if (v === 'false' || v === '') return false;
    if (/^\d+$/.test(v)) return Number(v);
    return v
      .split(',')
      .map((entry) => entry.trim())
      .join(',');
  });
