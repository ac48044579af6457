/**
 * Bytes of messages sent at once. kafkajs writes the messages of one send to one
 * partition as one record batch, and the broker applies its size limit
 * (message.max.bytes, 1 MiB by default) to the whole batch: messages that each fit can
 * together make a batch refused for ever. A send under this bound leaves room for the
 * batch's and its records' own overhead; one message alone always goes.
 */
export const KAFKA_MAX_SEND_BYTES = 768 * 1024;

/** A message as kafkajs takes it: only its key and value count towards the bound. */
export interface SizedMessage {
  key?: Buffer | string | null;
  value: Buffer | null;
}

const bytesOf = (data: Buffer | string | null | undefined) => (data == null ? 0 : typeof data === 'string' ? Buffer.byteLength(data) : data.length);

/** Messages grouped into sends of at most `maxBytes` (a larger message goes alone), in order. */
export function inSends<M extends SizedMessage>(messages: readonly M[], maxBytes = KAFKA_MAX_SEND_BYTES): M[][] {
  const sends: M[][] = [];
  let current: M[] = [];
  let bytes = 0;
  for (const m of messages) {
    const size = bytesOf(m.value) + bytesOf(m.key);
    if (current.length > 0 && bytes + size > maxBytes) {
      sends.push(current);
      current = [];
      bytes = 0;
    }
    current.push(m);
    bytes += size;
  }
  if (current.length > 0) sends.push(current);
  return sends;
}

/** The records were refused by Kafka for what they are: sending them again can never succeed. */
export interface KafkaRefusal {
  /** Kafka's error type (MESSAGE_TOO_LARGE, INVALID_RECORD, …). */
  type: string;
  message: string;
}

/**
 * Protocol errors by which Kafka refuses the records themselves (their size, their
 * contents, their time): no retry and no new producer can make it take them. Every
 * other error, those kafkajs calls not retriable included (a broker not available, a
 * producer's sequence lost, an ACL missing), may pass with time, a new producer or an
 * operator: the records are kept and retried, and the publication shows as failing.
 */
const REFUSING_THE_RECORDS = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE', 'INVALID_RECORD', 'INVALID_TIMESTAMP']);

/**
 * Kafka's verdict that it will never take these records, found anywhere in the
 * error's chain (kafkajs wraps the broker's protocol error in its retrier's errors).
 * Undefined for anything a retry may cure.
 */
export function kafkaRefusal(error: unknown): KafkaRefusal | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current !== null && typeof current === 'object'; depth++) {
    const e = current as { name?: unknown; type?: unknown; message?: unknown; cause?: unknown; originalError?: unknown };
    if (e.name === 'KafkaJSProtocolError' && typeof e.type === 'string') {
      if (!REFUSING_THE_RECORDS.has(e.type)) return undefined;
      return { type: e.type, message: typeof e.message === 'string' ? e.message : e.type };
    }
    current = e.cause ?? e.originalError;
  }
  return undefined;
}

/** Errors after which an idempotent producer's sequences no longer match the broker's: only a new producer sends again. */
const PRODUCER_STATE_ERRORS = new Set(['OUT_OF_ORDER_SEQUENCE_NUMBER', 'UNKNOWN_PRODUCER_ID', 'INVALID_PRODUCER_EPOCH']);

/** The Kafka error type, found anywhere in the error's chain, when the producer's state is lost. */
export function producerStateLost(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current !== null && typeof current === 'object'; depth++) {
    const e = current as { type?: unknown; cause?: unknown; originalError?: unknown };
    if (typeof e.type === 'string' && PRODUCER_STATE_ERRORS.has(e.type)) return e.type;
    current = e.cause ?? e.originalError;
  }
  return undefined;
}

export interface CappedPublicationOptions<M> {
  /** Sends these messages, in this order; resolves once Kafka acknowledged them. */
  send(messages: M[]): Promise<void>;
  /** Told of a message Kafka refused alone; the publication then goes on without it. */
  refused(message: M, refusal: KafkaRefusal): Promise<void> | void;
  /** Replaces the producer `send` uses (RenewableProducer): its sequences can no longer be trusted. */
  renew?(): Promise<void>;
}

/**
 * A publication of `messages` in sends under KAFKA_MAX_SEND_BYTES, in order. Run again
 * after a failure, it goes on from the first send not acknowledged, so it can be
 * retried until done. A send Kafka refuses (kafkaRefusal) is never retried as it was:
 * its messages are sent again one by one, and one refused alone is handed to
 * `refused` and left behind, so no record can stop the publications behind it. The
 * producer is renewed before those single sends (kafkajs forgets it wrote the other
 * partitions of the refused send: RenewableProducer) and after an error saying its
 * state is lost; what it had written may then be written twice, which every reader of
 * banstream's output takes (counts and bans are latest-wins, repartition entries are
 * applied once by their offset and seq).
 */
export function cappedPublication<M extends SizedMessage>(messages: readonly M[], options: CappedPublicationOptions<M>): () => Promise<void> {
  const sends = inSends(messages);
  let next = 0;
  return async () => {
    while (next < sends.length) {
      const part = sends[next]!;
      try {
        await options.send(part);
      } catch (error) {
        const refusal = kafkaRefusal(error);
        if (refusal === undefined) {
          if (producerStateLost(error)) await options.renew?.();
          throw error;
        }
        if (part.length > 1) {
          // Which one Kafka refused is not said: each alone, in order, from a new producer.
          await options.renew?.();
          sends.splice(next, 1, ...part.map((m) => [m]));
          continue;
        }
        await options.refused(part[0]!, refusal);
      }
      next++;
    }
  };
}
