import { networkPrefix, parseCidr, type IpAddress } from '@banstream/core';
import type { Ban } from '@banstream/schemas';

/**
 * The bans topic as a lookup table. Exact subjects (`ip:…`, `user:…`, composites)
 * are one hash probe; prefix bans (`cidr:…`) are kept per prefix length, so an
 * address is matched against every banned network containing it with one probe per
 * length present, not one per ban. A ban stops applying at its expiry even before
 * its tombstone arrives; purgeExpired drops it so memory follows live bans.
 */
export class BanCache {
  private readonly exact = new Map<string, Ban>();
  private readonly networks = { 4: new Map<number, Map<string, Ban>>(), 6: new Map<number, Map<string, Ban>>() };

  get size(): number {
    let n = this.exact.size;
    for (const family of [this.networks[4], this.networks[6]]) for (const m of family.values()) n += m.size;
    return n;
  }

  /** Applies a record of the bans topic; null is the tombstone that lifts the ban. */
  observe(subject: string, ban: Ban | null): void {
    const network = subject.startsWith('cidr:') ? parseCidr(subject.slice(5)) : undefined;
    if (!network) {
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
    return live(this.exact.get(subject), nowMs);
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
    const sweep = (m: Map<string, Ban>) => {
      for (const [k, b] of m) if (b.expiresAt <= nowMs && m.delete(k)) purged++;
    };
    sweep(this.exact);
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
    for (const family of [this.networks[4], this.networks[6]]) for (const m of family.values()) for (const b of m.values()) take(b);
    return all.sort((a, b) => (a.subject < b.subject ? -1 : 1)).slice(0, options.limit);
  }
}

function live(ban: Ban | undefined, nowMs: number): Ban | undefined {
  return ban && ban.expiresAt > nowMs ? ban : undefined;
}
