import { addressSubject, canonicalIpv4, formatIpv4, parseCidr, tryParseIp, type Candidate, type Cidr, type IpAddress } from '@banstream/core';
import type { Ban } from '@banstream/schemas';
import { CONTEXT_SCOPES, scopesOfSubject, type ContextScope, type ScopeSet } from '../context-scopes.js';
import { BanPage, type BanPageQuery } from './ban-page.js';
import { BanStore, withoutEvidence } from './ban-store.js';
import { Int32Index } from './int32-index.js';
import { ManualShapes } from './manual-shapes.js';
import { addressKey, containingSubject, NetworkBans, networkSubject, subjectOfNetwork } from './network-bans.js';

/**
 * The bans topic as a lookup table. Exact subjects (`user:…`, IPv6 addresses,
 * composites) are one hash probe and keep their Ban object; IPv4 address bans are keyed
 * by the address as a number, so the per-request check builds no `ip:…` string and
 * hashes no text; prefix bans (`cidr:…`) are kept per prefix length, so an address is
 * matched against every banned network containing it with one probe per length
 * present, not one per ban. Those two kinds, the numerous ones (an attack's addresses,
 * a blocklist feed), keep no Ban object: a row of numbers and a shared profile each
 * (ban-store.ts), the ban made again when a listing or a lookup asks for it. A ban
 * stops applying at its expiry even before its tombstone arrives; purgeExpired drops
 * it so memory follows live bans. No ban keeps its evidence (the control API shows it).
 *
 * It holds at most `maxBans` bans (ENFORCER_MAX_BANS), so that a flood of bans
 * cannot exhaust an enforcer's memory: when full, a ban on a subject it does not hold
 * is refused, unless placed by hand (origin `manual`, always taken). Bans held are
 * never dropped for a newcomer, and a held ban is still replaced and lifted.
 */
export class BanCache {
  private readonly exact = new Map<string, Ban>();
  /** The bans on IPv4 addresses and networks, kept compactly (ban-store.ts): a row each, no Ban object. */
  private readonly store = new BanStore();
  /**
   * `ip:a.b.c.d` bans, the address as an int32 → its entry in the store: the most
   * numerous kind, probed on every request. A check reads the entry's row and its
   * profile, never a Ban object, and builds no `ip:…` string.
   */
  private readonly v4 = new Int32Index(1024);
  /** Denial texts of the bans kept whole (exact subjects, IPv6 addresses), built once per ban. */
  private readonly otherTexts = new WeakMap<Ban, string>();
  /** Prefix bans (`cidr:…`), by family and length (network-bans.ts), their bans in the store. */
  private readonly networks = new NetworkBans(this.store);
  private refusedCount = 0;
  /** The shapes of the manual bans on subjects a check does not look up otherwise (manual-shapes.ts). */
  private readonly shapes = new ManualShapes();
  /** The listing running and those waiting (list), one after the other. */
  private listings: Promise<unknown> = Promise.resolve();
  private listingsWaiting = 0;

  /** Live exact bans naming each context scope (CONTEXT_SCOPES order): GET /v1/auth may lack them. */
  private readonly contextCounts = CONTEXT_SCOPES.map(() => 0);
  private readonly listSlice: number;
  private readonly onContextBan: ((scopes: ScopeSet, ban: Ban) => void) | undefined;
  private readonly onRefused: ((subject: string, ban: Ban) => void) | undefined;
  /** The most bans held before new ones are refused (manual bans are taken past it). */
  readonly maxBans: number;

  constructor(options: BanCacheOptions = {}) {
    this.listSlice = options.listSlice ?? LIST_SLICE;
    this.onContextBan = options.onContextBan;
    this.onRefused = options.onRefused;
    this.maxBans = options.maxBans ?? DEFAULT_MAX_BANS;
    if (!(Number.isSafeInteger(this.maxBans) && this.maxBans >= 1 && this.maxBans <= MAX_BANS_LIMIT)) {
      throw new RangeError(`a BanCache holds 1 to ${MAX_BANS_LIMIT} bans, not ${this.maxBans}`);
    }
  }

  /** Per shape of manual ban held, the function a check builds that shape's subject with; look each up with subject(). */
  get manualSubjectFns(): ManualShapes['subjectFns'] {
    return this.shapes.subjectFns;
  }

  get size(): number {
    return this.exact.size + this.v4.size + this.networks.size;
  }

  /** Bans refused since the start because the cache was full (maxBans). */
  get refused(): number {
    return this.refusedCount;
  }

  /** Distinct profiles (policy, reason, status, origin…) the compact bans share: a figure for tests and benchmarks. */
  get profileCount(): number {
    return this.store.profileCount;
  }

  /** Applies a record of the bans topic; null is the tombstone that lifts the ban. Evidence is not kept (null). */
  observe(key: string, ban: Ban | null): void {
    // A composite that starts with a network (`cidr:…|path:…`) is an exact subject.
    const network = key.startsWith('cidr:') && !key.includes('|') ? parseCidr(key.slice(5)) : undefined;
    if (network) {
      this.observeNetwork(key, network, ban);
      return;
    }
    const subject = canonicalAddressSubject(key);
    const v4 = ipv4SubjectKey(subject);
    if (v4 !== undefined) {
      const entry = this.v4.get(v4);
      if (!ban) {
        if (entry >= 0) this.store.drop(this.v4.delete(v4));
      } else if (entry >= 0) this.store.put(entry, v4Subject(v4), ban);
      else if (!this.refuses(subject, ban)) this.v4.set(v4, this.store.put(-1, v4Subject(v4), ban));
      return;
    }
    const before = this.exact.get(subject);
    if (ban && before === undefined && this.refuses(subject, ban)) return;
    if (before?.origin === MANUAL) this.shapes.remove(subject);
    const held = ban && withoutEvidence(ban);
    if (held) this.exact.set(subject, held);
    else this.exact.delete(subject);
    if (held?.origin === MANUAL) this.shapes.add(subject);
    if (held || before) this.countContext(subject, before === undefined ? 1 : held ? 0 : -1, held);
  }

  private observeNetwork(key: string, network: Cidr, ban: Ban | null): void {
    const entry = this.networks.entryOf(network);
    if (!ban) {
      if (entry >= 0) this.store.drop(this.networks.delete(network));
    } else if (entry >= 0) this.store.put(entry, subjectOfNetwork(network), ban);
    else if (!this.refuses(key, ban)) this.networks.add(network, this.store.put(-1, subjectOfNetwork(network), ban));
  }

  /** True, and counted, if `ban` on a subject not held must be refused: the cache is full and the ban is not manual. */
  private refuses(subject: string, ban: Ban): boolean {
    if (ban.origin === MANUAL) return false;
    // Bans imported from blocklists stop short of the cap: a feed (or a hostile source
    // behind one) must not fill the room the aggregator's bans of a live attack need.
    const room = ban.origin.startsWith(FEED_ORIGIN) ? this.maxBans - Math.ceil(this.maxBans * POLICY_RESERVE) : this.maxBans;
    if (this.size < room) return false;
    this.refusedCount++;
    this.onRefused?.(subject, ban);
    return true;
  }

  /** The live ban on this exact subject, if any (not a network's: networksOf finds those); an IPv4 address's is made again, a new object each call. */
  subject(subject: string, nowMs: number): Ban | undefined {
    const v4 = ipv4SubjectKey(subject);
    return v4 === undefined ? live(this.exact.get(subject), nowMs) : this.liveBan(this.v4.get(v4), v4Subject(v4), nowMs);
  }

  /** The live ban on this address itself (subject `ip:…`), if any. */
  address(address: IpAddress, nowMs: number): Ban | undefined {
    if (address.family !== 4) return live(this.exact.get(addressSubject(address)), nowMs);
    const key = addressKey(address);
    return this.liveBan(this.v4.get(key), v4Subject(key), nowMs);
  }

  private liveBan(entry: number, subject: string, nowMs: number): Ban | undefined {
    return entry >= 0 && this.store.expiresAt(entry) > nowMs ? this.store.ban(entry, subject) : undefined;
  }

  /**
   * The denial by the live ban on this address itself, if any, for a check: for an
   * IPv4 address from its row and profile alone. `reason` builds a ban's text, once per ban.
   */
  addressDenial(address: IpAddress, nowMs: number, reason: (ban: Ban) => string): Candidate | undefined {
    if (address.family !== 4) return this.denial(this.exact.get(addressSubject(address)), nowMs, reason);
    const entry = this.v4.get(addressKey(address));
    return entry < 0 ? undefined : this.entryDenial(entry, address, ADDRESS, nowMs, reason);
  }

  /** Starts the read of an IPv4 address's index slot: addressDenial, later, finds it in cache. */
  touchAddress(address: IpAddress): void {
    if (address.family === 4) touched ^= this.v4.touch(addressKey(address));
  }

  /** The denial by `ban` if it is live, its text kept in a side table. */
  denial(ban: Ban | undefined, nowMs: number, reason: (ban: Ban) => string): Candidate | undefined {
    if (!ban || !(ban.expiresAt > nowMs)) return undefined;
    let text = this.otherTexts.get(ban);
    if (text === undefined) this.otherTexts.set(ban, (text = reason(ban)));
    return banDenial(ban.policyId, ban.httpStatus === 429, ban.preview, text, ban.expiresAt, nowMs);
  }

  /** Every live prefix ban whose network contains the address, made again, appended to `out` (made when the first is found); returns `out`. */
  networksOf(address: IpAddress, nowMs: number, out?: Ban[]): Ban[] | undefined {
    const hits = this.networks.containing(address, nowMs);
    if (hits) for (let i = 0; i < hits.length; i += 2) (out ??= []).push(this.store.ban(hits[i]!, containingSubject(address, hits[i + 1]!)));
    return out;
  }

  /** The denials of networksOf's bans, for a check: from their rows and profiles, texts built once per ban. */
  networkDenials(address: IpAddress, nowMs: number, reason: (ban: Ban) => string, out?: Candidate[]): Candidate[] | undefined {
    const hits = this.networks.containing(address, nowMs);
    if (hits) for (let i = 0; i < hits.length; i += 2) (out ??= []).push(this.entryDenial(hits[i]!, address, hits[i + 1]!, nowMs, reason)!);
    return out;
  }

  /** The denial by the store's `entry`, the ban on the address itself (bits ADDRESS) or on its network of `bits`, if live. */
  private entryDenial(entry: number, address: IpAddress, bits: number, nowMs: number, reason: (ban: Ban) => string): Candidate | undefined {
    const store = this.store;
    const expiresAt = store.expiresAt(entry);
    if (!(expiresAt > nowMs)) return undefined;
    let text = store.text(entry);
    if (text === undefined) {
      const subject = bits === ADDRESS ? v4Subject(addressKey(address)) : containingSubject(address, bits);
      store.setText(entry, (text = reason(store.ban(entry, subject))));
    }
    const facts = store.facts(entry);
    return banDenial(facts.policyId, facts.httpStatus === 429, facts.preview, text, expiresAt, nowMs);
  }

  /** Drops expired bans; returns how many. */
  purgeExpired(nowMs: number): number {
    let purged = 0;
    for (const [subject, b] of this.exact) {
      if (b.expiresAt > nowMs) continue;
      if (b.origin === MANUAL) this.shapes.remove(subject);
      this.countContext(subject, -1, null);
    }
    for (const [k, b] of this.exact) if (b.expiresAt <= nowMs && this.exact.delete(k)) purged++;
    // Keys collected first: deleting moves slots.
    const doomed: number[] = [];
    for (const [key, entry] of this.v4.entries()) if (this.store.expiresAt(entry) <= nowMs) doomed.push(key);
    for (const key of doomed) this.store.drop(this.v4.delete(key));
    purged += doomed.length;
    purged += this.networks.purgeExpired(nowMs, (entry) => this.store.drop(entry));
    return purged;
  }

  /** Bans held that name `scope` (a context scope: country, region, asn, route), expired ones until purged. */
  bansNaming(scope: ContextScope): number {
    return this.contextCounts[CONTEXT_SCOPES.indexOf(scope)]!;
  }

  /** An exact ban on `subject` came (`change` 1), was replaced (0) or went (-1): counted per context scope it names. */
  private countContext(subject: string, change: 1 | 0 | -1, ban: Ban | null): void {
    const scopes = scopesOfSubject(subject);
    if (scopes === 0) return;
    for (let i = 0; i < CONTEXT_SCOPES.length; i++) if ((scopes & (1 << i)) !== 0) this.contextCounts[i]! += change;
    if (ban) this.onContextBan?.(scopes, ban);
  }

  /**
   * Live bans, optionally of one scope (`ip`, `cidr`, `user`…), in subject order, paged
   * (ban-page.ts). A million bans take a few hundred ms to scan, so the scan pauses
   * every `LIST_SLICE` entries for the event loop (checks go on meanwhile), and
   * listings run one at a time: two would put two slices between checks. A ban
   * present throughout the listing is in it (Int32Index.openScan); one set or lifted
   * meanwhile may or may not be. Only the bans a page keeps are made again.
   */
  list(nowMs: number, query: BanPageQuery): Promise<Ban[]> {
    const turn = this.listings.then(() => this.collect(new BanPage(nowMs, query)));
    this.listings = turn.then(noop, noop);
    this.listingsWaiting++;
    return turn.finally(() => this.listingsWaiting--);
  }

  /** Listings asked for and not finished (the running one included). */
  get listingsPending(): number {
    return this.listingsWaiting;
  }

  private async collect(page: BanPage): Promise<Ban[]> {
    const store = this.store;
    const offerEntry = (entry: number, subject: string) => {
      if (page.wants(store.subjectOf(entry, subject), store.expiresAt(entry))) page.take(store.ban(entry, subject));
    };
    let budget = this.listSlice;
    // Map iterators stay valid across pauses: an entry deleted meanwhile is skipped, one added may be seen.
    for (const ban of this.exact.values()) {
      page.offer(ban);
      if (--budget === 0) {
        await nextTurn();
        budget = this.listSlice;
      }
    }
    for (const { bits, bans } of this.networks.lengths()) {
      for (const [key, entry] of bans) {
        offerEntry(entry, networkSubject(key, bits));
        if (--budget === 0) {
          await nextTurn();
          budget = this.listSlice;
        }
      }
    }
    const scan = this.v4.openScan();
    const visit = (key: number, entry: number) => {
      // An address lifted during a pause (its entry perhaps reused) is skipped, as one lifted before the listing.
      if (this.v4.get(key) === entry) offerEntry(entry, v4Subject(key));
    };
    try {
      // A quarter to a half of the slots hold a ban.
      while (!this.v4.scanStep(scan, this.listSlice, visit)) await nextTurn();
    } finally {
      this.v4.closeScan(scan);
    }
    return page.bans();
  }
}

/**
 * Bans held by default (ENFORCER_MAX_BANS): the capacity plan's target for one
 * enforcer (docs/operations/capacity.md). Its heap must be sized for it.
 */
export const DEFAULT_MAX_BANS = 10_000_000;
/**
 * The highest maxBans: exact subjects are kept in one Map, and V8's Maps hold at most
 * 16,777,216 entries (one more throws); the rest leaves room for manual bans past the cap.
 */
export const MAX_BANS_LIMIT = 16_000_000;

/** Entries (or table slots) a listing reads between two pauses: about a millisecond with a million bans. */
const LIST_SLICE = 4096;

const noop = () => undefined;

/** After the I/O waiting now (checks) has been served. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export interface BanCacheOptions {
  /** Entries a listing reads between pauses for the event loop (tests make it small). */
  listSlice?: number;
  /** A ban naming context scopes (scopesOfSubject) came or was replaced: GET /v1/auth may be unable to apply it. */
  onContextBan?: (scopes: ScopeSet, ban: Ban) => void;
  /** The most bans held before new ones are refused; default DEFAULT_MAX_BANS. */
  maxBans?: number;
  /** A ban was refused: the cache holds maxBans and the ban is not manual (metrics, a log line). */
  onRefused?: (subject: string, ban: Ban) => void;
}

/** Ban.origin of a ban placed by hand (control API, CLI). */
/** Origin prefix of the bans a blocklist feed writes (`feed:<name>`). */
const FEED_ORIGIN = 'feed:';
/** Share of ENFORCER_MAX_BANS that feed bans may not take: kept for the aggregator's bans. */
const POLICY_RESERVE = 0.1;
const MANUAL = 'manual';

/** Where touchAddress keeps what it read, so the compiler cannot drop the read. */
// biome-ignore lint/correctness/noUnusedVariables: written, never read, on purpose (see above)
let touched = 0;

/**
 * An `ip:` key as a check looks it up (addressSubject): canonical IPv4 is the common
 * case and returned as is; other address text (`ip:2001:DB8::1`, `ip:::ffff:192.0.2.1`)
 * is rewritten, as a check never builds it. Any other subject is returned as is.
 */
function canonicalAddressSubject(key: string): string {
  if (!key.startsWith('ip:') || canonicalIpv4(key.slice(3)) >= 0) return key;
  const address = tryParseIp(key.slice(3));
  return address === undefined ? key : addressSubject(address);
}

/** ipv4Key of an `ip:` subject holding a canonical IPv4 address; undefined for any other subject. */
function ipv4SubjectKey(subject: string): number | undefined {
  if (!subject.startsWith('ip:')) return undefined;
  const address = canonicalIpv4(subject.slice(3));
  return address < 0 ? undefined : address | 0;
}

/** The subject of the IPv4 address ban whose key is `key`: `ip:203.0.113.7`. */
function v4Subject(key: number): string {
  return `ip:${formatIpv4(key)}`;
}

/** entryDenial's prefix length for the ban on the address itself. */
const ADDRESS = -1;

/** The ban while it applies. */
function live(ban: Ban | undefined, nowMs: number): Ban | undefined {
  return ban && ban.expiresAt > nowMs ? ban : undefined;
}

/** What a check gets from a live ban: 429 if the ban says so, else 403, and when to retry. */
function banDenial(policyId: string, tooMany: boolean, preview: boolean, reason: string, expiresAt: number, nowMs: number): Candidate {
  return {
    source: 'ban',
    policyId,
    deny: true,
    status: tooMany ? 429 : 403,
    preview,
    reason,
    retryAfterSeconds: Math.max(1, Math.ceil((expiresAt - nowMs) / 1000)),
  };
}
