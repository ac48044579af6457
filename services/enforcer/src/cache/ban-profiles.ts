import type { Ban } from '@banstream/schemas';

/**
 * What many bans share: a policy's or a feed's bans differ in subject and times, not in
 * policy, reason text, status or origin. Each distinct combination is kept once and
 * counted (BanProfiles), and a ban held compactly keeps only its profile's number.
 */
export interface BanProfile {
  readonly policyId: string;
  readonly reason: string;
  readonly windowSeconds: number;
  readonly preview: boolean;
  readonly escalationLevel: number;
  readonly origin: string;
  readonly httpStatus: number;
  readonly createdBy: string | null;
  /** Whether the ban as received had an `evidence` field (always null once held: see ban-store.ts). */
  readonly evidenceField: boolean;
  /** How the ban's id is made again: ID_FROM_START, ID_VERBATIM, or a number D ≥ 0 (banId at expiresAt − D). */
  readonly idRule: number;
}

/** banId(policyId, subject, startedAt): the aggregator's bans, manual bans, a feed's new bans. */
export const ID_FROM_START = -1;
/** An id not made by banId() from what the ban holds: kept as its text, per ban. */
export const ID_VERBATIM = -2;

/**
 * Interned profiles, each with a count of the bans using it; a profile no ban uses
 * is forgotten and its number reused. Consecutive bans nearly always share a profile
 * (a feed's refresh, an attack's bans of one policy), so the last one is compared
 * field by field before any key is built.
 */
export class BanProfiles {
  private readonly byKey = new Map<string, number>();
  private readonly profiles: (BanProfile | undefined)[] = [];
  private readonly keys: string[] = [];
  private readonly uses: number[] = [];
  private readonly free: number[] = [];
  private last = -1;

  /** Profiles held (used by at least one ban). */
  get size(): number {
    return this.byKey.size;
  }

  at(index: number): BanProfile {
    return this.profiles[index]!;
  }

  /** The number of the profile of `ban` with this id rule, counted as used once more. */
  acquire(ban: Ban, idRule: number): number {
    const last = this.last;
    if (last >= 0 && this.profiles[last] !== undefined && sameProfile(this.profiles[last]!, ban, idRule)) {
      this.uses[last]!++;
      return last;
    }
    const key = profileKey(ban, idRule);
    let index = this.byKey.get(key);
    if (index === undefined) {
      index = this.free.pop() ?? this.profiles.length;
      this.profiles[index] = {
        policyId: ban.policyId,
        reason: ban.reason,
        windowSeconds: ban.windowSeconds,
        preview: ban.preview,
        escalationLevel: ban.escalationLevel,
        origin: ban.origin,
        httpStatus: ban.httpStatus,
        createdBy: ban.createdBy,
        evidenceField: 'evidence' in ban,
        idRule,
      };
      this.keys[index] = key;
      this.uses[index] = 0;
      this.byKey.set(key, index);
    }
    this.uses[index]!++;
    this.last = index;
    return index;
  }

  /** One ban fewer uses profile `index`; the last one forgets it. */
  release(index: number): void {
    if (--this.uses[index]! > 0) return;
    this.byKey.delete(this.keys[index]!);
    this.profiles[index] = undefined;
    this.keys[index] = '';
    this.free.push(index);
    if (this.last === index) this.last = -1;
  }
}

/** Whether a ban's shared fields have the types a profile keeps exactly (any decoded Ban has). */
export function profileable(ban: Ban): boolean {
  return (
    typeof ban.policyId === 'string' &&
    typeof ban.reason === 'string' &&
    typeof ban.windowSeconds === 'number' &&
    typeof ban.preview === 'boolean' &&
    typeof ban.escalationLevel === 'number' &&
    typeof ban.origin === 'string' &&
    typeof ban.httpStatus === 'number' &&
    (ban.createdBy === null || typeof ban.createdBy === 'string')
  );
}

function sameProfile(p: BanProfile, ban: Ban, idRule: number): boolean {
  return (
    p.idRule === idRule &&
    p.policyId === ban.policyId &&
    p.reason === ban.reason &&
    Object.is(p.windowSeconds, ban.windowSeconds) &&
    p.preview === ban.preview &&
    Object.is(p.escalationLevel, ban.escalationLevel) &&
    p.origin === ban.origin &&
    Object.is(p.httpStatus, ban.httpStatus) &&
    p.createdBy === ban.createdBy &&
    p.evidenceField === 'evidence' in ban
  );
}

/** One text per profile and one profile per text: JSON strings are quoted, numbers spelt as Object.is tells them apart. */
function profileKey(ban: Ban, idRule: number): string {
  return JSON.stringify([
    ban.policyId,
    ban.reason,
    numberText(ban.windowSeconds),
    ban.preview,
    numberText(ban.escalationLevel),
    ban.origin,
    numberText(ban.httpStatus),
    ban.createdBy,
    'evidence' in ban,
    numberText(idRule),
  ]);
}

function numberText(n: number): string {
  return Object.is(n, -0) ? '-0' : String(n);
}
