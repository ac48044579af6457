import { randomUUID } from 'node:crypto';
import type { Producer } from '@banstream/kafka';
import { SCHEMA_NAMES, type AllowEntry, type AuditRecord, type Ban, type BanHistoryEntry, type PolicyRecord, type SchemaCatalog } from '@banstream/schemas';
import { withDeadline } from '@banstream/platform';
import type { ControlState } from './control-state.js';
import type { ProducerSlot } from './producer-slot.js';

export interface ControlTopics {
  policies: string;
  bans: string;
  allowlist: string;
  alerts: string;
  audit: string;
  events: string;
  history: string;
}

/** Who changed what, for the audit record. */
export interface ChangeContext {
  actor: string;
  requestId: string | null;
  /** The guard rail the actor's force flag overrode (a network wider than the limit), recorded in the audit. */
  forced?: string | null;
  /** A lift because the ban's end passed (the control plane's sweep of manual bans): `expire` in the ban history. */
  expiry?: boolean;
}

type Change =
  | { kind: 'policy'; key: string; value: PolicyRecord | null; before: PolicyRecord | undefined }
  | { kind: 'ban'; key: string; value: Ban | null; before: Ban | undefined }
  | { kind: 'allow'; key: string; value: AllowEntry | null; before: AllowEntry | undefined };

const ACTIONS = {
  policy: { create: 'policy.create', update: 'policy.update', delete: 'policy.delete' },
  ban: { create: 'ban.add', update: 'ban.replace', delete: 'ban.lift' },
  allow: { create: 'allowlist.add', update: 'allowlist.replace', delete: 'allowlist.remove' },
} as const;

/**
 * Every change the control plane makes: the record on its compacted topic (null: a
 * tombstone) and its AuditRecord on the audit topic, sent in one produce request
 * acknowledged by every in-sync replica, then applied to the local state so the
 * next read sees it. Changes are serialised, so a policy's versions go up by one.
 * A write not acknowledged within the bound is a retryable KAFKA_TIMEOUT (503):
 * the caller must not assume it happened, nor that it did not. The next change
 * waits until that send has settled (kafkajs retries it), so two changes to one key
 * cannot land out of order; a send that failed retires its producer (ProducerSlot).
 */
export class ChangeWriter {
  private chain: Promise<unknown> = Promise.resolve();
  /** The last change's send: the next change starts once it has settled. */
  private lastSend: { producer: Producer; settled: Promise<void> } | undefined;
  private readonly codecs;

  constructor(
    private readonly producers: ProducerSlot,
    private readonly topics: ControlTopics,
    catalog: SchemaCatalog,
    private readonly state: ControlState,
    private readonly clock: () => number,
    private readonly timeoutMs: number,
    private readonly onWritten: (action: string) => void = () => undefined,
  ) {
    this.codecs = {
      policy: catalog.codec(SCHEMA_NAMES.policy),
      ban: catalog.codec(SCHEMA_NAMES.ban),
      allow: catalog.codec(SCHEMA_NAMES.allowEntry),
      audit: catalog.codec(SCHEMA_NAMES.auditRecord),
      history: catalog.codec(SCHEMA_NAMES.banHistory),
    };
  }

  /** Runs `work` (which reads the current state, then writes) after every earlier one: one change at a time. */
  serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.chain.then(work, work);
    this.chain = run.catch(() => undefined).then(() => this.sendSettled());
    return run;
  }

  /**
   * Waits for the last send to settle, at most one more timeout; one still pending
   * then has its producer retired (disconnected, so it cannot land after the next
   * change), and the next change goes through a new one.
   */
  private async sendSettled(): Promise<void> {
    const last = this.lastSend;
    if (!last) return;
    const settled = await withDeadline(
      last.settled.then(() => true),
      this.timeoutMs,
      'the last change',
    ).catch(() => false);
    if (!settled) this.producers.retire(last.producer);
  }

  async write(change: Change, ctx: ChangeContext): Promise<AuditRecord> {
    const action = ACTIONS[change.kind][change.value === null ? 'delete' : change.before === undefined ? 'create' : 'update'];
    const audit: AuditRecord = {
      auditId: randomUUID(),
      actor: ctx.actor,
      action,
      target: change.key,
      before: change.before === undefined ? null : JSON.stringify(change.before),
      after: change.value === null ? null : JSON.stringify(change.value),
      at: this.clock(),
      requestId: ctx.requestId,
      forced: ctx.forced ?? null,
    };
    const [topic, value] = this.encode(change);
    const history = change.kind === 'ban' ? historyEntry(change.key, change.value, change.before, ctx, audit.at) : undefined;
    const producer = await withDeadline(this.producers.current(), this.timeoutMs, 'connecting to Kafka');
    const sent = producer.sendBatch({
      acks: -1,
      topicMessages: [
        { topic: this.topics.audit, messages: [{ key: ctx.actor, value: this.codecs.audit.encode(audit) }] },
        { topic, messages: [{ key: change.key, value }] },
        ...(history ? [{ topic: this.topics.history, messages: [{ key: change.key, value: this.codecs.history.encode(history) }] }] : []),
      ],
    });
    this.lastSend = {
      producer,
      settled: sent.then(
        () => undefined,
        () => this.producers.retire(producer),
      ),
    };
    await withDeadline(sent, this.timeoutMs, `writing ${audit.action} ${change.key}`);
    if (change.kind === 'policy') this.state.applyPolicy(change.key, change.value);
    else if (change.kind === 'ban') this.state.applyBan(change.key, change.value);
    else this.state.applyAllow(change.key, change.value);
    this.onWritten(action);
    return audit;
  }

  private encode(change: Change): [string, Buffer | null] {
    if (change.kind === 'policy') return [this.topics.policies, change.value && this.codecs.policy.encode(change.value)];
    if (change.kind === 'ban') return [this.topics.bans, change.value && this.codecs.ban.encode(change.value)];
    return [this.topics.allowlist, change.value && this.codecs.allow.encode(change.value)];
  }
}

/** The ban-history entry of a ban change: the ban placed, or the one lifted (or expired). */
function historyEntry(subject: string, value: Ban | null, before: Ban | undefined, ctx: ChangeContext, at: number): BanHistoryEntry | undefined {
  if (value !== null) return { subject, action: 'ban', at: value.startedAt, actor: ctx.actor, ban: value };
  if (before === undefined) return undefined;
  return ctx.expiry ? { subject, action: 'expire', at, actor: null, ban: before } : { subject, action: 'lift', at, actor: ctx.actor, ban: before };
}
