/**
 * Thrown by AvroCursor on anything a fast path leaves to avsc: bytes that run out, a
 * union branch other than `["null", T]`'s two, a long beyond exact doubles, a string
 * outside its bounds. The caller catches it and takes the slow path, which decides
 * (and words the error, if there is one).
 */
export const OFF_FAST_PATH = new Error('not on the fast path');

/**
 * Reads Avro binary primitives off a buffer for hand-written fast paths over one
 * known writer schema; any surprise throws OFF_FAST_PATH.
 */
export class AvroCursor {
  constructor(readonly buf: Buffer, public pos: number) {}

  long(): number {
    const buf = this.buf;
    let b = buf[this.pos++];
    if (b === undefined) throw OFF_FAST_PATH;
    if (b < 0x80) return (b >>> 1) ^ -(b & 1);
    let n = b & 0x7f;
    let scale = 0x80;
    do {
      b = buf[this.pos++];
      if (b === undefined || scale > 2 ** 49) throw OFF_FAST_PATH; // beyond exact doubles: the slow path decides
      n += (b & 0x7f) * scale;
      scale *= 0x80;
    } while (b >= 0x80);
    // Exact up to 2^53: larger values (beyond ±2^52, no real time or ASN) take the slow path.
    if (n > 2 ** 53) throw OFF_FAST_PATH;
    return n % 2 === 0 ? n / 2 : -(n + 1) / 2;
  }

  /** An array or map block's item count (a negative count is followed by the block's size). */
  blockCount(): number {
    const n = this.long();
    if (n >= 0) return n;
    this.long();
    return -n;
  }

  /** `["null", T]`: whether T follows. */
  union(): boolean {
    const branch = this.long();
    if (branch !== 0 && branch !== 1) throw OFF_FAST_PATH;
    return branch === 1;
  }

  /** A string's bytes, any content; returns where they start (they end at pos). */
  string(): number {
    const length = this.long();
    const from = this.pos;
    const to = from + length;
    if (length < 0 || to > this.buf.length) throw OFF_FAST_PATH;
    this.pos = to;
    return from;
  }

  /** An ASCII string of min to max bytes; returns where its bytes start (they end at pos). */
  ascii(min: number, max: number): number {
    const length = this.long();
    const from = this.pos;
    const to = from + length;
    if (length < min || length > max || to > this.buf.length) throw OFF_FAST_PATH;
    for (let i = from; i < to; i++) if (this.buf[i]! >= 0x80) throw OFF_FAST_PATH;
    this.pos = to;
    return from;
  }

  double(): number {
    if (this.pos + 8 > this.buf.length) throw OFF_FAST_PATH;
    const value = this.buf.readDoubleLE(this.pos);
    this.pos += 8;
    return value;
  }
}

/** Whether a[aFrom, aTo) and b[bFrom, bTo) hold the same bytes. */
export function sameBytes(a: Uint8Array, aFrom: number, aTo: number, b: Uint8Array, bFrom: number, bTo: number): boolean {
  if (aTo - aFrom !== bTo - bFrom) return false;
  for (let i = 0; i < aTo - aFrom; i++) if (a[aFrom + i] !== b[bFrom + i]) return false;
  return true;
}
