import { networkPrefix, type Cidr, type IpAddress } from '@banstream/core';
import type { Ban } from '@banstream/schemas';

/**
 * Prefix bans (`cidr:…`) by family, then prefix length, so an address is matched
 * against every banned network containing it with one probe per length present, not
 * one per ban. IPv4 networks are keyed by their masked ipv4Key, so a check makes one
 * integer mask per length and no text (a feed such as FireHOL level1 holds twenty
 * lengths); IPv6 ones by their text. Per /16 of the IPv4 space, a count of the
 * networks covering any of it lets a check of an address in none (nearly every check,
 * even with a feed of 100,000 entries) return after one array read.
 */
export class NetworkBans {
  private readonly byFamily = { 4: new Map<number, Map<number | string, Ban>>(), 6: new Map<number, Map<number | string, Ban>>() };
  private readonly v4Cover = new Uint32Array(65_536);
  private count = 0;

  get size(): number {
    return this.count;
  }

  has(network: Cidr): boolean {
    return this.byFamily[network.family].get(network.bits)?.has(keyOf(network)) === true;
  }

  set(network: Cidr, ban: Ban): void {
    const byLength = this.byFamily[network.family];
    let bans = byLength.get(network.bits);
    if (!bans) byLength.set(network.bits, (bans = new Map()));
    const key = keyOf(network);
    if (!bans.has(key)) {
      this.count++;
      if (typeof key === 'number') this.coverV4(key, network.bits, 1);
    }
    bans.set(key, ban);
  }

  delete(network: Cidr): void {
    const byLength = this.byFamily[network.family];
    const bans = byLength.get(network.bits);
    const key = keyOf(network);
    if (!bans?.delete(key)) return;
    this.count--;
    if (typeof key === 'number') this.coverV4(key, network.bits, -1);
    if (bans.size === 0) byLength.delete(network.bits);
  }

  /** Every live ban whose network contains the address, appended to `out` (made when the first is found); returns `out`. */
  containing(address: IpAddress, nowMs: number, out?: Ban[]): Ban[] | undefined {
    const byLength = this.byFamily[address.family];
    if (byLength.size === 0) return out;
    if (address.family === 4) {
      const key = addressKey(address);
      if (this.v4Cover[key >>> 16] === 0) return out;
      for (const [bits, bans] of byLength) {
        const ban = live(bans.get(key & prefixMask(bits)), nowMs);
        if (ban) (out ??= []).push(ban);
      }
      return out;
    }
    for (const [bits, bans] of byLength) {
      const ban = live(bans.get(networkPrefix(address, bits)), nowMs);
      if (ban) (out ??= []).push(ban);
    }
    return out;
  }

  /** Drops the bans expired at `nowMs`; returns how many. */
  purgeExpired(nowMs: number): number {
    let purged = 0;
    for (const family of [4, 6] as const) {
      const byLength = this.byFamily[family];
      for (const [bits, bans] of byLength) {
        for (const [key, ban] of bans) {
          if (ban.expiresAt > nowMs || !bans.delete(key)) continue;
          if (typeof key === 'number') this.coverV4(key, bits, -1);
          purged++;
        }
        if (bans.size === 0) byLength.delete(bits);
      }
    }
    this.count -= purged;
    return purged;
  }

  /** The maps of bans, every family and length, for a listing. */
  maps(): Map<unknown, Ban>[] {
    return [...this.byFamily[4].values(), ...this.byFamily[6].values()];
  }

  /** Counts an IPv4 network (its masked key and length) in or out of every /16 it covers. */
  private coverV4(key: number, bits: number, change: 1 | -1): void {
    const first = key >>> 16;
    const count = bits >= 16 ? 1 : 1 << (16 - bits);
    for (let i = first; i < first + count; i++) this.v4Cover[i]! += change;
  }
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

/** The ban while it applies. */
export function live(ban: Ban | undefined, nowMs: number): Ban | undefined {
  return ban && ban.expiresAt > nowMs ? ban : undefined;
}
