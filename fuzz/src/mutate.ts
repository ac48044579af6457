import type { Rng } from './random.js';
import { varint, type Spot } from './writer.js';

/**
 * Mutations of a valid single-object record, aimed where readers have gone wrong:
 * block counts and sizes, lengths, varints, union and enum indexes, the header, the
 * ends. Each picks an edit of the original bytes; several edits are applied from the
 * last position backwards, so an edit never moves the bytes another one aims at.
 */

export const MUTATIONS = [
  'cut',
  'flip-bit',
  'set-byte',
  'extend',
  'insert',
  'delete',
  'count',
  'resize',
  'size',
  'length',
  'overlong',
  'out-of-range',
  'index',
  'boolean',
  'terminator',
  'duplicate',
  'fingerprint',
  'magic',
] as const;
export type Mutation = (typeof MUTATIONS)[number];

interface Edit {
  at: number;
  remove: number;
  insert: number[];
}

const HEADER = 10;
const HUGE = [2 ** 31, 2 ** 32, 2 ** 52, 2 ** 53 - 2, 2 ** 53, 2 ** 62, 2 ** 63 - 1];
const INTERESTING_BYTES = [0x00, 0x01, 0x02, 0x03, 0x7f, 0x80, 0x81, 0xfe, 0xff];

/** The record with `count` mutations applied, and their names (for the report); `spots` are positions in the record. */
export function mutate(record: Uint8Array, spots: readonly Spot[], rng: Rng, count: number, fingerprints: readonly bigint[]): { bytes: Buffer; applied: Mutation[] } {
  const edits: Edit[] = [];
  const applied: Mutation[] = [];
  for (let i = 0; i < count; i++) {
    const kind = rng.pick(MUTATIONS);
    const edit = editFor(kind, record, spots, rng, fingerprints);
    if (!edit) continue;
    edits.push(edit);
    applied.push(kind);
  }
  edits.sort((a, b) => b.at - a.at);
  let bytes = Buffer.from(record);
  let floor = Number.POSITIVE_INFINITY;
  for (const e of edits) {
    if (e.at + e.remove > floor) continue; // overlaps the edit after it
    bytes = Buffer.concat([bytes.subarray(0, e.at), Buffer.from(e.insert), bytes.subarray(Math.min(bytes.length, e.at + e.remove))]);
    floor = e.at;
  }
  return { bytes, applied };
}

function editFor(kind: Mutation, b: Uint8Array, spots: readonly Spot[], rng: Rng, fingerprints: readonly bigint[]): Edit | undefined {
  const of = (...kinds: Spot['kind'][]) => spots.filter((s) => kinds.includes(s.kind));
  const replace = (s: Spot, n: number | bigint): Edit => ({ at: s.at, remove: s.end - s.at, insert: varint(n) });
  const anywhere = () => rng.below(b.length);
  const body = () => HEADER + rng.below(Math.max(1, b.length - HEADER));
  switch (kind) {
    case 'cut': {
      const at = rng.chance(0.5) && spots.length > 0 ? rng.pick(spots).at + rng.below(2) : anywhere();
      return { at, remove: b.length - at, insert: [] };
    }
    case 'flip-bit': {
      const at = body();
      return { at, remove: 1, insert: [(b[at] ?? 0) ^ (1 << rng.below(8))] };
    }
    case 'set-byte':
      return { at: body(), remove: 1, insert: [rng.chance(0.5) ? rng.pick(INTERESTING_BYTES) : rng.below(256)] };
    case 'extend':
      return { at: b.length, remove: 0, insert: randomBytes(rng, 1 + rng.below(8)) };
    case 'insert':
      return { at: body(), remove: 0, insert: randomBytes(rng, 1 + rng.below(4)) };
    case 'delete':
      return { at: body(), remove: 1 + rng.below(4), insert: [] };
    case 'count': {
      const s = pickFrom(rng, of('count'));
      if (!s) return undefined;
      return replace(s, rng.pick([0, -s.value, s.value + 1, s.value - 1, -1, 1, ...HUGE, ...HUGE.map((h) => -h)]));
    }
    case 'resize': {
      // A block rewritten with a negative count and a size: right, a little off, negative, pointing back.
      const s = pickFrom(
        rng,
        of('count').filter((c) => c.value > 0 && c.blockBytes !== undefined),
      );
      if (!s) return undefined;
      const exact = s.blockBytes!;
      const size = rng.pick([exact, exact, exact - 1, exact + 1, 0, -1, -2, -(s.end - s.at) - 1, -(s.at + 1), exact + 64, 2 ** 31, 2 ** 53 - 2]);
      return { at: s.at, remove: s.end - s.at, insert: [...varint(-s.value), ...varint(size)] };
    }
    case 'size': {
      const s = pickFrom(rng, of('size'));
      if (!s) return undefined;
      return replace(s, rng.pick([s.value + 1, s.value - 1, 0, -1, -2, -(s.end - s.at) - 1, -s.value, s.value * 2 + 1, 2 ** 31, 2 ** 53 - 2]));
    }
    case 'length': {
      const s = pickFrom(rng, of('length'));
      if (!s) return undefined;
      const left = b.length - s.end;
      return replace(s, rng.pick([-1, -s.value - 1, s.value + 1, s.value - 1, left, left + 1, 2 ** 31, 2 ** 53 - 2, -(2 ** 53 - 2)]));
    }
    case 'overlong': {
      // The same number in more bytes than it needs: continuation bits, then zero groups.
      const s = pickFrom(
        rng,
        spots.filter((x) => x.kind !== 'boolean' && x.kind !== 'double'),
      );
      if (!s) return undefined;
      const bytes = varint(s.value);
      bytes[bytes.length - 1] = bytes[bytes.length - 1]! | 0x80;
      const pad = rng.pick([0, 1, 2, 5, 9]);
      for (let i = 0; i < pad; i++) bytes.push(0x80);
      bytes.push(rng.chance(0.8) ? 0 : 1);
      return { at: s.at, remove: s.end - s.at, insert: bytes };
    }
    case 'out-of-range': {
      const s = pickFrom(rng, of('long', 'int', 'length', 'index', 'count', 'size'));
      if (!s) return undefined;
      return replace(s, rng.pick([2n ** 53n - 1n, -(2n ** 53n - 1n), 2n ** 53n, 2n ** 63n - 1n, -(2n ** 63n), 2n ** 31n, -(2n ** 31n) - 1n, 2n ** 31n - 1n, -(2n ** 31n)]));
    }
    case 'index': {
      const s = pickFrom(rng, of('index'));
      if (!s) return undefined;
      return replace(s, rng.pick([-1, 2, 3, 64, 2 ** 31, s.value === 0 ? 1 : 0]));
    }
    case 'boolean': {
      const s = pickFrom(rng, of('boolean'));
      if (!s) return undefined;
      return { at: s.at, remove: 1, insert: [rng.pick([2, 3, 0x80, 0xff])] };
    }
    case 'terminator': {
      const s = pickFrom(rng, of('end'));
      if (!s) return undefined;
      return rng.chance(0.5) ? { at: s.at, remove: 1, insert: [] } : replace(s, rng.pick([1, -1, 2]));
    }
    case 'duplicate': {
      const s = pickFrom(rng, spots);
      if (!s) return undefined;
      const to = Math.min(b.length, s.end + rng.below(16));
      return { at: s.at, remove: 0, insert: Array.from(b.subarray(s.at, to)) };
    }
    case 'fingerprint': {
      if (rng.chance(0.4) && fingerprints.length > 0) {
        const other = Buffer.alloc(8);
        other.writeBigUInt64LE(rng.pick(fingerprints));
        return { at: 2, remove: 8, insert: Array.from(other) };
      }
      const at = 2 + rng.below(8);
      return { at, remove: 1, insert: [(b[at] ?? 0) ^ (1 << rng.below(8))] };
    }
    case 'magic':
      return { at: rng.below(2), remove: 1, insert: [rng.pick([0x00, 0xc3, 0x01, 0x02, 0xc2, 0x7b])] };
  }
}

function pickFrom<T>(rng: Rng, items: readonly T[]): T | undefined {
  return items.length === 0 ? undefined : rng.pick(items);
}

function randomBytes(rng: Rng, n: number): number[] {
  return Array.from({ length: n }, () => (rng.chance(0.5) ? rng.pick(INTERESTING_BYTES) : rng.below(256)));
}
