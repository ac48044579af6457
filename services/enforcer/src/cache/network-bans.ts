import { formatIpv4, networkPrefix, type Cidr, type IpAddress } from '@banstream/core';
import type { BanStore } from './ban-store.js';

/**
 * Prefix bans (`cidr:…`) by family, then prefix length, so an address is matched
 * against every banned network containing it with one probe per length present, not
 * one per ban. IPv4 networks are keyed by their masked ipv4Key, so a check makes one
 * integer mask per length and no text (a feed such as FireHOL level1 holds twenty
 * lengths); IPv6 ones by their text. Per /16 of the IPv4 space, a count of the
 * networks covering any of it lets a check of an address in none (nearly every check,
 * even with a feed of 100,000 entries) return after one array read. Each network
 * leads to its entry in the BanStore, where the ban is kept compactly.
 */
export class NetworkBans {
  private readonly byFamily = { 4: new Map<number, Map<number | string, number>>(), 6: new Map<number, Map<number | string, number>>() };
  private readonly v4Cover = new Uint32Array(65_536);
  private count = 0;

  constructor(private readonly store: BanStore) {}

  get size(): number {
    return this.count;
  }

  /** The entry of this network's ban, or -1. */
  entryOf(network: Cidr): number {
    return this.byFamily[network.family].get(network.bits)?.get(keyOf(network)) ?? -1;
  }

  /** Files `entry` under the network (one not held yet: see entryOf). */
  add(network: Cidr, entry: number): void {
    const byLength = this.byFamily[network.family];
    let bans = byLength.get(network.bits);
    if (!bans) byLength.set(network.bits, (bans = new Map()));
    const key = keyOf(network);
    this.count++;
    if (typeof key === 'number') this.coverV4(key, network.bits, 1);
    bans.set(key, entry);
  }

  /** Removes the network; returns its entry, or -1 if it held none. */
  delete(network: Cidr): number {
    const byLength = this.byFamily[network.family];
    const bans = byLength.get(network.bits);
    const key = keyOf(network);
    const entry = bans?.get(key);
    if (entry === undefined) return -1;
    bans!.delete(key);
    this.count--;
    if (typeof key === 'number') this.coverV4(key, network.bits, -1);
    if (bans!.size === 0) byLength.delete(network.bits);
    return entry;
  }

  /** Every network containing the address whose ban is live, as [entry, prefix length] pairs appended to `out` (made when the first is found). */
  containing(address: IpAddress, nowMs: number, out?: number[]): number[] | undefined {
    const byLength = this.byFamily[address.family];
    if (byLength.size === 0) return out;
    const store = this.store;
    if (address.family === 4) {
      const key = addressKey(address);
      if (this.v4Cover[key >>> 16] === 0) return out;
      for (const [bits, bans] of byLength) {
        const entry = bans.get(key & prefixMask(bits));
        if (entry !== undefined && store.expiresAt(entry) > nowMs) (out ??= []).push(entry, bits);
      }
      return out;
    }
    for (const [bits, bans] of byLength) {
      const entry = bans.get(networkPrefix(address, bits));
      if (entry !== undefined && store.expiresAt(entry) > nowMs) (out ??= []).push(entry, bits);
    }
    return out;
  }

  /** Drops the networks whose ban expired at `nowMs`, handing each entry to `dropped`; returns how many. */
  purgeExpired(nowMs: number, dropped: (entry: number) => void): number {
    let purged = 0;
    for (const family of [4, 6] as const) {
      const byLength = this.byFamily[family];
      for (const [bits, bans] of byLength) {
        for (const [key, entry] of bans) {
          if (this.store.expiresAt(entry) > nowMs || !bans.delete(key)) continue;
          if (typeof key === 'number') this.coverV4(key, bits, -1);
          dropped(entry);
          purged++;
        }
        if (bans.size === 0) byLength.delete(bits);
      }
    }
    this.count -= purged;
    return purged;
  }

  /** The networks of every family and length, for a listing: each map's keys give subjects with networkSubject. */
  lengths(): { family: 4 | 6; bits: number; bans: Map<number | string, number> }[] {
    const out: { family: 4 | 6; bits: number; bans: Map<number | string, number> }[] = [];
    for (const family of [4, 6] as const) for (const [bits, bans] of this.byFamily[family]) out.push({ family, bits, bans });
    return out;
  }

  /** Counts an IPv4 network (its masked key and length) in or out of every /16 it covers. */
  private coverV4(key: number, bits: number, change: 1 | -1): void {
    const first = key >>> 16;
    const count = bits >= 16 ? 1 : 1 << (16 - bits);
    for (let i = first; i < first + count; i++) this.v4Cover[i]! += change;
  }
}

/** The subject a network's key spells: `cidr:203.0.113.0/24`, `cidr:2001:db8::/48`. */
export function networkSubject(key: number | string, bits: number): string {
  return typeof key === 'number' ? `cidr:${formatIpv4(key)}/${bits}` : `cidr:${key}`;
}

/** The subject of the network of `bits` containing the address, as networkSubject spells its key. */
export function containingSubject(address: IpAddress, bits: number): string {
  return address.family === 4 ? networkSubject(addressKey(address) & prefixMask(bits), bits) : networkSubject(networkPrefix(address, bits), bits);
}

function keyOf(network: Cidr): number | string {
  return network.family === 4 ? ipv4Key(network.bytes) & prefixMask(network.bits) : network.text;
}

/** The four bytes as one int32: a small integer key, hashed without touching text. */
export function ipv4Key(bytes: Uint8Array): number {
  return (bytes[0]! << 24) | (bytes[1]! << 16) | (bytes[2]! << 8) | bytes[3]!;
}

/** The int32 mask of an IPv4 prefix length: the network of key k is k & prefixMask(bits). */
function prefixMask(bits: number): number {
  return bits === 0 ? 0 : -1 << (32 - bits);
}

/** ipv4Key of an IPv4 address: its int32 when the parse kept one, so its bytes need not be made. */
export function addressKey(address: IpAddress): number {
  return address.int32 ?? ipv4Key(address.bytes);
}

/** The subject a network gets in the store: the key's, for a network of `network.family`. */
export function subjectOfNetwork(network: Cidr): string {
  return networkSubject(keyOf(network), network.bits);
}
