import { cidrContains, parseCidr, tryParseIp, type Cidr } from '@banstream/core';

/** Parses ENFORCER_TRUSTED_PROXIES: comma-separated addresses or CIDRs. */
export function parseTrustedProxies(list: string): Cidr[] {
  return list.split(',').map((s) => s.trim()).filter((s) => s.length > 0).map((s) => parseCidr(s.includes('/') ? s : `${s}/${s.includes(':') ? 128 : 32}`));
}

/**
 * The client address of a request that may have come through proxies. Only
 * X-Forwarded-For entries added by trusted proxies are believed: walking the list from
 * the right (the nearest hop), the first address that is not a trusted proxy is the
 * client. A client cannot forge its way past that by sending its own header: its
 * fake entries sit left of the first untrusted hop.
 */
export function clientIp(remoteAddress: string, forwardedFor: string | undefined, trusted: readonly Cidr[]): string {
  const isTrusted = (ip: string) => trusted.some((c) => cidrContains(c, ip));
  if (!forwardedFor || !tryParseIp(remoteAddress) || !isTrusted(remoteAddress)) return remoteAddress;
  const hops = forwardedFor.split(',').map((h) => h.trim()).filter((h) => h.length > 0);
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!;
    if (!tryParseIp(hop)) return hop; // not an address: refused later with a clear error
    if (!isTrusted(hop)) return hop;
  }
  return hops[0] ?? remoteAddress;
}
