import { createRequire } from 'node:module';

/**
 * kafkajs 2.2.4 encodes every produced record through an Encoder that costs more than
 * the bytes it writes, which is most of what an edge gateway or the aggregator pays to
 * produce small records:
 * - it grows its buffer with Buffer.alloc, zero-filling memory it overwrites at once;
 * - every varint (two or more per record) becomes an array and then a Buffer;
 * - every record's timestamp delta goes through a BigInt-backed Long, twice (its size,
 *   then its bytes).
 * This replaces those methods of the Encoder with versions that write the same bytes: growth by Buffer.allocUnsafe (the Encoder only ever exposes the
 * bytes it wrote), varints written in place, and 32-bit timestamp deltas as plain
 * numbers (kafkajs's own path for anything wider). A unit test checks the bytes are
 * the same as kafkajs's own for the same writes. Applied once per process.
 */

/** The part of kafkajs's Encoder (src/protocol/encoder.js) the fix touches. */
export interface KafkajsEncoder {
  buf: Buffer;
  offset: number;
  readonly buffer: Buffer;
  ensureAvailable(length: number): void;
  writeUVarInt(value: number): KafkajsEncoder;
  writeVarLong(value: unknown): KafkajsEncoder;
}

interface KafkajsEncoderStatics {
  sizeOfVarInt(value: number): number;
  sizeOfVarLong(value: unknown): number;
}

const require = createRequire(import.meta.url);
export const ENCODER_MODULE = 'kafkajs/src/protocol/encoder.js';
let applied = false;

/**
 * Patches kafkajs's Encoder; returns whether it is patched. A kafkajs whose Encoder
 * lacks the expected methods is left alone (false): a unit test pins the version.
 */
export function fixKafkajsEncoder(): boolean {
  if (applied) return true;
  const Encoder = kafkajsEncoderClass() as unknown as Partial<KafkajsEncoderStatics>;
  const proto = (Encoder as { prototype: Partial<KafkajsEncoder> }).prototype;
  const originalVarLong = proto.writeVarLong;
  const originalSizeOfVarLong = Encoder.sizeOfVarLong;
  const sizeOfVarInt = Encoder.sizeOfVarInt;
  if (
    typeof proto.ensureAvailable !== 'function' ||
    typeof proto.writeUVarInt !== 'function' ||
    typeof originalVarLong !== 'function' ||
    typeof originalSizeOfVarLong !== 'function' ||
    typeof sizeOfVarInt !== 'function'
  )
    return false;

  proto.ensureAvailable = function ensureAvailable(this: KafkajsEncoder, length: number): void {
    const needed = this.offset + length;
    if (needed <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(nextPowerOfTwo(needed));
    this.buf.copy(grown, 0, 0, this.offset);
    this.buf = grown;
  };

  proto.writeUVarInt = function writeUVarInt(this: KafkajsEncoder, value: number): KafkajsEncoder {
    this.ensureAvailable(5);
    const buf = this.buf;
    let at = this.offset;
    // As kafkajs: the value's 32 bits, unsigned, 7 at a time, low first.
    while ((value & 0xffffff80) !== 0) {
      buf[at++] = (value & 0x7f) | 0x80;
      value >>>= 7;
    }
    buf[at++] = value & 0x7f;
    this.offset = at;
    return this;
  };

  proto.writeVarLong = function writeVarLong(this: KafkajsEncoder, value: unknown): KafkajsEncoder {
    // Within 32 bits, the 64-bit zigzag varint has the same bytes as the 32-bit one.
    if (isInt32(value)) return this.writeUVarInt((value << 1) ^ (value >> 31));
    return originalVarLong.call(this, value) as KafkajsEncoder;
  };

  Encoder.sizeOfVarLong = function sizeOfVarLong(this: unknown, value: unknown): number {
    return isInt32(value) ? sizeOfVarInt.call(this, value) : originalSizeOfVarLong.call(this, value);
  };
  applied = true;
  return true;
}

function isInt32(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= -0x80000000 && value <= 0x7fffffff;
}

/** kafkajs's growth rule (Encoder.nextPowerOfTwo), so buffers grow as they did. */
function nextPowerOfTwo(value: number): number {
  return 1 << (31 - Math.clz32(value) + 1);
}

/** The Encoder class kafkajs's protocol modules share. */
export function kafkajsEncoderClass(): { prototype: object; new (initialSize?: number): KafkajsEncoder } {
  return require(ENCODER_MODULE) as { prototype: object; new (initialSize?: number): KafkajsEncoder };
}
