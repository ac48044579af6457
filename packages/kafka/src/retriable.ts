/**
 * Whether Kafka (through kafkajs) calls an error worth retrying: flagged `retriable`, or
 * kafkajs's "retries exceeded" wrapping one that was (its own short retry budget ran out
 * first, e.g. on LEADER_NOT_AVAILABLE for a topic just created).
 */
export function retriableKafkaError(error: unknown): boolean {
  const e = error as { retriable?: unknown; cause?: { retriable?: unknown } } | undefined;
  return e?.retriable === true || e?.cause?.retriable === true;
}
