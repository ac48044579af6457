import { networkPrefix, type Cidr } from '@banstream/core';
import type { AllowEntry, Ban } from '@banstream/schemas';
import { wideNetwork, type MinPrefix } from '../guards/index.js';
import type { FeedEntry } from './parse.js';

export interface RefreshInputs {
  origin: string;
  entries: readonly FeedEntry[];
  /** Every ban held, by subject. */
  bans: ReadonlyMap<string, Ban>;
  allowlist: Iterable<AllowEntry>;
  minPrefix: MinPrefix;
  /** The feed was created with force by an admin: wide entries are banned too. */
  wideAllowed: boolean;
  now: number;
  /** A feed ban with less left than this is written again (renewed). */
  renewWithin: number;
}

export interface RefreshPlan {
  add: string[];
  renew: string[];
  lift: Ban[];
  /** The feed's bans held before the refresh. */
  held: number;
  skipped: { allowlisted: number; bannedOtherwise: number; tooWide: number };
  /** The first few wide entries skipped, to name in the audit. */
  tooWideShown: string[];
}

/**
 * What a refresh changes: entries to ban (new), bans of the feed to write again
 * (still listed, expiring before the next refreshes), and bans of the feed to lift
 * (no longer listed, or now allowlisted). An entry the allowlist covers whole is
 * never banned; one banned by something else (a policy, a person, another feed)
 * is left to that ban; one wider than the guard rails is banned only if the feed
 * was forced.
 */
export function planRefresh(input: RefreshInputs): RefreshPlan {
  const plan: RefreshPlan = { add: [], renew: [], lift: [], held: 0, skipped: { allowlisted: 0, bannedOtherwise: 0, tooWide: 0 }, tooWideShown: [] };
  const allowed = coverage(input.allowlist, input.now);
  const wanted = new Set<string>();
  for (const entry of input.entries) {
    if (allowed.covers(entry.network)) {
      plan.skipped.allowlisted++;
      continue;
    }
    if (!input.wideAllowed && wideNetwork(entry.subject, input.minPrefix) !== undefined) {
      plan.skipped.tooWide++;
      if (plan.tooWideShown.length < 5) plan.tooWideShown.push(entry.subject);
      continue;
    }
    const ban = input.bans.get(entry.subject);
    if (ban !== undefined && ban.origin !== input.origin && ban.expiresAt > input.now) {
      plan.skipped.bannedOtherwise++;
      continue;
    }
    wanted.add(entry.subject);
    if (ban === undefined || ban.origin !== input.origin) plan.add.push(entry.subject);
    else if (ban.expiresAt - input.now < input.renewWithin) plan.renew.push(entry.subject);
  }
  for (const ban of input.bans.values()) {
    if (ban.origin !== input.origin) continue;
    plan.held++;
    if (!wanted.has(ban.subject)) plan.lift.push(ban);
  }
  return plan;
}

/** The live allowlist's networks and addresses, asked whether one holds a whole network. */
function coverage(entries: Iterable<AllowEntry>, now: number) {
  const byFamily = { 4: new Map<number, Set<string>>(), 6: new Map<number, Set<string>>() };
  for (const e of entries) {
    if (e.expiresAt !== null && e.expiresAt <= now) continue;
    const text = e.entry.startsWith('cidr:') ? e.entry.slice(5) : e.entry.startsWith('ip:') ? e.entry.slice(3) : undefined;
    if (text === undefined) continue;
    const family = text.includes(':') ? 6 : 4;
    const bits = text.includes('/') ? Number(text.slice(text.indexOf('/') + 1)) : family === 4 ? 32 : 128;
    const network = text.includes('/') ? text : `${text}/${bits}`;
    let set = byFamily[family].get(bits);
    if (!set) byFamily[family].set(bits, (set = new Set()));
    set.add(network);
  }
  return {
    covers(network: Cidr): boolean {
      for (const [bits, set] of byFamily[network.family]) {
        if (bits <= network.bits && set.has(networkPrefix(network.text.slice(0, network.text.indexOf('/')), bits))) return true;
      }
      return false;
    },
  };
}
