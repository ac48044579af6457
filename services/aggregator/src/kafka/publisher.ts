import { accessRefusal, cappedPublication, refusedRecord, sendUntilAnswered, type Producer, type Message, type KafkaRefusal, type RenewableProducer } from '@banstream/kafka';
import { SCHEMA_NAMES, type DlqRecord, type SchemaCatalog, type SubjectCountBatch } from '@banstream/schemas';
import type { Drained, Keyed } from '@banstream/engine';

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
  history: string;
}

/** The topics the aggregator writes, by name (a bounded label). */
export type Output = 'subjects' | 'counts' | 'bans' | 'alerts' | 'baselines' | 'history' | 'dlq';

/** A record Kafka refused for what it is: dead-lettered, or, refused by the DLQ itself, dropped. */
export interface Refused {
  output: Output;
  refusal: KafkaRefusal;
  deadLettered: boolean;
}

/** A publication: run again after a failure, it goes on from the first send not acknowledged. */
export type Publication = () => Promise<void>;

type Outgoing = Message & { topic: string; value: Buffer | null };

/**
 * Everything the aggregator writes, through idempotent producers: `bulk` for the
 * repartition and the DLQ, `ordered` (one request in flight) for counts, bans,
 * geographic alerts and baselines, whose order per key matters (a ban, then its
 * tombstone; an alert fired, then resolved). Each publication resolves once its
 * records are acknowledged by all in-sync replicas, so a caller commits input offsets
 * only after its output is safe. Publications go out in sends the broker takes
 * (cappedPublication), however much one tick or one record produced; a record Kafka
 * refuses for what it is goes to the DLQ through the same producer (`refused` is told),
 * and the publication goes on without it. Each producer is used by one publication at
 * a time (DecisionFlusher, SerialPublications), so it can be renewed between sends.
 */
export class Publisher {
  private readonly codecs;
  private readonly outputs: ReadonlyMap<string, Output>;

  constructor(
    private readonly bulk: RenewableProducer,
    private readonly ordered: RenewableProducer,
    private readonly topics: AggregatorTopics,
    catalog: SchemaCatalog,
    private readonly refused: (what: Refused) => void = () => undefined,
  ) {
    this.codecs = {
      ban: catalog.codec(SCHEMA_NAMES.ban),
      count: catalog.codec(SCHEMA_NAMES.windowCount),
      dlq: catalog.codec(SCHEMA_NAMES.dlqRecord),
      subjects: catalog.codec(SCHEMA_NAMES.subjectCountBatch),
      alert: catalog.codec(SCHEMA_NAMES.geoAlert),
      baseline: catalog.codec(SCHEMA_NAMES.geoBaseline),
      history: catalog.codec(SCHEMA_NAMES.banHistory),
    };
    const outputs: Output[] = ['subjects', 'counts', 'bans', 'alerts', 'baselines', 'history', 'dlq'];
    this.outputs = new Map(outputs.map((o) => [topics[o], o]));
  }

  /**
   * Counts, bans, alerts and baselines, each topic's records in their order. Bans go
   * first: when a tick's counts take several sends, its bans do not wait behind them.
   * A ban's history record goes in the ban's send (an expiry's, a publication before its
   * tombstone's: BanLifter). Should
   * one partition of that send fail and the process die, the replay of a new ban's
   * crossing sends its history again (decider.ts, BanLedger.claimHistory). In a send of
   * its own after the ban's, the history made the ban's median delay no shorter and its
   * p99 about twice as long (bans of the next flush waited for it).
   */
  decisions({ counts, bans, alerts, baselines, history }: Drained): Publication {
    const messages: Outgoing[] = [];
    for (const b of bans) messages.push(keyed(this.topics.bans, b, (v) => this.codecs.ban.encode(v)));
    for (const h of history) messages.push(keyed(this.topics.history, h, (v) => this.codecs.history.encode(v)));
    for (const c of counts) messages.push(keyed(this.topics.counts, c, (v) => this.codecs.count.encode(v)));
    for (const a of alerts) messages.push(keyed(this.topics.alerts, a, (v) => this.codecs.alert.encode(v)));
    for (const b of baselines) messages.push(keyed(this.topics.baselines, b, (v) => this.codecs.baseline.encode(v)));
    return this.publication(this.ordered, messages);
  }

  repartition(batches: readonly { partition: number; batch: SubjectCountBatch }[]): Publication {
    const topic = this.topics.subjects;
    return this.publication(
      this.bulk,
      batches.map(({ partition, batch }) => ({ topic, partition, key: `p${batch.sourcePartition}`, value: this.codecs.subjects.encode(batch) })),
    );
  }

  deadLetters(records: readonly DlqRecord[]): Publication {
    return this.publication(
      this.bulk,
      records.map((r) => this.deadLetterMessage(r)),
    );
  }

  private publication(producer: RenewableProducer, messages: readonly Outgoing[]): Publication {
    return cappedPublication(messages, {
      send: (part) => sendAll(producer.producer, part),
      renew: () => producer.renew(),
      refused: async (m, refusal) => {
        const output = this.outputs.get(m.topic) ?? 'dlq';
        if (output === 'dlq') {
          this.refused({ output, refusal, deadLettered: false });
          return;
        }
        const letter = this.deadLetterMessage(refusedRecord({ topic: m.topic, partition: m.partition }, m.key ?? null, m.value, refusal, Date.now()));
        let deadLettered = true;
        await cappedPublication([letter], { send: (part) => sendAll(producer.producer, part), renew: () => producer.renew(), refused: () => void (deadLettered = false) })();
        this.refused({ output, refusal, deadLettered });
      },
    });
  }

  private deadLetterMessage(record: DlqRecord): Outgoing {
    return { topic: this.topics.dlq, key: record.key, value: this.codecs.dlq.encode(record) };
  }
}

/** One send of messages for one or more topics, each topic's in their order. */
async function sendAll(producer: Producer, messages: readonly Outgoing[]): Promise<void> {
  const byTopic = new Map<string, Message[]>();
  for (const m of messages) {
    let list = byTopic.get(m.topic);
    if (!list) byTopic.set(m.topic, (list = []));
    list.push(m);
  }
  const topicMessages = [...byTopic].map(([topic, list]) => ({ topic, messages: list }));
  // A send can resolve without some partitions (their leader moved): their records go again, alone, by the same producer.
  const send = (parts: typeof topicMessages) => sendUntilAnswered((left) => producer.sendBatch({ topicMessages: left, acks: -1 }), parts);
  try {
    await send(topicMessages);
  } catch (error) {
    // Kafka does not say which topic of a send its principal may not write: each topic's
    // records alone, so the refusal names the one (rewriting the others is harmless: see cappedPublication).
    if (topicMessages.length < 2 || accessRefusal(error) === undefined) throw error;
    for (const part of topicMessages) await send([part]);
  }
}

function keyed<T>(topic: string, record: Keyed<T>, encode: (value: T) => Buffer): Outgoing {
  return { topic, key: record.key, value: record.value === null ? null : encode(record.value) };
}
