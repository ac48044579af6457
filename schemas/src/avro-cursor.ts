/**
 * Thrown by AvroCursor when the bytes break a rule of the contract (schemas/README.md,
 * "Accepted bytes"), with the rule in `cursor.problem`; hand-written fast paths also
 * throw it for anything they leave to the slow path. One shared value: throwing it
 * allocates nothing, so refusing hostile input costs what accepting it does.
 */
export const OFF_FAST_PATH = new Error('not on the fast path');

const INT_MIN = -(2 ** 31);
const INT_MAX = 2 ** 31 - 1;
/** The longs a JS number holds exactly and avsc reads: ±(2^53 − 2) (its writer is exact to ±2^52). */
export const LONG_LIMIT = 2 ** 53 - 2;

/**
 * Reads Avro binary off a buffer, enforcing the contract's rules for each primitive:
 * varints minimal and within range, lengths inside the buffer, union branches and
 * enum indexes that exist, block counts no larger than the bytes left. It is the one
 * implementation of those rules: the gateway's scan and the aggregator's reader call
 * its short names (long, string, blockCount…), and avsc's own readers call the
 * Tap-named methods below (readLong, readString…) when the decode guard hands them a
 * cursor instead of avsc's Tap. One class for both, so the hot methods see one shape.
 * The position only ever moves forward, and never past the end.
 */
export class AvroCursor {
  /** The rule the bytes broke, when a method threw OFF_FAST_PATH. */
  problem = '';
  /** Where the block last opened by block() must end; -1 when it gave no size. */
  blockEnd = -1;

  constructor(
    readonly buf: Buffer,
    public pos: number,
  ) {}

  /** Records the broken rule and throws. */
  refuse(problem: string): never {
    this.problem = problem;
    throw OFF_FAST_PATH;
  }

  /** A zigzag varint: at most 8 bytes, minimal (no trailing zero byte), within ±LONG_LIMIT. */
  long(): number {
    const buf = this.buf;
    let pos = this.pos;
    let b = buf[pos++];
    if (b === undefined) return this.refuse('a long runs past the end');
    if (b < 0x80) {
      this.pos = pos;
      return (b >>> 1) ^ -(b & 1);
    }
    // Up to 4 bytes (28 bits) in integer arithmetic, as avsc does: most lengths and counts.
    let n = b & 0x7f;
    let shift = 7;
    do {
      b = buf[pos++];
      if (b === undefined) return this.refuse('a long runs past the end');
      n |= (b & 0x7f) << shift;
      shift += 7;
    } while (b >= 0x80 && shift < 28);
    if (b < 0x80) {
      if (b === 0) return this.refuse('a long is not minimally encoded');
      this.pos = pos;
      return (n >>> 1) ^ -(n & 1);
    }
    // Then in doubles (timestamps take 6 bytes), exact below 2^53.
    let scale = 2 ** 28;
    do {
      b = buf[pos++];
      if (b === undefined) return this.refuse('a long runs past the end');
      if (scale === 2 ** 49) {
        // The 8th byte would make n inexact as a double: taken apart.
        this.pos = pos;
        return this.longTail(n, b);
      }
      n += (b & 0x7f) * scale;
      scale *= 0x80;
    } while (b >= 0x80);
    if (b === 0) return this.refuse('a long is not minimally encoded');
    this.pos = pos;
    return n % 2 === 0 ? n / 2 : -(n + 1) / 2;
  }

  /** The last byte of an 8-byte varint: `low` holds the 49 bits before it. */
  private longTail(low: number, b: number): number {
    // A 9th byte, or bits past 2^54, is beyond LONG_LIMIT; minimal or not, refused.
    if (b >= 0x20) return this.refuse('a long is out of range');
    if (b === 0) return this.refuse('a long is not minimally encoded');
    const negative = low % 2 === 1;
    const half = (low - (negative ? 1 : 0)) / 2 + b * 2 ** 48;
    const value = negative ? -half - 1 : half;
    if (value > LONG_LIMIT || value < -LONG_LIMIT) return this.refuse('a long is out of range');
    return value;
  }

  /** A long within 32 bits. */
  int(): number {
    const n = this.long();
    if (n < INT_MIN || n > INT_MAX) return this.refuse('an int is out of range');
    return n;
  }

  /** One byte, 0 or 1. */
  boolean(): boolean {
    const b = this.buf[this.pos];
    if (b !== 0 && b !== 1) return this.refuse(b === undefined ? 'a boolean runs past the end' : 'a boolean byte is neither 0 nor 1');
    this.pos++;
    return b === 1;
  }

  double(): number {
    if (this.pos + 8 > this.buf.length) return this.refuse('a double runs past the end');
    const value = this.buf.readDoubleLE(this.pos);
    this.pos += 8;
    return value;
  }

  float(): number {
    if (this.pos + 4 > this.buf.length) return this.refuse('a float runs past the end');
    const value = this.buf.readFloatLE(this.pos);
    this.pos += 4;
    return value;
  }

  /** A string's or bytes' length, then its bytes, any content; returns where they start (they end at pos). */
  string(): number {
    const length = this.long();
    if (length < 0) return this.refuse('a length is negative');
    if (length > this.buf.length - this.pos) return this.refuse('a length runs past the end');
    const from = this.pos;
    this.pos += length;
    return from;
  }

  /** An ASCII string of min to max bytes; returns where its bytes start (they end at pos). Fast paths only. */
  ascii(min: number, max: number): number {
    const length = this.long();
    const from = this.pos;
    const to = from + length;
    if (length < min || length > max || to > this.buf.length) throw OFF_FAST_PATH;
    for (let i = from; i < to; i++) if (this.buf[i]! >= 0x80) throw OFF_FAST_PATH;
    this.pos = to;
    return from;
  }

  /** `["null", T]`: whether T follows. */
  union(): boolean {
    const b = this.buf[this.pos];
    if (b === 0 || b === 2) {
      this.pos++;
      return b === 2;
    }
    return this.branch(2) === 1;
  }

  /** A union branch or an enum index: 0 to count − 1. */
  branch(count: number): number {
    const index = this.long();
    if (index < 0 || index >= count) return this.refuse(`index ${index} is not below ${count}`);
    return index;
  }

  /**
   * The fast paths' block header: an item count, 0 at the end. A negative count (a
   * block with its byte size) is left to the slow path, which checks the size.
   */
  blockCount(): number {
    const n = this.long();
    if (n < 0) throw OFF_FAST_PATH;
    if (n > this.buf.length - this.pos) return this.refuse(`a block of ${n} items is longer than the bytes left`);
    return n;
  }

  /**
   * Any block header: the item count, 0 at the end. A negative count −n is n items
   * followed by their size in bytes; blockEnd says where they must end (endBlock checks).
   * Every item takes a byte at least (the catalog refuses other arrays), so a count
   * beyond the bytes left is refused at once.
   */
  block(): number {
    const n = this.long();
    if (n >= 0) {
      if (n > this.buf.length - this.pos) return this.refuse(`a block of ${n} items is longer than the bytes left`);
      this.blockEnd = -1;
      return n;
    }
    const size = this.long();
    if (size < 0) return this.refuse('a block size is negative');
    if (size > this.buf.length - this.pos) return this.refuse('a block size runs past the end');
    if (-n > size) return this.refuse(`a block of ${-n} items is longer than its size`);
    this.blockEnd = this.pos + size;
    return -n;
  }

  /** After a block's items: they must have taken exactly the size the block gave. */
  endBlock(end: number): void {
    if (end >= 0 && this.pos !== end) this.refuse(`a block's items end ${Math.abs(end - this.pos)} byte(s) ${this.pos < end ? 'before' : 'after'} the end its size gives`);
  }

  // avsc's Tap vocabulary, for avsc's own type readers (decode-guard.ts): the same rules.

  readBoolean(): boolean {
    return this.boolean();
  }
  skipBoolean(): void {
    this.boolean();
  }
  readInt(): number {
    return this.int();
  }
  skipInt(): void {
    this.int();
  }
  readLong(): number {
    return this.long();
  }
  skipLong(): void {
    this.long();
  }
  readFloat(): number {
    return this.float();
  }
  skipFloat(): void {
    this.float();
  }
  readDouble(): number {
    return this.double();
  }
  skipDouble(): void {
    this.double();
  }
  readString(): string {
    const from = this.string();
    return (this.buf as unknown as Utf8Slicing).utf8Slice(from, this.pos);
  }
  skipString(): void {
    this.string();
  }
  /** A copy: a decoded value must not keep the whole input alive. */
  readBytes(): Buffer {
    const from = this.string();
    return Buffer.from(this.buf.subarray(from, this.pos));
  }
  skipBytes(): void {
    this.string();
  }
  readFixed(size: number): Buffer {
    const from = this.pos;
    this.skipFixed(size);
    return Buffer.from(this.buf.subarray(from, this.pos));
  }
  skipFixed(size: number): void {
    if (size > this.buf.length - this.pos) this.refuse('a fixed runs past the end');
    this.pos += size;
  }
  isValid(): boolean {
    return this.pos <= this.buf.length;
  }
}

interface Utf8Slicing {
  utf8Slice(start: number, end: number): string;
}

/**
 * What a decoded Avro map is read into: an object whose prototype chain ends without
 * Object.prototype, so a key may be `__proto__` or `constructor` and lookups find only
 * keys the bytes gave; unlike Object.create(null), filling it is as fast as `{}`.
 */
export const MapObject = function MapObject() {} as unknown as new () => Record<string, unknown>;
MapObject.prototype = Object.create(null) as object;

/** Whether a[aFrom, aTo) and b[bFrom, bTo) hold the same bytes. */
export function sameBytes(a: Uint8Array, aFrom: number, aTo: number, b: Uint8Array, bFrom: number, bTo: number): boolean {
  if (aTo - aFrom !== bTo - bFrom) return false;
  for (let i = 0; i < aTo - aFrom; i++) if (a[aFrom + i] !== b[bFrom + i]) return false;
  return true;
}
