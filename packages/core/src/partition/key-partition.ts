/**
 * The partition of a keyed record, as Kafka's Java client and kafkajs's default
 * partitioner pick it: murmur2 of the key's UTF-8 bytes, made positive, modulo the
 * partition count. kafkajs 2.2.4 computes murmur2 with a BigInt-backed Long and a
 * Buffer per call (about 2 µs a key, plus garbage); this is the same arithmetic in
 * 32-bit integers. A unit test in platform (kafka/key-partitioner.test.ts) checks both agree.
 */
export function keyPartition(key: string | Uint8Array, partitions: number): number {
  return (murmur2(key) & 0x7fffffff) % partitions;
}

const SEED = 0x9747b28c;
const M = 0x5bd1e995;
const encoder = new TextEncoder();
/** Reused for short keys: a key is hashed at once and never kept. */
const scratch = new Uint8Array(256);

/** Kafka's murmur2 (org.apache.kafka.common.utils.Utils.murmur2), as a signed 32-bit integer. */
export function murmur2(key: string | Uint8Array): number {
  let data: Uint8Array;
  let length: number;
  if (typeof key !== 'string') {
    data = key;
    length = key.length;
  } else if (key.length <= scratch.length / 3) {
    // At most three UTF-8 bytes per UTF-16 unit: it always fits.
    data = scratch;
    length = encoder.encodeInto(key, scratch).written;
  } else {
    data = encoder.encode(key);
    length = data.length;
  }
  let h = SEED ^ length;
  const whole = length & ~3;
  for (let i = 0; i < whole; i += 4) {
    let k = data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24);
    k = Math.imul(k, M);
    k ^= k >>> 24;
    k = Math.imul(k, M);
    h = Math.imul(h, M) ^ k;
  }
  const rest = length & 3;
  if (rest > 0) {
    if (rest === 3) h ^= data[whole + 2]! << 16;
    if (rest >= 2) h ^= data[whole + 1]! << 8;
    h ^= data[whole]!;
    h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
}
