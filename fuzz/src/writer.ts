import type { Node } from './reference.js';
import type { Rng } from './random.js';

/**
 * Encodes valid values the way any correct Avro writer may: arrays and maps split into
 * one to three blocks, some written with a negative count and their byte size. It
 * notes where each varint and block lies (spots), so mutations can aim at them.
 */

export type SpotKind = 'long' | 'int' | 'length' | 'count' | 'size' | 'end' | 'index' | 'boolean' | 'double';

export interface Spot {
  kind: SpotKind;
  /** Bytes [at, end) of the input. */
  at: number;
  end: number;
  /** The number written there. */
  value: number;
  /** For a block's count: how many bytes its items take. */
  blockBytes?: number;
}

export interface Traced {
  bytes: Uint8Array;
  spots: Spot[];
}

/** Zigzag varint of an integer within ±2^63 (BigInt past 2^30, so any long fits). */
export function varint(n: number | bigint): number[] {
  if (typeof n === 'number' && n >= -(2 ** 30) && n < 2 ** 30) {
    let z = n >= 0 ? n * 2 : -n * 2 - 1;
    const out: number[] = [];
    while (z >= 0x80) {
      out.push((z & 0x7f) | 0x80);
      z >>>= 7;
    }
    out.push(z);
    return out;
  }
  const v = BigInt(n);
  let z = v >= 0n ? v << 1n : (-v << 1n) - 1n;
  const out: number[] = [];
  while (z >= 0x80n) {
    out.push(Number(z & 0x7fn) | 0x80);
    z >>= 7n;
  }
  out.push(Number(z));
  return out;
}

class Writer {
  private buf = Buffer.allocUnsafe(256);
  length = 0;
  readonly spots: Spot[] = [];

  get bytes(): Buffer {
    return this.buf.subarray(0, this.length);
  }

  private room(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.length + n));
    this.buf.copy(bigger, 0, 0, this.length);
    this.buf = bigger;
  }

  number(kind: SpotKind, n: number): void {
    const at = this.length;
    this.raw(varint(n));
    this.spots.push({ kind, at, end: this.length, value: n });
  }

  raw(bytes: ArrayLike<number>): void {
    this.room(bytes.length);
    for (let i = 0; i < bytes.length; i++) this.buf[this.length++] = bytes[i]!;
  }

  append(child: Writer): void {
    const offset = this.length;
    this.room(child.length);
    child.buf.copy(this.buf, this.length, 0, child.length);
    this.length += child.length;
    for (const s of child.spots) this.spots.push({ ...s, at: s.at + offset, end: s.end + offset });
  }
}

/** `canonical`: as avsc writes (one block of positive count per array or map), else blocks as `rng` chooses. */
export function encodeTraced(node: Node, value: unknown, rng: Rng, canonical = false): Traced {
  const w = new Writer();
  write(node, value, w, canonical ? undefined : rng);
  return { bytes: Buffer.from(w.bytes), spots: w.spots };
}

function write(node: Node, value: unknown, w: Writer, rng: Rng | undefined): void {
  switch (node.kind) {
    case 'null':
      return;
    case 'boolean': {
      w.spots.push({ kind: 'boolean', at: w.length, end: w.length + 1, value: value ? 1 : 0 });
      w.raw([value ? 1 : 0]);
      return;
    }
    case 'int':
      return w.number('int', value as number);
    case 'long':
      return w.number('long', value as number);
    case 'float': {
      const b = Buffer.alloc(4);
      b.writeFloatLE(value as number);
      return w.raw(b);
    }
    case 'double': {
      const b = Buffer.alloc(8);
      b.writeDoubleLE(value as number);
      w.spots.push({ kind: 'double', at: w.length, end: w.length + 8, value: value as number });
      return w.raw(b);
    }
    case 'bytes':
    case 'string': {
      const b = typeof value === 'string' ? Buffer.from(value, 'utf8') : (value as Uint8Array);
      w.number('length', b.length);
      return w.raw(b);
    }
    case 'fixed':
      return w.raw(value as Uint8Array);
    case 'enum':
      return w.number('index', node.symbols.indexOf(value as string));
    case 'union': {
      const i = value === null ? node.branches.findIndex((b) => b.kind === 'null') : node.branches.findIndex((b) => b.kind !== 'null');
      w.number('index', i);
      return write(node.branches[i]!, value, w, rng);
    }
    case 'record':
      for (const f of node.fields) write(f.type, (value as Record<string, unknown>)[f.name], w, rng);
      return;
    case 'array':
      return writeBlocks(
        (value as unknown[]).map((v) => (c: Writer) => write(node.items, v, c, rng)),
        w,
        rng,
      );
    case 'map':
      return writeBlocks(
        Object.keys(value as object).map((k) => (c: Writer) => {
          write({ kind: 'string' }, k, c, rng);
          write(node.values, (value as Record<string, unknown>)[k], c, rng);
        }),
        w,
        rng,
      );
  }
}

function writeBlocks(items: ((w: Writer) => void)[], w: Writer, rng: Rng | undefined): void {
  let i = 0;
  while (i < items.length) {
    const n = rng ? 1 + rng.below(items.length - i) : items.length;
    const block = new Writer();
    for (const item of items.slice(i, i + n)) item(block);
    const sized = rng?.chance(0.3) ?? false;
    w.number('count', sized ? -n : n);
    w.spots.at(-1)!.blockBytes = block.length;
    if (sized) w.number('size', block.length);
    w.append(block);
    i += n;
  }
  w.number('end', 0);
}
