import type { Producer, Message } from 'kafkajs';
import { inSends } from '@banstream/platform';
import { SCHEMA_NAMES, type DlqRecord, type SchemaCatalog, type SubjectCountBatch } from '@banstream/schemas';
import type { Drained, Keyed } from '../engine/outbox.js';

export interface AggregatorTopics {
  events: string;
  subjects: string;
  counts: string;
  bans: string;
  dlq: string;
  policies: string;
  allowlist: string;
  alerts: string;
  baselines: string;
}

/**
 * Everything the aggregator writes, through idempotent producers: `bulk` for the
 * repartition and the DLQ, `ordered` (one request in flight) for counts, bans,
 * geographic alerts and baselines, whose order per key matters (a ban, then its
 * tombstone; an alert fired, then resolved). Each call resolves once
 * the records are acknowledged by all in-sync replicas, so a caller commits input
 * offsets only after its output is safe.
 */
export class Publisher {
  private readonly codecs;

  constructor(private readonly bulk: Producer, private readonly ordered: Producer, private readonly topics: AggregatorTopics, catalog: SchemaCatalog) {
    this.codecs = {
      ban: catalog.codec(SCHEMA_NAMES.ban),
      count: catalog.codec(SCHEMA_NAMES.windowCount),
      dlq: catalog.codec(SCHEMA_NAMES.dlqRecord),
      subjects: catalog.codec(SCHEMA_NAMES.subjectCountBatch),
      alert: catalog.codec(SCHEMA_NAMES.geoAlert),
      baseline: catalog.codec(SCHEMA_NAMES.geoBaseline),
    };
  }

  async decisions({ counts, bans, alerts, baselines }: Drained): Promise<void> {
    const topicMessages = [];
    if (counts.length > 0) topicMessages.push({ topic: this.topics.counts, messages: counts.map((c) => keyed(c, (v) => this.codecs.count.encode(v))) });
    if (bans.length > 0) topicMessages.push({ topic: this.topics.bans, messages: bans.map((b) => keyed(b, (v) => this.codecs.ban.encode(v))) });
    if (alerts.length > 0) topicMessages.push({ topic: this.topics.alerts, messages: alerts.map((a) => keyed(a, (v) => this.codecs.alert.encode(v))) });
    if (baselines.length > 0) topicMessages.push({ topic: this.topics.baselines, messages: baselines.map((b) => keyed(b, (v) => this.codecs.baseline.encode(v))) });
    if (topicMessages.length > 0) await this.ordered.sendBatch({ topicMessages, acks: -1 });
  }

  async repartition(batches: readonly { partition: number; batch: SubjectCountBatch }[]): Promise<void> {
    if (batches.length === 0) return;
    const messages = batches.map(({ partition, batch }) => ({ partition, key: `p${batch.sourcePartition}`, value: this.codecs.subjects.encode(batch) }));
    await this.bulk.send({ topic: this.topics.subjects, messages, acks: -1 });
  }

  /**
   * A publication of dead letters, in sends the broker takes (inSends); run again after
   * a failure, it goes on from the first send not acknowledged.
   */
  deadLetters(records: readonly DlqRecord[]): () => Promise<void> {
    const sends = inSends(records.map((r) => ({ key: r.key, value: this.codecs.dlq.encode(r) })));
    let sent = 0;
    return async () => {
      for (; sent < sends.length; sent++) await this.bulk.send({ topic: this.topics.dlq, messages: sends[sent]!, acks: -1 });
    };
  }
}

function keyed<T>(record: Keyed<T>, encode: (value: T) => Buffer): Message {
  return { key: record.key, value: record.value === null ? null : encode(record.value) };
}
