/** One Kafka record: the client network prefix and an encoded RequestEventBatch. */
export interface KeyedRecord {
  key: string;
  value: Buffer;
}

/**
 * Where the publisher's records go. The Kafka sink (kafka-sink.ts) is the real one;
 * tests of the accounting give a fake. `send` resolves once every record is
 * acknowledged by all in-sync replicas and rejects when they may not have been.
 */
export interface RecordSink {
  send(records: readonly KeyedRecord[]): Promise<void>;
  /** Stops connecting and sending; sends still waiting reject. */
  close(): Promise<void>;
}

/** A failure is permanent when retrying the same records cannot succeed. */
export interface SinkFailure {
  permanent: boolean;
}

/**
 * Kafka's own verdict, found anywhere in the error's chain (kafkajs wraps the
 * broker's error in retry errors): a protocol error the broker calls not
 * retriable (record too large, not authorised, corrupt) is permanent. Everything
 * else (connection refused, timeouts, leader moves, retries exhausted) may pass.
 */
export function isPermanentFailure(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current !== null && typeof current === 'object'; depth++) {
    const e = current as { name?: unknown; type?: unknown; retriable?: unknown; permanent?: unknown; originalError?: unknown; cause?: unknown };
    if (e.permanent === true) return true;
    if (e.name === 'KafkaJSProtocolError' && typeof e.type === 'string' && e.retriable === false) return true;
    current = e.originalError ?? e.cause;
  }
  return false;
}
