import { BanstreamError, isBanstreamError } from '../errors.js';
import { EPOCH_LIMIT, EPOCH_MASK, W_EPOCH, W_H1, W_H2, windowLayout, type WindowLayout, type WindowConfig } from './config.js';
import { countAt, firstAt, lastAt } from './slot.js';
import { decodeExactSection, encodeExactSection, exactSectionBytes } from './snapshot-exact.js';
import { SlotTable } from './table.js';
import { WidePool } from './wide.js';

/**
 * Snapshot format, version 3, all little-endian. The body holds only the live slots, as
 * their words (slot layout in index.ts), then the wide entries those slots point to,
 * then the exact keys' exact offsets (snapshot-exact.ts).
 *
 * | offset | size | field |
 * |---|---|---|
 * | 0  | 4 | magic "BSWN" |
 * | 4  | 2 | version (3) |
 * | 6  | 2 | slot stride in 32-bit words (must match the config) |
 * | 8  | 2 | buckets N |
 * | 10 | 2 | reserved, 0 |
 * | 12 | 4 | fingerprint seed |
 * | 16 | 8 | windowMs (f64) |
 * | 24 | 8 | graceMs (f64) |
 * | 32 | 8 | maxSkewMs (f64) |
 * | 40 | 8 | origin bucket (f64; NaN for a store that never counted) |
 * | 48 | 4 | live slots S |
 * | 52 | 4 | wide entries E |
 * | 56 | 4 | initial capacity |
 * | 60 | 4 | FNV-1a 32 of every other byte |
 * | 64 | 8 | exactFrom (f64; Infinity when off) |
 * | 72 | S × stride × 4 | slot words; a wide slot's entry word is its index among the E entries |
 * | …  | E × R × 8 | wide counts (f64) |
 * | …  | … | exact section (snapshot-exact.ts) |
 *
 * Version 2 (no exactFrom, no exact section, a 64-byte header) still restores, as a store
 * without exactFrom: it is version 3 without the new parts. Version 1 (16-bit spans, no
 * shapes) is rejected. Restore checks everything it can (checksum, lengths, config,
 * epochs, spans, wide references, duplicate fingerprints, exact lanes against their
 * counts), so a damaged image is a BanstreamError, not a store that silently miscounts.
 */

const MAGIC = 0x4e575342; // "BSWN" as a little-endian u32
const VERSION = 3;
/** Header bytes by version; version 2 lacks exactFrom. */
const HEADERS: Record<number, number> = { 2: 64, 3: 72 };
const HEADER = HEADERS[VERSION]!;

export interface StoreState {
  layout: WindowLayout;
  origin: number;
  table: SlotTable;
  wide: WidePool;
}

export interface RestoredState {
  config: WindowConfig;
  origin: number;
  table: SlotTable;
  wide: WidePool;
}

function checksum(bytes: Uint8Array): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) {
    if (i === 60) i = 64;
    if (i >= bytes.length) break;
    h = Math.imul(h ^ bytes[i]!, 0x01000193);
  }
  return h >>> 0;
}

function corrupt(reason: string, cause?: unknown): BanstreamError {
  return new BanstreamError('WINDOW_SNAPSHOT_CORRUPT', `window snapshot rejected: ${reason}`, { cause, details: { reason } });
}

export function encodeSnapshot(state: StoreState): Uint8Array {
  const { layout, table, wide } = state;
  const stride = layout.strideWords;
  const ring = layout.ring;
  const wideAt = HEADER + table.size * stride * 4;
  const exactAt = wideAt + wide.size * ring * 8;
  // The pool entry of each wide slot, in the order they are written.
  const wideOrder = new Int32Array(wide.size);
  for (let i = 0, e = 0; i < table.capacity; i++) {
    if (table.words[i * stride + W_EPOCH]! < 0) wideOrder[e++] = table.words[i * stride + layout.countWord]!;
  }
  const out = new Uint8Array(exactAt + exactSectionBytes(wide, wideOrder));
  const view = new DataView(out.buffer);
  encodeExactSection(view, exactAt, wide, wideOrder);
  let n = 0;
  let e = 0;
  for (let i = 0; i < table.capacity; i++) {
    const base = i * stride;
    const ew = table.words[base + W_EPOCH]!;
    if (ew === 0) continue;
    const at = HEADER + n * stride * 4;
    for (let w = 0; w < stride; w++) view.setInt32(at + w * 4, table.words[base + w]!, true);
    if (ew < 0) {
      const entry = table.words[base + layout.countWord]!;
      for (let k = 0; k < ring; k++) view.setFloat64(wideAt + (e * ring + k) * 8, wide.counts[entry * ring + k]!, true);
      view.setInt32(at + layout.countWord * 4, e++, true);
    }
    n++;
  }
  view.setUint32(0, MAGIC, true);
  view.setUint16(4, VERSION, true);
  view.setUint16(6, stride, true);
  view.setUint16(8, layout.buckets, true);
  view.setUint32(12, layout.seed, true);
  view.setFloat64(16, layout.windowMs, true);
  view.setFloat64(24, layout.graceMs, true);
  view.setFloat64(32, layout.maxSkewMs, true);
  view.setFloat64(40, state.origin, true);
  view.setUint32(48, n, true);
  view.setUint32(52, e, true);
  view.setUint32(56, layout.initialCapacity, true);
  view.setFloat64(64, layout.exactFrom, true);
  view.setUint32(60, checksum(out), true);
  return out;
}

function readHeader(bytes: Uint8Array): { view: DataView; layout: WindowLayout; config: WindowConfig; header: number } {
  if (!(bytes instanceof Uint8Array) || bytes.length < 8) throw corrupt('shorter than the header');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint32(0, true) !== MAGIC) throw corrupt('bad magic');
  const version = view.getUint16(4, true);
  const header = HEADERS[version];
  if (header === undefined) throw corrupt(`unknown version ${version}`);
  if (bytes.length < header) throw corrupt('shorter than the header');
  if (view.getUint32(60, true) !== checksum(bytes)) throw corrupt('checksum mismatch');
  const exactFrom = header > 64 ? view.getFloat64(64, true) : Infinity;
  const config: WindowConfig = {
    windowMs: view.getFloat64(16, true),
    buckets: view.getUint16(8, true),
    graceMs: view.getFloat64(24, true),
    maxSkewMs: view.getFloat64(32, true),
    seed: view.getUint32(12, true),
    initialCapacity: view.getUint32(56, true),
    ...(exactFrom === Infinity ? {} : { exactFrom }),
  };
  try {
    return { view, layout: windowLayout(config), config, header };
  } catch (err) {
    throw isBanstreamError(err) ? corrupt('invalid window config', err) : err;
  }
}

export function decodeSnapshot(bytes: Uint8Array): RestoredState {
  const { view, layout, config, header } = readHeader(bytes);
  const stride = layout.strideWords;
  const ring = layout.ring;
  const size = view.getUint32(48, true);
  const wideCount = view.getUint32(52, true);
  const origin = view.getFloat64(40, true);
  if (view.getUint16(6, true) !== stride) throw corrupt('slot stride does not match the config');
  const wideAt = header + size * stride * 4;
  const exactAt = wideAt + wideCount * ring * 8;
  if (header === 64 ? bytes.length !== exactAt : bytes.length < exactAt + 4) throw corrupt('length does not match the header');
  if (size > 0 ? !Number.isInteger(origin) : !(Number.isNaN(origin) || Number.isInteger(origin))) throw corrupt('bad origin');
  if (wideCount > size) throw corrupt('more wide entries than slots');
  const table = new SlotTable(stride, Math.max(layout.initialCapacity, Math.ceil(size / 0.65) + 1));
  const wide = new WidePool(ring, layout.exactLaneCap);
  const seen = new Uint8Array(wideCount);
  const entries = new Int32Array(wideCount);
  for (let n = 0; n < size; n++) {
    const at = header + n * stride * 4;
    const ew = view.getInt32(at + W_EPOCH * 4, true);
    const ep = ew & EPOCH_MASK;
    if (ep < 1 || ep > EPOCH_LIMIT) throw corrupt(`slot ${n} has epoch ${ep}`);
    const found = table.findOrInsert(view.getInt32(at + W_H1 * 4, true), view.getInt32(at + W_H2 * 4, true), ew);
    if (found >= 0) throw corrupt(`slot ${n} repeats a fingerprint`);
    const base = (-found - 1) * stride;
    for (let w = W_EPOCH + 1; w < stride; w++) table.words[base + w] = view.getInt32(at + w * 4, true);
    if (ew < 0) {
      const e = table.words[base + layout.countWord]!;
      if (e < 0 || e >= wideCount || seen[e] === 1) throw corrupt(`slot ${n} points at wide entry ${e}`);
      seen[e] = 1;
      const entry = wide.alloc();
      for (let k = 0; k < ring; k++) {
        const v = view.getFloat64(wideAt + (e * ring + k) * 8, true);
        if (!(Number.isInteger(v) && v >= 0)) throw corrupt(`wide entry ${e} has count ${v}`);
        wide.counts[entry * ring + k] = v;
      }
      table.words[base + layout.countWord] = entry;
      entries[e] = entry;
    }
    for (let k = 0; k < ring; k++) {
      if (countAt(table.words, base, layout, wide, k) === 0) continue;
      const f = firstAt(table.words, base, k);
      const l = lastAt(table.words, base, k);
      if (f > l || l * layout.unitMs >= layout.granularityMs) throw corrupt(`slot ${n} bucket ${k} has span [${f}, ${l}]`);
    }
  }
  if (seen.includes(0)) throw corrupt('wide entries no slot points at');
  if (header > 64 && decodeExactSection(view, exactAt, layout, wide, entries, corrupt) !== bytes.length) throw corrupt('length does not match the header');
  return { config, origin, table, wide };
}
