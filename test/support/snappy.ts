import { createRequire } from 'node:module';
import { CompressionTypes, type Message, type Producer } from '@banstream/kafka';

// The producer stands for anyone who may write to a topic (an edge's credentials, an
// operator's tool): it uses kafkajs's codec table directly, as the attacker's client would.
const { CompressionCodecs } = createRequire(import.meta.url)('kafkajs') as { CompressionCodecs: Record<number, () => unknown> };

/**
 * Raw Snappy (the block format of github.com/google/snappy, format_description.txt)
 * made of literals only: valid, uncompressed in effect. What a test needs to write a
 * Snappy batch as any producer could, without a native codec.
 */
export function snappyLiterals(data: Buffer): Buffer {
  const parts: Buffer[] = [varint(data.length)];
  for (let at = 0; at < data.length; at += 65_536) {
    const chunk = data.subarray(at, at + 65_536);
    const n = chunk.length - 1;
    if (n < 60) parts.push(Buffer.from([n << 2]));
    else if (n < 256) parts.push(Buffer.from([60 << 2, n]));
    else parts.push(Buffer.from([61 << 2, n & 0xff, n >> 8]));
    parts.push(chunk);
  }
  return Buffer.concat(parts);
}

function varint(value: number): Buffer {
  const bytes: number[] = [];
  while (value >= 0x80) {
    bytes.push((value & 0x7f) | 0x80);
    value >>>= 7;
  }
  bytes.push(value);
  return Buffer.from(bytes);
}

/** Sends `messages` as one Snappy batch (raw Snappy made of literals), as any producer could. */
export async function sendSnappy(producer: Producer, topic: string, messages: Message[]): Promise<void> {
  const refuse = CompressionCodecs[CompressionTypes.Snappy]!;
  CompressionCodecs[CompressionTypes.Snappy] = () => ({
    compress: async (encoder: { buffer: Buffer }) => snappyLiterals(encoder.buffer),
    decompress: async () => {
      throw new Error('this process reads no Snappy: only the reader under test may');
    },
  });
  try {
    await producer.send({ topic, acks: -1, compression: CompressionTypes.Snappy, messages });
  } finally {
    CompressionCodecs[CompressionTypes.Snappy] = refuse;
  }
}
