import { kafkajsConsumerGroupPrototype } from './member-rejoin-fix.js';

/**
 * kafkajs 2.2.4's runner awaits the group's heartbeat after every batch and every empty
 * fetch, so a coordinator that holds its answer holds the consumer's reading. A group
 * coordinator that has just taken a group over answers a heartbeat only once its own
 * last write to `__consumer_offsets` is replicated, or after `offsets.commit.timeout.ms`
 * (5 s): in a failover benchmark run the aggregator's events stage read nothing for those
 * 5 s, and its floods' bans went out 5.8 s after the kill instead of under one.
 *
 * The Java client heartbeats on a thread of its own, beside its polls. This does the
 * same within one thread: a heartbeat is still sent when kafkajs would send it, and the
 * runner still waits for it, but for HEARTBEAT_WAIT_MS at most after it was sent. A
 * heartbeat answered within that (the usual case: a few ms) reaches kafkajs as before,
 * errors and all. One answered later is not sent again meanwhile (kafkajs shares the one
 * in flight); if it failed, its error is thrown by the next heartbeat call, so a
 * rebalance or an eviction still makes kafkajs join again, one batch later, unless the
 * member has joined again since (a new generation: the old answer says nothing of it).
 * Installed over the coordinator-move patch's heartbeat, so answers that the group moved
 * are skipped as there. Applied once per process by installKafkaPatches().
 */

/** How long the runner waits for a heartbeat before it goes on reading (kafkajs waited for the answer, however late). */
export const HEARTBEAT_WAIT_MS = 25;

/** A held answer this late is logged: a coordinator that slow is a broker or replication problem, and no broker logs it. */
export const HELD_HEARTBEAT_WARN_MS = 1_000;

/** The fields of kafkajs's ConsumerGroup the patch reads. */
interface Member {
  groupId?: unknown;
  memberId?: unknown;
  generationId?: unknown;
  lastRequest?: unknown;
  /** kafkajs's own logger of the group (its "ConsumerGroup" namespace), which the services route to theirs. */
  logger?: { warn(message: string, extra?: object): void };
}

type Heartbeat = (this: Member, options: { interval?: unknown }) => Promise<unknown>;

/** A heartbeat in flight: its answer, when its wait ends, whether a caller went on without it, and the generation that sent it. */
interface InFlight {
  answer: Promise<unknown>;
  waitEnds: number;
  leftBehind: boolean;
  memberId: unknown;
  generationId: unknown;
}

let applied = false;

/** Patches kafkajs's ConsumerGroup.heartbeat; call after followKafkajsCoordinatorMoves() so this wraps its heartbeat. */
export function fixKafkajsHeartbeatHold(): boolean {
  if (applied) return true;
  applied = heartbeatBesideFetches(kafkajsConsumerGroupPrototype());
  return applied;
}

/** The patch on any prototype with ConsumerGroup's heartbeat (the unit test's, kafkajs's own loaded anew). */
export function heartbeatBesideFetches(proto: object): boolean {
  const p = proto as { heartbeat?: Heartbeat };
  const { heartbeat } = p;
  if (typeof heartbeat !== 'function') return false;
  const inFlight = new WeakMap<Member, InFlight>();
  const lateErrors = new WeakMap<Member, Omit<InFlight, 'answer' | 'waitEnds' | 'leftBehind'> & { error: unknown }>();

  p.heartbeat = function heartbeatWithinWait(this: Member, options: { interval?: unknown }): Promise<unknown> {
    const late = lateErrors.get(this);
    if (late) {
      lateErrors.delete(this);
      if (late.memberId === this.memberId && late.generationId === this.generationId) return Promise.reject(late.error);
    }
    let beat = inFlight.get(this);
    if (!beat) {
      // Not due (kafkajs sends one an interval after its last): kafkajs's own, which returns at once.
      if (!isDue(this, options)) return heartbeat.call(this, options);
      const sentAt = Date.now();
      const answer = heartbeat.call(this, options);
      const sent: InFlight = { answer, waitEnds: sentAt + HEARTBEAT_WAIT_MS, leftBehind: false, memberId: this.memberId, generationId: this.generationId };
      beat = sent;
      inFlight.set(this, sent);
      answer.then(
        () => {
          inFlight.delete(this);
          warnIfHeld(this, sent, sentAt);
        },
        (error: unknown) => {
          inFlight.delete(this);
          warnIfHeld(this, sent, sentAt, error);
          if (sent.leftBehind) lateErrors.set(this, { error, memberId: sent.memberId, generationId: sent.generationId });
        },
      );
    }
    return waitAtMost(beat);
  };
  return true;
}

/** Tells kafkajs's log of `member` that its coordinator held a heartbeat's answer HELD_HEARTBEAT_WARN_MS or more while it read on. */
function warnIfHeld(member: Member, beat: InFlight, sentAt: number, error?: unknown): void {
  const heldMs = Date.now() - sentAt;
  if (!beat.leftBehind || heldMs < HELD_HEARTBEAT_WARN_MS) return;
  const answer = error === undefined ? 'ok' : String((error as { type?: unknown } | null)?.type ?? (error as Error)?.message ?? error);
  member.logger?.warn('The group coordinator held a heartbeat; the consumer read on meanwhile', { groupId: member.groupId, memberId: beat.memberId, heldMs, answer });
}

/**
 * How early a heartbeat counts as due here. kafkajs reads the clock again a little later:
 * a heartbeat not due here but due there would be sent untracked, and waited for in full.
 * One taken as due here that kafkajs does not send is answered at once.
 */
const DUE_MARGIN_MS = 5;

/** Whether kafkajs may send a heartbeat now: a member, and its interval (less the margin) passed since its last request. */
function isDue(member: Member, options: { interval?: unknown }): boolean {
  if (!member.memberId) return false;
  return typeof member.lastRequest !== 'number' || typeof options?.interval !== 'number' || Date.now() >= member.lastRequest + options.interval - DUE_MARGIN_MS;
}

/** The heartbeat's answer, or nothing once its wait has ended (it is then left behind: a later error is kept for the next call). */
function waitAtMost(beat: InFlight): Promise<unknown> {
  const remaining = beat.waitEnds - Date.now();
  if (remaining <= 0) {
    beat.leftBehind = true;
    return Promise.resolve(undefined);
  }
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      beat.leftBehind = true;
      resolve(undefined);
    }, remaining);
    beat.answer.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
