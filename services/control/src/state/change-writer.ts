import { randomUUID } from 'node:crypto';
import { sendUntilAnswered, type Producer } from '@banstream/kafka';
import { SCHEMA_NAMES, type AllowEntry, type AuditRecord, type Ban, type BanHistoryEntry, type FeedRecord, type PolicyRecord, type SchemaCatalog } from '@banstream/schemas';
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
  feeds: string;
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
  | { kind: 'allow'; key: string; value: AllowEntry | null; before: AllowEntry | undefined }
  | { kind: 'feed'; key: string; value: FeedRecord | null; before: FeedRecord | undefined };

/** A change's record without an audit record of its own: part of a batch (writeBatch) audited as a whole. */
export type BatchChange = { kind: 'ban'; key: string; value: Ban | null } | { kind: 'feed'; key: string; value: FeedRecord | null };

/** The one audit record of a batch: what was done as a whole (a feed refresh's counts), not each record. */
export interface BatchAudit {
  action: string;
  target: string;
  before: string | null;
  after: string | null;
}

const ACTIONS = {
  policy: { create: 'policy.create', update: 'policy.update', delete: 'policy.delete' },
  ban: { create: 'ban.add', update: 'ban.replace', delete: 'ban.lift' },
  allow: { create: 'allowlist.add', update: 'allowlist.replace', delete: 'allowlist.remove' },
  feed: { create: 'feed.add', update: 'feed.replace', delete: 'feed.remove' },
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
      feed: catalog.codec(SCHEMA_NAMES.feed),
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
    const audit = this.auditRecord(
      { action, target: change.key, before: change.before === undefined ? null : JSON.stringify(change.before), after: change.value === null ? null : JSON.stringify(change.value) },
      ctx,
    );
    await this.send(audit, [change], ctx);
    return audit;
  }

  /**
   * Many records and one audit record saying what they are as a whole, in one produce
   * request: a feed refresh writes thousands of bans, and the audit trail records its
   * counts, not each entry. Callers keep a batch small enough for one request (FEED_BATCH).
   */
  async writeBatch(changes: readonly BatchChange[], summary: BatchAudit, ctx: ChangeContext): Promise<AuditRecord> {
    const audit = this.auditRecord(summary, ctx);
    await this.send(audit, changes, ctx);
    return audit;
  }

  private auditRecord(summary: BatchAudit, ctx: ChangeContext): AuditRecord {
    return { auditId: randomUUID(), actor: ctx.actor, ...summary, at: this.clock(), requestId: ctx.requestId, forced: ctx.forced ?? null };
  }

  private async send(audit: AuditRecord, changes: readonly (Change | BatchChange)[], ctx: ChangeContext): Promise<void> {
    const byTopic = new Map<string, { key: string; value: Buffer | null }[]>();
    const add = (topic: string, key: string, value: Buffer | null) => {
      let messages = byTopic.get(topic);
      if (!messages) byTopic.set(topic, (messages = []));
      messages.push({ key, value });
    };
    for (const change of changes) {
      const [topic, value] = this.encode(change);
      add(topic, change.key, value);
      if (change.kind !== 'ban') continue;
      // Every ban and lift (feeds' too) is kept in the ban history, in the same request.
      const before = 'before' in change ? change.before : this.state.bans.get(change.key);
      const entry = historyEntry(change.key, change.value, before, ctx, audit.at);
      if (entry) add(this.topics.history, change.key, this.codecs.history.encode(entry));
    }
    const producer = await withDeadline(this.producers.current(), this.timeoutMs, 'connecting to Kafka');
    const topicMessages = [{ topic: this.topics.audit, messages: [{ key: audit.actor, value: this.codecs.audit.encode(audit) }] }, ...[...byTopic].map(([topic, messages]) => ({ topic, messages }))];
    // A send can resolve without some partitions (their leader moved): their records go again, alone, by the same producer.
    const sent = sendUntilAnswered((left) => producer.sendBatch({ acks: -1, topicMessages: left }), topicMessages);
    this.lastSend = {
      producer,
      settled: sent.then(
        () => undefined,
        () => this.producers.retire(producer),
      ),
    };
    await withDeadline(sent, this.timeoutMs, `writing ${audit.action} ${audit.target}`);
    for (const change of changes) {
      if (change.kind === 'policy') this.state.applyPolicy(change.key, change.value);
      else if (change.kind === 'ban') this.state.applyBan(change.key, change.value);
      else if (change.kind === 'feed') this.state.applyFeed(change.key, change.value);
      else this.state.applyAllow(change.key, change.value);
    }
    this.onWritten(audit.action);
  }

  private encode(change: Change | BatchChange): [string, Buffer | null] {
    if (change.kind === 'policy') return [this.topics.policies, change.value && this.codecs.policy.encode(change.value)];
    if (change.kind === 'ban') return [this.topics.bans, change.value && this.codecs.ban.encode(change.value)];
    if (change.kind === 'feed') return [this.topics.feeds, change.value && this.codecs.feed.encode(change.value)];
    return [this.topics.allowlist, change.value && this.codecs.allow.encode(change.value)];
  }
}

/** The ban-history entry of a ban change: the ban placed, or the one lifted (or expired). */
function historyEntry(subject: string, value: Ban | null, before: Ban | undefined, ctx: ChangeContext, at: number): BanHistoryEntry | undefined {
  if (value !== null) return { subject, action: 'ban', at: value.startedAt, actor: ctx.actor, ban: value };
  if (before === undefined) return undefined;
  return ctx.expiry ? { subject, action: 'expire', at, actor: null, ban: before } : { subject, action: 'lift', at, actor: ctx.actor, ban: before };
}
