import { banId as makeBanId } from '@banstream/core';
import type { Ban } from '@banstream/schemas';
import { BanProfiles, ID_FROM_START, ID_VERBATIM, profileable, type BanProfile } from './ban-profiles.js';

/**
 * The bans on IPv4 addresses and on networks, without a `Ban` object each (about 440
 * bytes): an entry is one row of four doubles in a chunk of a Float64Array (expiry,
 * start, evidence count, and its kind, profile and denial text in one), 32 bytes, two
 * rows a cache line, and a ban
 * is made again from its row, its profile (ban-profiles.ts) and its subject, which the
 * caller's key gives (an address, a network). Its id is made again too: banId() of its
 * policy, subject and start (or, for a feed's renewed bans, of its expiry less a
 * duration shared by many), checked when the ban is stored; any other id is kept as
 * text. A ban the row cannot give back as it came (its subject spelt otherwise than
 * its key, a field of an unexpected type) keeps its object. Its evidence is not kept
 * (null): every enforcer holds every ban, and the evidence is the control plane's to show.
 *
 * A denial's text is kept once built (a check of a banned address needs it every time),
 * for at most TEXTS_HELD entries: past that all are dropped and built again as needed,
 * so a flood of denials cannot grow memory without bound. The texts are pairs [entry,
 * text] in one dense list (262,144 slots: 2 MiB of pointers without V8's pointer
 * compression, Node's default), found from the row (KIND's high part): a check reads
 * the row anyway, and the list is mostly in the CPU's cache, where texts in chunks
 * beside a million entries cost one more read from memory per denial (floor with
 * attributes 0.89 of the build before the compact cache, against 0.83).
 */
export class BanStore {
  private readonly rows: Float64Array[] = [];
  private made = 0;
  private readonly free: number[] = [];
  private readonly profiles = new BanProfiles();
  /** Entries whose ban a row cannot give back: the ban itself. */
  private readonly whole = new Map<number, Ban>();
  /** The ids of entries of ID_VERBATIM profiles, in chunks made for the first such entry of a chunk. */
  private readonly ids: (string | undefined)[][] = [];
  /** Recent expiresAt − startedAt of bans whose id is from their start: the durations a renewed ban's id may be made with. */
  private readonly idOffsets: number[] = [];
  /** Pairs [entry, text]; a pair whose entry is -1 is free (listed in freeTexts). */
  private texts: (number | string | undefined)[] = [];
  private freeTexts: number[] = [];

  /** Profiles held: a figure for tests and benchmarks. */
  get profileCount(): number {
    return this.profiles.size;
  }

  /** Stores `ban`, whose subject the caller's key spells `subject`, in `entry` (or a new one if -1); returns the entry. */
  put(entry: number, subject: string, ban: Ban): number {
    if (entry < 0) entry = this.allocate();
    else this.clear(entry);
    const at = (entry & CHUNK_MASK) * ROW;
    const row = this.rows[entry >>> CHUNK_BITS]!;
    if (!rebuildable(ban, subject)) {
      row[at] = ban.expiresAt;
      row[at + KIND] = WHOLE;
      this.whole.set(entry, withoutEvidence(ban));
      return entry;
    }
    const idRule = this.idRuleOf(ban, subject);
    row[at] = ban.expiresAt;
    row[at + STARTED] = ban.startedAt;
    row[at + EVIDENCE] = ban.evidenceCount;
    row[at + KIND] = this.profiles.acquire(ban, idRule) + PROFILED;
    if (idRule === ID_VERBATIM) (this.ids[entry >>> CHUNK_BITS] ??= new Array<string | undefined>(CHUNK).fill(undefined))[entry & CHUNK_MASK] = ban.banId;
    return entry;
  }

  /** Forgets the ban in `entry`; the entry is reused. */
  drop(entry: number): void {
    this.clear(entry);
    this.free.push(entry);
  }

  /** When the ban in `entry` ends. */
  expiresAt(entry: number): number {
    return this.rows[entry >>> CHUNK_BITS]![(entry & CHUNK_MASK) * ROW]!;
  }

  /** The ban in `entry`, made again; `subject` is its key's subject (as given to put). */
  ban(entry: number, subject: string): Ban {
    const row = this.rows[entry >>> CHUNK_BITS]!;
    const at = (entry & CHUNK_MASK) * ROW;
    const kind = kindOf(row[at + KIND]!);
    if (kind === WHOLE) return this.whole.get(entry)!;
    const p = this.profiles.at(kind - PROFILED);
    const expiresAt = row[at]!;
    const startedAt = row[at + STARTED]!;
    const ban: Ban = {
      banId:
        p.idRule === ID_FROM_START
          ? makeBanId(p.policyId, subject, startedAt)
          : p.idRule === ID_VERBATIM
            ? this.ids[entry >>> CHUNK_BITS]![entry & CHUNK_MASK]!
            : makeBanId(p.policyId, subject, expiresAt - p.idRule),
      subject,
      policyId: p.policyId,
      reason: p.reason,
      evidenceCount: row[at + EVIDENCE]!,
      windowSeconds: p.windowSeconds,
      startedAt,
      expiresAt,
      preview: p.preview,
      escalationLevel: p.escalationLevel,
      origin: p.origin,
      httpStatus: p.httpStatus,
      createdBy: p.createdBy,
    };
    if (p.evidenceField) ban.evidence = null;
    return ban;
  }

  /** The subject of the ban in `entry`: its key's, `keySubject`, unless the ban is kept whole. */
  subjectOf(entry: number, keySubject: string): string {
    return kindOf(this.rows[entry >>> CHUNK_BITS]![(entry & CHUNK_MASK) * ROW + KIND]!) === WHOLE ? this.whole.get(entry)!.subject : keySubject;
  }

  /** What a denial by `entry` says besides its text: the policy, status and preview (from the profile, or the ban kept whole). */
  facts(entry: number): Pick<BanProfile, 'policyId' | 'httpStatus' | 'preview'> {
    const kind = kindOf(this.rows[entry >>> CHUNK_BITS]![(entry & CHUNK_MASK) * ROW + KIND]!);
    return kind === WHOLE ? this.whole.get(entry)! : this.profiles.at(kind - PROFILED);
  }

  /** The denial text kept for `entry`, if any. */
  text(entry: number): string | undefined {
    const pair = this.textPair(entry);
    return pair < 0 ? undefined : (this.texts[pair + 1] as string);
  }

  setText(entry: number, text: string): void {
    let pair = this.textPair(entry);
    if (pair < 0) {
      if (this.freeTexts.length === 0 && this.texts.length >= 2 * TEXTS_HELD) {
        // Every row's text now points past the list or at a pair of another entry: read as none.
        this.texts = [];
        this.freeTexts = [];
      }
      pair = this.freeTexts.pop() ?? this.texts.length;
      this.texts[pair] = entry;
      const row = this.rows[entry >>> CHUNK_BITS]!;
      const at = (entry & CHUNK_MASK) * ROW + KIND;
      row[at] = kindOf(row[at]!) + (pair / 2 + 1) * KIND_SPAN;
    }
    this.texts[pair + 1] = text;
  }

  /** The index of `entry`'s pair in texts, or -1: its row's text (pair number + 1, 0 for none) if the pair is still its own. */
  private textPair(entry: number): number {
    const ref = Math.floor(this.rows[entry >>> CHUNK_BITS]![(entry & CHUNK_MASK) * ROW + KIND]! / KIND_SPAN);
    if (ref === 0) return -1;
    const pair = 2 * (ref - 1);
    return this.texts[pair] === entry ? pair : -1;
  }

  /**
   * How the id of `ban` is made again: from its start, from its expiry less a recent
   * duration (a feed renewing a ban keeps its start and makes the id at the renewal,
   * its expiry less the feed's duration), else kept as it is. Only the 22 characters of
   * banId() are tried, each try a SHA-256 checked here, once per ban stored.
   */
  private idRuleOf(ban: Ban, subject: string): number {
    const id = ban.banId;
    if (typeof id !== 'string' || id.length !== ID_LENGTH) return ID_VERBATIM;
    if (makeBanId(ban.policyId, subject, ban.startedAt) === id) {
      this.learnOffset(ban.expiresAt - ban.startedAt);
      return ID_FROM_START;
    }
    for (const d of this.idOffsets) if (makeBanId(ban.policyId, subject, ban.expiresAt - d) === id) return d;
    return ID_VERBATIM;
  }

  private learnOffset(d: number): void {
    if (!(Number.isSafeInteger(d) && d >= 0) || this.idOffsets[0] === d) return;
    const at = this.idOffsets.indexOf(d);
    if (at >= 0) this.idOffsets.splice(at, 1);
    this.idOffsets.unshift(d);
    if (this.idOffsets.length > ID_OFFSETS) this.idOffsets.pop();
  }

  private allocate(): number {
    const reused = this.free.pop();
    if (reused !== undefined) return reused;
    const entry = this.made++;
    if ((entry & CHUNK_MASK) === 0) this.rows.push(new Float64Array(CHUNK * ROW));
    return entry;
  }

  /** Lets go of what `entry` holds beside its row: its profile's use, its whole ban or id, its text. */
  private clear(entry: number): void {
    const row = this.rows[entry >>> CHUNK_BITS]!;
    const at = (entry & CHUNK_MASK) * ROW;
    const kind = kindOf(row[at + KIND]!);
    if (kind === WHOLE) this.whole.delete(entry);
    else if (kind !== EMPTY) {
      if (this.profiles.at(kind - PROFILED).idRule === ID_VERBATIM) this.ids[entry >>> CHUNK_BITS]![entry & CHUNK_MASK] = undefined;
      this.profiles.release(kind - PROFILED);
    }
    const pair = this.textPair(entry);
    if (pair >= 0) {
      this.texts[pair] = -1;
      this.texts[pair + 1] = undefined;
      this.freeTexts.push(pair);
    }
    row[at + KIND] = EMPTY;
  }
}

/** A ban the row and a profile give back as it came (but its evidence), its subject being `subject`. */
function rebuildable(ban: Ban, subject: string): boolean {
  return ban.subject === subject && typeof ban.expiresAt === 'number' && typeof ban.startedAt === 'number' && typeof ban.evidenceCount === 'number' && profileable(ban);
}

/** The ban as held: its evidence, if it has any, dropped (null). */
export function withoutEvidence(ban: Ban): Ban {
  return 'evidence' in ban && ban.evidence !== null ? { ...ban, evidence: null } : ban;
}

/**
 * Doubles per row: expiry, start, evidence count, and KIND: the entry's kind (EMPTY,
 * WHOLE, or its profile's number + PROFILED) plus KIND_SPAN times its denial text's
 * pair number + 1 (0: none). Below 2 ** 53 while kinds stay under 2 ** 32 and pairs
 * under TEXTS_HELD.
 */
const ROW = 4;
const STARTED = 1;
const EVIDENCE = 2;
const KIND = 3;
const EMPTY = 0;
const WHOLE = 1;
const PROFILED = 2;
const KIND_SPAN = 2 ** 32;

/** The kind part of a row's KIND (division by a power of two and floor: exact, and cheaper than %). */
function kindOf(value: number): number {
  return value - Math.floor(value / KIND_SPAN) * KIND_SPAN;
}
/** Rows per chunk (4,096: 128 KiB), so that a million bans waste at most one chunk's tail. */
const CHUNK_BITS = 12;
const CHUNK = 1 << CHUNK_BITS;
const CHUNK_MASK = CHUNK - 1;
/** Denial texts kept at most: the banned addresses a busy enforcer sees again and again. */
export const TEXTS_HELD = 1 << 17;
/** banId()'s length: 22 characters of base64url. */
const ID_LENGTH = 22;
/** Durations tried for a renewed ban's id. */
const ID_OFFSETS = 4;
