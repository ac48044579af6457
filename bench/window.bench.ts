/**
 * npm run bench -- window
 *
 * Memory: bytes per tracked (policy, subject) window at 1,000,000 keys, measured as the
 * heap + ArrayBuffer delta after a full GC, against a Map<string, {epoch, buckets}>
 * doing the same job (same buckets, same first/last offsets; it must keep the key strings).
 * The same with 1% of the keys hot (bytes_per_key_with_hot_1pct): a store with exactFrom
 * a tenth of a 100/min limit, where every 100th key sends 100 events in the minute (at
 * the limit), so it records their exact offsets (exact-pool.ts) on top of its slot.
 * Speed: window updates per second on one core at 1,000,000 keys, random keys, time
 * moving forward, against a bare typed-array increment over the same random index
 * sequence (the ceiling). Every speed figure is the median of RUNS interleaved runs.
 */
import { WindowStore } from '../packages/core/src/window/index.js';
import { heapBytes, median, min, note, percentile, prng, report, sig } from './lib.js';

const KEYS = 1_000_000;
const UPDATES = 10_000_000;
const RUNS = 5;
const BATCH = 512;
const SEED = 20240601;
/** Event time advances 1 ms every this many updates: buckets roll over a few times per run. */
const UPDATES_PER_MS = 100;
const CONFIG = { windowMs: 60_000, buckets: 4, graceMs: 5_000 };
const T0 = 1_700_000_000_000;

function keyOf(i: number): string {
  return `login-bruteforce|ip:10.${(i >>> 16) & 255}.${(i >>> 8) & 255}.${i & 255}`;
}

function measureStoreMemory(): { bytesPerKey: number; store: WindowStore } {
  const before = heapBytes();
  const store = new WindowStore(CONFIG);
  for (let i = 0; i < KEYS; i++) store.add(keyOf(i), T0, 1, T0);
  const after = heapBytes();
  return { bytesPerKey: (after - before) / KEYS, store };
}

const HOT_EVERY = 100;
const HOT_LIMIT = 100;

/** 1M keys, one event each, and every HOT_EVERY-th key at HOT_LIMIT events a minute, spread over the minute. */
function measureExactMemory(): { bytesPerKey: number; exactKeys: number; tableBytesPerKey: number } {
  const before = heapBytes();
  const store = new WindowStore({ ...CONFIG, exactFrom: HOT_LIMIT / 10 });
  const step = CONFIG.windowMs / HOT_LIMIT;
  for (let j = 0; j < HOT_LIMIT; j++) {
    const t = T0 + j * step;
    for (let i = 0; i < KEYS; i += HOT_EVERY) store.add(keyOf(i), t, 1, t);
  }
  const last = T0 + (HOT_LIMIT - 1) * step;
  for (let i = 0; i < KEYS; i++) if (i % HOT_EVERY !== 0) store.add(keyOf(i), last, 1, last);
  const after = heapBytes();
  if (store.size !== KEYS) throw new Error(`hot store lost keys: ${store.size}`);
  return { bytesPerKey: (after - before) / KEYS, exactKeys: store.exactKeys, tableBytesPerKey: store.byteLength / KEYS };
}

/** What a straightforward implementation would keep: the key, its epoch, R counts and R first/last offsets. */
interface MapWindow {
  epoch: number;
  buckets: number[];
}

function measureMapMemory(ring: number): number {
  const before = heapBytes();
  const map = new Map<string, MapWindow>();
  for (let i = 0; i < KEYS; i++) {
    const buckets = new Array<number>(3 * ring).fill(0);
    buckets[0] = 1;
    map.set(keyOf(i), { epoch: 1, buckets });
  }
  const after = heapBytes();
  if (map.size !== KEYS) throw new Error('baseline lost keys');
  return (after - before) / KEYS;
}

function rate(count: number, ms: number): number {
  return (count / ms) * 1000;
}

function main(): void {
  note('memory: store with 1M keys');
  const { bytesPerKey, store } = measureStoreMemory();

  note('inputs: fingerprints and a random key sequence');
  const keys: string[] = [];
  const h1 = new Uint32Array(KEYS);
  const h2 = new Uint32Array(KEYS);
  const pair = new Uint32Array(2);
  for (let i = 0; i < KEYS; i++) {
    keys.push(keyOf(i));
    store.fingerprintInto(keys[i]!, pair);
    h1[i] = pair[0]!;
    h2[i] = pair[1]!;
  }
  const random = prng(SEED);
  const index = new Uint32Array(UPDATES);
  // A batch of events carries its keys' fingerprints in order: materialise them.
  const e1 = new Uint32Array(UPDATES);
  const e2 = new Uint32Array(UPDATES);
  for (let i = 0; i < UPDATES; i++) {
    const k = Math.floor(random() * KEYS);
    index[i] = k;
    e1[i] = h1[k]!;
    e2[i] = h2[k]!;
  }
  const times = new Float64Array(UPDATES);
  // The same updates as bare increments of the first word of each key's home slot, in
  // an array as large as the table: what the memory system allows at this size.
  const home = new Uint32Array(UPDATES);
  const tableSized = new Int32Array(store.byteLength / 4);
  const stride = store.layout.strideWords;
  for (let i = 0; i < UPDATES; i++) home[i] = Math.floor((e1[i]! * store.capacity) / 4294967296) * stride;

  const ceiling: number[] = [];
  const memoryBound: number[] = [];
  const hashes: number[] = [];
  const single: number[] = [];
  const batched: number[] = [];
  const strings: number[] = [];
  const estimates: number[] = [];
  const batchMicros: number[] = [];
  let clock = T0;
  for (let run = 0; run < RUNS; run++) {
    note(`run ${run + 1}/${RUNS}`);
    const counters = new Uint32Array(KEYS);
    let t = performance.now();
    for (let i = 0; i < UPDATES; i++) counters[index[i]!]!++;
    ceiling.push(rate(UPDATES, performance.now() - t));

    t = performance.now();
    for (let i = 0; i < UPDATES; i++) tableSized[home[i]!]!++;
    memoryBound.push(rate(UPDATES, performance.now() - t));

    for (let i = 0; i < UPDATES; i++) times[i] = clock + Math.floor(i / UPDATES_PER_MS);
    t = performance.now();
    for (let i = 0; i < UPDATES; i++) store.addHashed(e1[i]!, e2[i]!, times[i]!, 1, times[i]!);
    single.push(rate(UPDATES, performance.now() - t));
    clock = times[UPDATES - 1]! + 1;

    for (let i = 0; i < UPDATES; i++) times[i] = clock + Math.floor(i / UPDATES_PER_MS);
    t = performance.now();
    for (let from = 0; from < UPDATES; from += BATCH) {
      const b = performance.now();
      const to = Math.min(UPDATES, from + BATCH);
      store.addBatchHashed(e1.subarray(from, to), e2.subarray(from, to), times.subarray(from, to), undefined, times[to - 1]!);
      batchMicros.push((performance.now() - b) * 1000);
    }
    batched.push(rate(UPDATES, performance.now() - t));
    clock = times[UPDATES - 1]! + 1;

    const stringUpdates = UPDATES / 5;
    t = performance.now();
    for (let i = 0; i < stringUpdates; i++) {
      const now = clock + Math.floor(i / UPDATES_PER_MS);
      store.add(keys[index[i]!]!, now, 1, now);
    }
    strings.push(rate(stringUpdates, performance.now() - t));
    let mix = 0;
    t = performance.now();
    for (let i = 0; i < stringUpdates; i++) {
      store.fingerprintInto(keys[index[i]!]!, pair);
      mix ^= pair[0]!;
    }
    hashes.push(rate(stringUpdates, performance.now() - t));
    if (mix === 0.5) throw new Error('unreachable: keeps the hashing loop alive');
    clock += stringUpdates / UPDATES_PER_MS + 1;

    let sum = 0;
    t = performance.now();
    for (let i = 0; i < UPDATES; i++) sum += store.estimateHashed(e1[i]!, e2[i]!, clock);
    estimates.push(rate(UPDATES, performance.now() - t));
    if (!(sum > 0)) throw new Error('estimates vanished');
  }
  if (store.size !== KEYS) throw new Error(`store lost keys: ${store.size}`);
  // After the timed runs, so neither this store nor the baseline's garbage can disturb them.
  note('memory: store with 1M keys, 1% hot');
  const hot = measureExactMemory();
  note('memory: Map baseline with 1M keys');
  const baselineBytesPerKey = measureMapMemory(store.layout.ring);

  const updates = median(batched);
  const ceilingMedian = median(ceiling);
  report(
    'window',
    {
      keys: KEYS,
      updates_per_run: UPDATES,
      runs: RUNS,
      seed: SEED,
      ...CONFIG,
      ring_buckets: store.layout.ring,
      slot_bytes: store.layout.strideWords * 4,
      updates_api: `addBatchHashed, batches of ${BATCH} pre-hashed events`,
      updates_single_api: 'addHashed, one call per event',
      string_keys_api: 'add(key string): fingerprint + addHashed',
      time_advance: `1 ms every ${UPDATES_PER_MS} updates`,
      ceiling: 'Uint32Array(1M) increment over the same random index sequence',
      memory_bound: "Int32Array as large as the table, increment at each update's home slot",
      baseline: 'Map<string, {epoch, buckets: number[3R]}> with the key strings it must keep',
      hot_1pct: `exactFrom ${HOT_LIMIT / 10}; every ${HOT_EVERY}th key sends ${HOT_LIMIT} events evenly over ${CONFIG.windowMs} ms, the others 1`,
    },
    {
      bytes_per_key: sig(bytesPerKey),
      table_bytes_per_key: sig(store.byteLength / store.size),
      bytes_per_key_with_hot_1pct: sig(hot.bytesPerKey),
      table_bytes_per_key_with_hot_1pct: sig(hot.tableBytesPerKey),
      hot_keys_with_hot_1pct: hot.exactKeys,
      load_factor: sig(store.size / store.capacity, 3),
      baseline_map_bytes_per_key: sig(baselineBytesPerKey),
      baseline_to_store_bytes_ratio: sig(baselineBytesPerKey / bytesPerKey, 3),
      updates_per_s: Math.round(updates),
      updates_per_s_min: Math.round(min(batched)),
      ceiling_updates_per_s: Math.round(ceilingMedian),
      updates_ratio_to_ceiling: sig(updates / ceilingMedian, 3),
      memory_bound_updates_per_s: Math.round(median(memoryBound)),
      updates_ratio_to_memory_bound: sig(updates / median(memoryBound), 3),
      updates_per_s_single: Math.round(median(single)),
      updates_per_s_single_min: Math.round(min(single)),
      updates_single_ratio_to_ceiling: sig(median(single) / ceilingMedian, 3),
      updates_per_s_string_keys: Math.round(median(strings)),
      updates_per_s_string_keys_min: Math.round(min(strings)),
      fingerprints_per_s: Math.round(median(hashes)),
      estimates_per_s: Math.round(median(estimates)),
      batch_512_p50_us: sig(median(batchMicros), 3),
      batch_512_p99_us: sig(percentile(batchMicros, 99), 3),
    },
  );
}

main();
