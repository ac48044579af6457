import { reasonOfError, type KafkaMessage } from '@banstream/kafka';
import { Occasional, type RecordWatch, type Trap } from '@banstream/platform';
import type { DlqRecord } from '@banstream/schemas';
import { deadLetter, stalledReason, type StageContext } from './context.js';

/** At most one log line per this long for failures and slow records an attacker may provoke at will. */
const LOG_EVERY_MS = 10_000;

/**
 * What a stage does around each input record so that no record stops its partition:
 * skip (and dead-letter once) a record a process stalled on before; mark the record
 * in hand for the watchdog while it is handled, and report it when it took longer
 * than the budget; dead-letter a record, or one event or entry of it, whose handling
 * threw, with the error's code or RECORD_HANDLING_FAILED.
 */
export class RecordGuard {
  private readonly watch: RecordWatch;
  private readonly failures = new Occasional(LOG_EVERY_MS);
  private readonly slowness = new Occasional(LOG_EVERY_MS);

  constructor(
    private readonly ctx: StageContext,
    private readonly stage: 'events' | 'subjects',
    private readonly topic: string,
  ) {
    this.watch = ctx.watch(topic);
  }

  /**
   * True when a process stalled on this record before: it is not to be handled. The
   * first time, it is dead-lettered into `dead` and its trap added to `met`, for
   * deadLettered() once the DLQ has it.
   */
  skipTrapped(partition: number, m: KafkaMessage, dead: DlqRecord[], met: Trap[]): boolean {
    const trap = this.watch.trapped(partition, m.offset);
    if (!trap) return false;
    this.ctx.metrics.quarantined.inc({ stage: this.stage });
    if (trap.deadLetteredAt === undefined) {
      dead.push(deadLetter(this.topic, partition, m.offset, m.key, m.value, stalledReason(trap), Date.now()));
      met.push(trap);
    }
    this.ctx.logger.warn({ topic: this.topic, partition, offset: m.offset, stalledPid: trap.pid, heldMs: trap.heldMs }, 'record skipped unhandled: a process stalled on it before');
    return true;
  }

  begin(partition: number, offset: string): void {
    this.watch.begin(partition, offset);
  }

  end(partition: number, offset: string): void {
    const heldMs = this.watch.end();
    if (heldMs <= this.watch.budgetMs) return;
    // Its effect is applied; a longer one would have cost the worker its life.
    this.ctx.metrics.slowRecords.inc({ stage: this.stage });
    const held = this.slowness.pass(Date.now());
    if (held !== undefined)
      this.ctx.logger.warn({ topic: this.topic, partition, offset, heldMs, budgetMs: this.watch.budgetMs, alsoSlowSinceLastLine: held }, 'record handled, but slower than its time budget');
  }

  /**
   * Dead-letters what threw: `value` is the record's bytes, or the one event or entry
   * that threw, written alone; `where` names it in the reason (`events[3]`).
   */
  failed(error: unknown, partition: number, m: KafkaMessage, value: Buffer | null, where: string | undefined, dead: DlqRecord[]): void {
    const reason = reasonOfError(error);
    if (where !== undefined) reason.message = `${where}: ${reason.message}`;
    dead.push(deadLetter(this.topic, partition, m.offset, m.key, value, reason, Date.now()));
    const held = this.failures.pass(Date.now());
    if (held !== undefined)
      this.ctx.logger.warn({ err: error, topic: this.topic, partition, offset: m.offset, where, alsoFailedSinceLastLine: held }, 'handling a record threw: dead-lettered, the partition goes on');
  }

  /** The dead letters of these traps are acknowledged: from now on their records are only skipped. */
  deadLettered(met: readonly Trap[]): void {
    for (const trap of met) this.watch.deadLettered(trap);
  }
}
