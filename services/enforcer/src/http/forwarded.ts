import type { Socket } from 'node:net';
import { cidrContains, parseCidr, tryParseIp, type Cidr } from '@banstream/core';

/** Parses ENFORCER_TRUSTED_PROXIES and ENFORCER_CHECK_CALLERS: comma-separated addresses or CIDRs. */
export function parseTrustedProxies(list: string): Cidr[] {
  return list
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
    .map((s) => parseCidr(s.includes('/') ? s : `${s}/${s.includes(':') ? 128 : 32}`));
}

export function isTrustedAddress(address: string, trusted: readonly Cidr[]): boolean {
  return tryParseIp(address) !== undefined && trusted.some((c) => cidrContains(c, address));
}

/**
 * Whether a connection comes from one of `trusted`, decided once per socket: its peer
 * does not change, and keep-alive connections from a proxy carry many requests.
 */
export class SocketTrust {
  private readonly known = new WeakMap<Socket, boolean>();

  constructor(private readonly trusted: readonly Cidr[]) {}

  trusts(socket: Socket): boolean {
    let trusted = this.known.get(socket);
    if (trusted === undefined) this.known.set(socket, (trusted = isTrustedAddress(socket.remoteAddress ?? '', this.trusted)));
    return trusted;
  }
}

/**
 * The client address of a request that came through trusted proxies, from the one
 * header they set (ENFORCER_CLIENT_IP_HEADER: X-Forwarded-For, X-Real-IP, …): walking
 * its list from the right (the nearest hop), the first address that is not a trusted
 * proxy is the client. A client cannot forge its way past that by sending the header
 * itself: its fake entries sit left of the first untrusted hop. The caller has
 * checked that the socket's peer (`remoteAddress`) is a trusted proxy.
 */
export function forwardedClient(remoteAddress: string, forwarded: string | undefined, trusted: readonly Cidr[]): string {
  if (!forwarded) return remoteAddress;
  const hops = forwarded
    .split(',')
    .map((h) => h.trim())
    .filter((h) => h.length > 0);
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!;
    if (!tryParseIp(hop)) return hop; // not an address: refused later with a clear error
    if (!trusted.some((c) => cidrContains(c, hop))) return hop;
  }
  return hops[0] ?? remoteAddress;
}
