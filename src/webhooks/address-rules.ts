import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import ipaddr from 'ipaddr.js';

/** Resolves a host name to every address it has (dns.lookup with all: true, by default). */
export type Resolve = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolve: Resolve = (hostname) =>
  new Promise((resolve, reject) => dnsLookup(hostname, { all: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))));

/** Why an endpoint URL or the address it resolves to is refused. */
export class AddressRefusedError extends Error {
  readonly code = 'WEBHOOK_ADDRESS_REFUSED';
  constructor(message: string) {
    super(message);
    this.name = 'AddressRefusedError';
  }
}

/** ::/96, the IPv4-compatible IPv6 addresses (RFC 4291, deprecated), :: and ::1 among them. */
const IPV4_COMPATIBLE: [ipaddr.IPv6, number] = [ipaddr.IPv6.parse('::'), 96];

/**
 * The URL's host did not resolve (no answer, NXDOMAIN, SERVFAIL, a timeout of the resolver...). At
 * delivery a failed attempt like a network error, retried: a resolver's hiccup must not fail
 * messages for good. At registration a 400, like a refused address.
 */
export class HostNotResolvedError extends Error {
  readonly code = 'WEBHOOK_HOST_NOT_RESOLVED';
  constructor(hostname: string, cause?: unknown) {
    super(`its host ${hostname} does not resolve`, { cause });
    this.name = 'HostNotResolvedError';
  }
}

/**
 * Whether an address is public: ipaddr.js names the special ranges (loopback, private, link-local,
 * unique-local, multicast, carrier-grade NAT, reserved, documentation, NAT64, 6to4, Teredo...) and
 * calls everything else `unicast`. An IPv4-mapped IPv6 address (::ffff:10.0.0.1) is judged as the
 * IPv4 address it carries, which is where a connection to it goes. ipaddr.js calls the IPv4-compatible
 * ones `unicast` once written in hexadecimal, as the URL parser writes them ([::127.0.0.1] becomes
 * [::7f00:1]); no public host has one, so they are refused whatever IPv4 address they carry.
 */
export function isPublicAddress(text: string): boolean {
  if (!ipaddr.isValid(text)) return false;
  let address = ipaddr.parse(text);
  if (address.kind() === 'ipv6') {
    const v6 = address as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) address = v6.toIPv4Address();
    else if (v6.match(IPV4_COMPATIBLE)) return false;
  }
  return address.range() === 'unicast';
}

/** The host of a URL as net.connect wants it: IPv6 literals without their brackets. */
export function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/**
 * The rules an endpoint URL must meet before anything is resolved: https (http too when insecure),
 * no user name or password in it (a credential in a URL ends up in logs), and, for an address
 * written in the URL, a public one unless insecure. Throws AddressRefusedError saying which rule.
 */
export function checkUrlShape(text: string, allowInsecure: boolean): URL {
  const url = URL.canParse(text) ? new URL(text) : undefined;
  if (!url || !url.hostname) throw new AddressRefusedError('must be an absolute URL');
  if (url.protocol !== 'https:' && !(allowInsecure && url.protocol === 'http:')) {
    throw new AddressRefusedError(allowInsecure ? 'must be an http: or https: URL' : 'must be an https: URL');
  }
  if (url.username || url.password) throw new AddressRefusedError('must not hold a user name or password');
  const host = hostOf(url);
  if (!allowInsecure && ipaddr.isValid(host) && !isPublicAddress(host)) throw new AddressRefusedError(`must not point at a non-public address (${host})`);
  return url;
}

/** Every address of a host name, or HostNotResolvedError when there is none (whatever the resolver's reason). */
async function resolveHost(hostname: string, resolve: Resolve): Promise<LookupAddress[]> {
  let addresses: LookupAddress[];
  try {
    addresses = await resolve(hostname);
  } catch (err) {
    throw new HostNotResolvedError(hostname, err);
  }
  if (addresses.length === 0) throw new HostNotResolvedError(hostname);
  return addresses;
}

/**
 * Resolves the URL's host and refuses it unless every address it resolves to is public (a name
 * that also resolves to a private address is refused, not filtered: it is no one's honest public
 * endpoint). Returns the addresses, which are the only ones a delivery may connect to. A name that
 * does not resolve is HostNotResolvedError, not a refusal: only an answer can be judged.
 */
export async function resolvePublicAddresses(hostname: string, resolve: Resolve): Promise<LookupAddress[]> {
  if (ipaddr.isValid(hostname)) {
    if (!isPublicAddress(hostname)) throw new AddressRefusedError(`must not point at a non-public address (${hostname})`);
    return [{ address: hostname, family: ipaddr.parse(hostname).kind() === 'ipv6' ? 6 : 4 }];
  }
  const addresses = await resolveHost(hostname, resolve);
  const refused = addresses.find((a) => !isPublicAddress(a.address));
  if (refused) throw new AddressRefusedError(`its host ${hostname} resolves to a non-public address (${refused.address})`);
  return addresses;
}

/** The endpoint URL checked at registration: its shape and, unless insecure, the addresses its host resolves to. */
export async function checkEndpointUrl(text: string, allowInsecure: boolean, resolve: Resolve): Promise<string> {
  const url = checkUrlShape(text, allowInsecure);
  if (!allowInsecure) await resolvePublicAddresses(hostOf(url), resolve);
  return text;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for net.connect and tls.connect that resolves, checks and hands over the checked
 * addresses themselves: the connection goes to what was checked, never to the answer of a second
 * lookup that a rebinding name server could have changed in between. Insecure, nothing is checked,
 * but names still go through `resolve`, so a failed resolution is the same HostNotResolvedError.
 */
export function checkedLookup(resolve: Resolve, allowInsecure = false) {
  return function lookupPublic(hostname: string, options: { all?: boolean }, callback: LookupCallback): void {
    (allowInsecure ? resolveHost(hostname, resolve) : resolvePublicAddresses(hostname, resolve)).then(
      (addresses) => (options.all ? callback(null, addresses) : callback(null, addresses[0]!.address, addresses[0]!.family)),
      (err: Error) => callback(err as NodeJS.ErrnoException, ''),
    );
  };
}
