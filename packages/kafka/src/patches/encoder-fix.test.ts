import { describe, expect, it } from 'vitest';
import { ENCODER_MODULE, fixKafkajsEncoder, kafkajsEncoderClass, type KafkajsEncoder } from './encoder-fix.js';
import { freshKafkajsModule } from '../../../../test/support/kafkajs-module.js';

/** A second, unpatched copy of kafkajs's Encoder. */
function unpatchedKafkajsEncoderClass(): new (initialSize?: number) => KafkajsEncoder {
  return freshKafkajsModule(ENCODER_MODULE);
}

/** The Encoder methods kafkajs calls while encoding records. */
interface Writer extends KafkajsEncoder {
  writeVarInt(value: number): Writer;
  writeVarIntBytes(value: Buffer | string | null): Writer;
  writeInt32(value: number): Writer;
  writeInt8(value: number): Writer;
  writeString(value: string): Writer;
  writeBytes(value: Buffer): Writer;
}

/** The writes kafkajs makes while encoding records, with their awkward values. */
type Write = (e: Writer) => void;

function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

function writes(seed: number): Write[] {
  const random = prng(seed);
  const ints = [0, 1, -1, 63, 64, -64, -65, 127, 128, 8191, 8192, 2 ** 20, -(2 ** 20), 2 ** 30, 2 ** 31 - 1, -(2 ** 31)];
  const longs: unknown[] = [...ints, 2 ** 31, -(2 ** 31) - 1, 2 ** 40 + 3, -(2 ** 45), Number.MAX_SAFE_INTEGER, 1_764_000_000_000, '12345'];
  const out: Write[] = [];
  for (let i = 0; i < 400; i++) {
    const r = random();
    const int = ints[Math.floor(random() * ints.length)]!;
    const any = Math.floor((random() - 0.5) * 2 ** 32);
    if (r < 0.2)
      out.push(
        (e) => e.writeVarInt(int),
        (e) => e.writeVarInt(any),
      );
    else if (r < 0.35)
      out.push(
        (e) => e.writeUVarInt(Math.abs(int)),
        (e) => e.writeUVarInt(any >>> 0),
      );
    else if (r < 0.55) {
      const long = longs[Math.floor(random() * longs.length)];
      out.push(
        (e) => e.writeVarLong(long),
        (e) => e.writeVarLong(any),
      );
    } else if (r < 0.7) {
      const bytes = Buffer.alloc(Math.floor(random() * 3000), Math.floor(random() * 256));
      out.push((e) => e.writeVarIntBytes(bytes));
    } else if (r < 0.8)
      out.push(
        (e) => e.writeVarIntBytes(`key-${i}-é€`),
        (e) => e.writeVarIntBytes(null),
      );
    else if (r < 0.9)
      out.push(
        (e) => e.writeInt32(any),
        (e) => e.writeInt8(int & 0x7f),
      );
    else
      out.push(
        (e) => e.writeString(`topic-${i}`),
        (e) => e.writeBytes(Buffer.from([i & 255, 1, 2])),
      );
  }
  return out;
}

describe('fixKafkajsEncoder', () => {
  it('patches the installed kafkajs (a kafkajs upgrade that changes the Encoder fails here)', () => {
    expect(fixKafkajsEncoder()).toBe(true);
    expect(fixKafkajsEncoder()).toBe(true);
    expect(unpatchedKafkajsEncoderClass().prototype.writeUVarInt).not.toBe((kafkajsEncoderClass().prototype as Writer).writeUVarInt);
  });

  it('writes the same bytes as kafkajs 2.2.4, growing from a small buffer past several doublings', () => {
    fixKafkajsEncoder();
    const Patched = kafkajsEncoderClass();
    const Original = unpatchedKafkajsEncoderClass();
    for (const seed of [1, 2, 3, 4, 5]) {
      const patched = new Patched(16) as Writer;
      const original = new Original(16) as Writer;
      for (const write of writes(seed)) {
        write(patched);
        write(original);
      }
      expect(patched.offset).toBeGreaterThan(50_000);
      expect(patched.buffer.equals(original.buffer)).toBe(true);
    }
  });

  it('sizes and writes varlongs as kafkajs does, handing values outside 32 bits and non-integers to its own path', () => {
    fixKafkajsEncoder();
    const outcome = (Encoder: new () => KafkajsEncoder, value: unknown): string => {
      try {
        const size = (Encoder as unknown as { sizeOfVarLong(v: unknown): number }).sizeOfVarLong(value);
        return `${size} ${new Encoder().writeVarLong(value).buffer.toString('hex')}`;
      } catch (error) {
        return `threw ${(error as Error).name}`;
      }
    };
    for (const value of [0, -1, 300, -(2 ** 31), 2 ** 31 - 1, Number.NaN, 1.5, -0.5, 2 ** 53, 2 ** 31, -(2 ** 31) - 1, '7', null]) {
      expect(outcome(kafkajsEncoderClass(), value), String(value)).toBe(outcome(unpatchedKafkajsEncoderClass(), value));
    }
  });
});
