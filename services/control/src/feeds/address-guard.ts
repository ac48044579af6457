import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { cidrContains, parseCidr, tryParseIp, type Cidr, type IpAddress } from '@banstream/core';
import ipaddr from 'ipaddr.js';

/**
 * Which addresses a blocklist feed may make the control service connect to. A feed's
 * URL is chosen by an operator (or whoever holds an operator token), so by default it
 * may reach public unicast addresses only: never loopback, the private networks, link-local
 * (cloud metadata), shared (CGNAT), multicast, reserved or documentation ranges, in any
 * of their IPv4-mapped or embedded forms. CONTROL_FEED_ALLOWED_NETWORKS opens chosen networks
 * for deployments that host feeds internally.
 *
 * The IANA special-purpose ranges come from ipaddr.js (kept up to date there, rather than
 * a table of ours); on top of it, an IPv6 address must lie in 2000::/3, the only block
 * handed out as global unicast: ipaddr.js calls `::2` or the IPv4-compatible `::7f00:1`
 * "unicast".
 */
export interface FeedAddressPolicy {
  /** CONTROL_FEED_ALLOWED_NETWORKS: reachable even though not public. */
  readonly allowed: readonly Cidr[];
}

export const PUBLIC_ONLY: FeedAddressPolicy = { allowed: [] };

/** Parses CONTROL_FEED_ALLOWED_NETWORKS: comma-separated addresses or CIDRs (a bare address is its /32 or /128). */
export function parseAllowedNetworks(list: string | undefined): Cidr[] {
  return (list ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
    .map((s) => parseCidr(s));
}

const GLOBAL_UNICAST_V6 = parseCidr('2000::/3');
const NAT64_WELL_KNOWN = parseCidr('64:ff9b::/96');

/** What kind of non-public address this is (`loopback`, `private`, …), or undefined for a public unicast one. */
export function nonPublicKind(ip: IpAddress): string | undefined {
  if (ip.family === 4) {
    const range = ipaddr.fromByteArray([...ip.bytes]).range();
    return range === 'unicast' ? undefined : range;
  }
  // NAT64 (RFC 6052): the IPv4 address in the last 32 bits is the one reached.
  if (cidrContains(NAT64_WELL_KNOWN, ip)) {
    const embedded = tryParseIp([...ip.bytes.subarray(12)].join('.'));
    const kind = embedded === undefined ? 'reserved' : nonPublicKind(embedded);
    return kind === undefined ? undefined : `${kind} (in NAT64)`;
  }
  const range = ipaddr.fromByteArray([...ip.bytes]).range();
  if (range !== 'unicast') return range;
  return cidrContains(GLOBAL_UNICAST_V6, ip) ? undefined : 'not global unicast';
}

/** The kind of a non-public address the policy does not allow (`loopback`, `private`, …), or undefined if a feed may connect to it. */
function refusedKind(ip: IpAddress, policy: FeedAddressPolicy): string | undefined {
  const kind = nonPublicKind(ip);
  return kind === undefined || policy.allowed.some((c) => cidrContains(c, ip)) ? undefined : kind;
}

/** Why the policy refuses this address, or undefined if a feed may connect to it. */
export function addressRefusal(ip: IpAddress, policy: FeedAddressPolicy): string | undefined {
  const kind = refusedKind(ip, policy);
  return kind === undefined ? undefined : `${ip.text} is a ${kind} address`;
}

/** A feed's URL or one of its redirects names, or connected to, an address the policy refuses. */
export class FeedAddressError extends Error {
  readonly code = 'FEED_ADDRESS_REFUSED';
}

const HINT = 'feeds may reach public addresses only; CONTROL_FEED_ALLOWED_NETWORKS opens others';

/** The address of a URL's host when it is an IP literal (`[::1]` included), else undefined. */
export function literalAddress(url: URL): IpAddress | undefined {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  // The URL parser already made `0x7f.1`, `2130706433` and `127.1` into 127.0.0.1.
  return tryParseIp(host);
}

/** Refuses a URL whose host is a refused literal address; names are checked as they are resolved. */
export function checkLiteral(url: URL, policy: FeedAddressPolicy): void {
  const ip = literalAddress(url);
  if (ip === undefined) return;
  const why = addressRefusal(ip, policy);
  if (why !== undefined) throw new FeedAddressError(`${url.host} refused: ${why}; ${HINT}`);
}

export type Resolver = (host: string) => Promise<readonly string[]>;

/** The system resolver, as connections use it (getaddrinfo: /etc/hosts too), every address. */
export const systemResolver: Resolver = (host) =>
  new Promise((resolve, reject) => dnsLookup(host, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses.map((a) => a.address)))));

/**
 * Resolves a name and refuses it when any of its addresses is refused: one refused
 * address is enough, since a connection may try any of them. Not the address's text in
 * the refusal: the answer goes to the API caller, and internal DNS is not theirs to map.
 */
export async function resolveChecked(host: string, policy: FeedAddressPolicy, resolver: Resolver): Promise<IpAddress[]> {
  const texts = await resolver(host);
  const ips: IpAddress[] = [];
  for (const text of texts) {
    const ip = tryParseIp(text);
    if (ip === undefined) throw new FeedAddressError(`${host} resolves to something that is not an address`);
    const kind = refusedKind(ip, policy);
    if (kind !== undefined) throw new FeedAddressError(`${host} refused: it resolves to a ${kind} address; ${HINT}`);
    ips.push(ip);
  }
  if (ips.length === 0) throw new FeedAddressError(`${host} resolves to no address`);
  return ips;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * The `lookup` of a connection (http/https `request`, net/tls `connect`): the addresses
 * it yields are the ones checked, so a name that answers a public address to a first
 * lookup and a private one to the next (DNS rebinding) is refused at connect. IP
 * literals skip the lookup: checkLiteral covers them.
 */
export function guardedLookup(policy: FeedAddressPolicy, resolver: Resolver) {
  return (hostname: string, options: { all?: boolean; family?: number | string }, callback: LookupCallback): void => {
    resolveChecked(hostname, policy, resolver).then(
      (ips) => {
        const family = options.family === 4 || options.family === 'IPv4' ? 4 : options.family === 6 || options.family === 'IPv6' ? 6 : 0;
        // A resolver's IPv4-mapped answer is an IPv4 address to connect to.
        const fit = ips.filter((ip) => family === 0 || ip.family === family);
        if (fit.length === 0) return callback(Object.assign(new Error(`${hostname} has no IPv${family} address`), { code: 'ENOTFOUND' }), '');
        if (options.all)
          return callback(
            null,
            fit.map((ip) => ({ address: ip.text, family: ip.family })),
          );
        callback(null, fit[0]!.text, fit[0]!.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, ''),
    );
  };
}
