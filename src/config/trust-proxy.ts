import { isIP } from 'node:net';
import { z } from 'zod';

const TRUST_PROXY_INSTEAD =
  'set the number of proxies in front of the service (a hop count, e.g. 1), loopback, or a comma-separated list of ' +
  "the proxies' addresses or CIDR ranges (e.g. 10.0.0.0/8,192.168.1.5)";

/** The names Express (proxy-addr) knows for address ranges, beside addresses and CIDR ranges. */
const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** An address, an address/prefix length (or /netmask for IPv4), or a range name proxy-addr knows. */
function isProxyAddress(entry: string): boolean {
  if (PROXY_RANGE_NAMES.has(entry)) return true;
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (!family || rest.length) return false;
  if (prefix === undefined) return true;
  if (family === 4 && isIP(prefix) === 4) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

/**
 * TRUST_PROXY follows Express's `trust proxy` setting: `false`, a hop count, or a comma-separated
 * list of addresses/subnets (or `loopback`). Kept as the value Express expects. `true` is refused:
 * it trusts every hop, so any client could forge X-Forwarded-For and with it the address that
 * rate limits, the audit trail and last_ip rely on.
 */
export const trustProxy = z
  .string()
  .default('false')
  .transform((v) => v.trim())
  .superRefine((v, ctx) => {
    if (v.toLowerCase() === 'true') {
      ctx.addIssue({ code: 'custom', message: `true would trust every hop, so any client could forge X-Forwarded-For; ${TRUST_PROXY_INSTEAD}` });
    } else if (v !== 'false' && v !== '' && !/^\d+$/.test(v) && !v.split(',').every((entry) => isProxyAddress(entry.trim()))) {
      ctx.addIssue({ code: 'custom', message: `must be false, a hop count, loopback, or a comma-separated list of addresses or CIDR ranges; ${TRUST_PROXY_INSTEAD}` });
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
