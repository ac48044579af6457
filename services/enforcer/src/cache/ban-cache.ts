import { canonicalIpv4, networkPrefix, parseCidr, type IpAddress } from '@banstream/core';
import type { Ban } from '@banstream/schemas';
import { Int32Table } from './int32-table.js';

/**
 * The bans topic as a lookup table. Exact subjects (`ip:…`, `user:…`, composites)
 * are one hash probe; IPv4 address bans are keyed by the address as a number, so the
 * per-request check builds no `ip:…` string and hashes no text; prefix bans (`cidr:…`) are kept per prefix length, so an
 * address is matched against every banned network containing it with one probe per
 * length present, not one per ban. A ban stops applying at its expiry even before
 * its tombstone arrives; purgeExpired drops it so memory follows live bans.
 */
export class BanCache {
  private readonly exact = new Map<string, Ban>();
  /** `ip:a.b.c.d` bans by ipv4Key: the most numerous kind, probed on every request. Memo: the ban's denial text. */
  private readonly v4 = new Int32Table<Ban, string>();
  /** The slot of the last live IPv4 ban address() found, so denialText finds its memo without a probe. */
  private lastV4Slot = -1;
  /** Denial texts of the other bans (exact subjects, networks, IPv6), built once per ban. */
  private readonly otherTexts = new WeakMap<Ban, string>();
  private readonly networks = { 4: new Map<number, Map<string, Ban>>(), 6: new Map<number, Map<string, Ban>>() };

  get size(): number {
    let n = this.exact.size + this.v4.size;
    for (const family of [this.networks[4], this.networks[6]]) for (const m of family.values()) n += m.size;
    return n;
  }

  /** Applies a record of the bans topic; null is the tombstone that lifts the ban. */
  observe(subject: string, ban: Ban | null): void {
    const network = subject.startsWith('cidr:') ? parseCidr(subject.slice(5)) : undefined;
    if (!network) {
      const v4 = ipv4SubjectKey(subject);
      if (v4 !== undefined) {
        if (ban) this.v4.set(v4, ban);
        else this.v4.delete(v4);
        return;
      }
      if (ban) this.exact.set(subject, ban);
      else this.exact.delete(subject);
      return;
    }
    const byLength = this.networks[network.family];
    let bans = byLength.get(network.bits);
    if (ban) {
      if (!bans) byLength.set(network.bits, (bans = new Map()));
      bans.set(network.text, ban);
    } else if (bans) {
      bans.delete(network.text);
      if (bans.size === 0) byLength.delete(network.bits);
    }
  }

  /** The live ban on this exact subject, if any. */
  subject(subject: string, nowMs: number): Ban | undefined {
    const v4 = ipv4SubjectKey(subject);
    return live(v4 === undefined ? this.exact.get(subject) : this.v4.get(v4), nowMs);
  }

  /** The live ban on this address itself (subject `ip:…`), if any. */
  address(address: IpAddress, nowMs: number): Ban | undefined {
    if (address.family !== 4) return live(this.exact.get(`ip:${address.text}`), nowMs);
    const slot = this.v4.slotOf(ipv4Key(address.bytes));
    if (slot < 0) return undefined;
    const ban = live(this.v4.valueAt(slot), nowMs);
    if (ban) this.lastV4Slot = slot;
    return ban;
  }

  /**
   * The text a denial by `ban` gives, built by `build` once per ban and kept: beside
   * the ban's entry for the address ban address() found last (no second lookup, no
   * side table to miss in the cache), in a WeakMap for any other.
   */
  denialText(ban: Ban, build: (ban: Ban) => string): string {
    const slot = this.lastV4Slot;
    if (slot >= 0 && this.v4.valueAt(slot) === ban) {
      let text = this.v4.memoAt(slot);
      if (text === undefined) this.v4.setMemoAt(slot, (text = build(ban)));
      return text;
    }
    let text = this.otherTexts.get(ban);
    if (text === undefined) this.otherTexts.set(ban, (text = build(ban)));
    return text;
  }

  /** Every live prefix ban whose network contains the address. */
  networksOf(address: IpAddress, nowMs: number, out: Ban[]): void {
    for (const [bits, bans] of this.networks[address.family]) {
      const ban = live(bans.get(networkPrefix(address, bits)), nowMs);
      if (ban) out.push(ban);
    }
  }

  /** Drops expired bans; returns how many. */
  purgeExpired(nowMs: number): number {
    let purged = 0;
    const sweep = <K>(m: Map<K, Ban>) => {
      for (const [k, b] of m) if (b.expiresAt <= nowMs && m.delete(k)) purged++;
    };
    sweep(this.exact);
    purged += this.v4.deleteWhere((b) => b.expiresAt <= nowMs);
    for (const family of [this.networks[4], this.networks[6]]) for (const m of family.values()) sweep(m);
    return purged;
  }

  /** Live bans, optionally of one scope (`ip`, `cidr`, `user`…), in subject order, paged. */
  list(nowMs: number, options: { scope?: string; after?: string; limit: number }): Ban[] {
    const all: Ban[] = [];
    const take = (b: Ban) => {
      if (b.expiresAt > nowMs && (!options.scope || b.subject.startsWith(`${options.scope}:`)) && (!options.after || b.subject > options.after)) all.push(b);
    };
    for (const b of this.exact.values()) take(b);
    for (const [, b] of this.v4.entries()) take(b);
    for (const family of [this.networks[4], this.networks[6]]) for (const m of family.values()) for (const b of m.values()) take(b);
    return all.sort((a, b) => (a.subject < b.subject ? -1 : 1)).slice(0, options.limit);
  }
}

/** The four bytes as one int32: a small integer key, hashed without touching text. */
function ipv4Key(bytes: Uint8Array): number {
  return (bytes[0]! << 24) | (bytes[1]! << 16) | (bytes[2]! << 8) | bytes[3]!;
}

/** ipv4Key of an `ip:` subject holding a canonical IPv4 address; undefined for any other subject. */
function ipv4SubjectKey(subject: string): number | undefined {
  if (!subject.startsWith('ip:')) return undefined;
  const address = canonicalIpv4(subject.slice(3));
  return address < 0 ? undefined : address | 0;
}

function live(ban: Ban | undefined, nowMs: number): Ban | undefined {
  return ban && ban.expiresAt > nowMs ? ban : undefined;
}
