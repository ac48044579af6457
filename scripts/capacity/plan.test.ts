import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  computePlan,
  DEFAULT_TARGET,
  FALLBACK_FIGURES,
  type Figures,
  figuresFromResults,
  figuresFromTable,
  MARKERS,
  ENFORCER_MAX_BANS,
  mergeFigures,
  type Plan,
  parseNumber,
  renderMarkdown,
  replaceSection,
  TOPICS,
} from './plan.mjs';
import { topicSpecs } from '@banstream/kafka';

// The capacity plan's arithmetic (npm run capacity, docs/operations/capacity.md), on
// figures chosen so that each number can be worked out by hand.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const at = (value: number) => ({ value, source: 'test' });
const FIGS: Figures = {
  aggregatorCpuUsPerEvent: at(4),
  aggregatorEventsPerS: at(500_000),
  eventBytes: at(200),
  ingestAvroCpuUsPerEvent: at(3),
  ingestJsonCpuUsPerEvent: at(8),
  localChecksPerS: at(2_000_000),
  httpChecksPerS: at(40_000),
  banBytes: at(400),
  banFeedLagP99Ms: at(10),
  windowBytesPerKey: at(50),
  banDelayP99Ms: at(40),
  propagationP99Ms: at(250),
  roundtripP99Ms: at(20),
};
const TARGET = { events: 1_200_000, bans: 10_000_000, regions: 3, headroom: 0.5 };

const value = (plan: Plan, item: string) => {
  const row = plan.rows.find((r) => r.item === item);
  if (!row) throw new Error(`no row ${item}`);
  return row.perRegion;
};

describe('computePlan', () => {
  it('sizes each part of a region from CPU per event, bytes per event and bytes per ban, at the headroom asked', () => {
    const plan = computePlan(TARGET, FIGS);
    expect(value(plan, 'events')).toBe(400_000);
    // 400,000 events/s × 4 µs = 1.6 cores, at 50% use 3.2 → 4.
    expect(value(plan, 'aggregator cores')).toBe(4);
    // 4 cores ÷ 2 per process = 2 (and never fewer than 2).
    expect(value(plan, 'aggregator processes')).toBe(2);
    // 4 workers → at least 8 partitions, a multiple of 12.
    expect(value(plan, 'events partitions (TOPIC_PARTITIONS)')).toBe(12);
    // 10,000,000 keys × 50 bytes ÷ 2 processes.
    expect(value(plan, 'aggregator window memory per process')).toBe(250);
    // 400,000 × 3 µs = 1.2 cores → 2.4 → 3; JSON 400,000 × 8 µs = 3.2 → 6.4 → 7.
    expect(value(plan, 'ingest gateway cores (Avro)')).toBe(3);
    expect(value(plan, 'ingest gateway cores (JSON)')).toBe(7);
    // 400,000 × 200 bytes = 80 MB/s; × 3 replicas = 240 MB/s ÷ 50 MB/s usable per broker = 4.8 → 5.
    expect(value(plan, 'events topic bytes in')).toBe(80);
    expect(value(plan, 'brokers')).toBe(5);
    // (6 × 12 + 6) × 3 = 234 replicas over 5 brokers: 46.8 → 47.
    expect(value(plan, 'partition replicas per broker')).toBe(47);
    // 10,000,000 bans × 400 bytes = 4,000 MB; at 50% use 8,000 → 8,192 (256 MB steps).
    expect(value(plan, 'enforcer ban cache per instance')).toBe(4000);
    expect(value(plan, 'enforcer heap per instance')).toBe(8192);
    // 400,000 checks/s ÷ 2,000,000 per core ÷ 0.5 = 0.4 → 1; sidecars 400,000 ÷ 40,000 ÷ 0.5 = 20.
    expect(value(plan, 'enforcer cores, in-process checks')).toBe(1);
    expect(value(plan, 'enforcer sidecar processes')).toBe(20);
  });

  it('totals per-region rows over the regions, and not per-instance ones', () => {
    const plan = computePlan(TARGET, FIGS);
    expect(plan.rows.find((r) => r.item === 'brokers')!.total).toBe(15);
    expect(plan.rows.find((r) => r.item === 'events partitions (TOPIC_PARTITIONS)')!.total).toBe(36);
    expect(plan.rows.find((r) => r.item === 'enforcer heap per instance')!.total).toBeNaN();
  });

  it('moves with the figures: twice the CPU per event, twice the aggregator cores, and partitions to match', () => {
    const big = computePlan({ ...TARGET, events: 6_000_000 }, FIGS);
    // 2,000,000 × 4 µs = 8 cores → 16; 8 processes, 16 workers → ≥ 32 → 36 partitions.
    expect(value(big, 'aggregator cores')).toBe(16);
    expect(value(big, 'aggregator processes')).toBe(8);
    expect(value(big, 'events partitions (TOPIC_PARTITIONS)')).toBe(36);
    const slower = computePlan({ ...TARGET, events: 6_000_000 }, { ...FIGS, aggregatorCpuUsPerEvent: at(8) });
    expect(value(slower, 'aggregator cores')).toBe(32);
    expect(value(slower, 'events partitions (TOPIC_PARTITIONS)')).toBe(72);
  });

  it("takes the aggregator's measured rate per worker when it asks for more cores than its CPU per event", () => {
    // 200,000 events/s with 2 workers: 100,000 per worker; 400,000 ÷ 100,000 ÷ 0.5 = 8 cores (CPU per event says 4).
    const plan = computePlan(TARGET, { ...FIGS, aggregatorEventsPerS: at(200_000), aggregatorWorkers: at(2) });
    expect(value(plan, 'aggregator cores')).toBe(8);
    expect(value(plan, 'aggregator processes')).toBe(4);
    expect(value(computePlan(TARGET, { ...FIGS, aggregatorWorkers: at(2) }), 'aggregator cores')).toBe(4);
  });

  it('takes assumptions from flags: no headroom, another broker budget and replication factor', () => {
    const plan = computePlan({ ...TARGET, headroom: 0 }, FIGS, { brokerMbPerS: 40, replicationFactor: 2 });
    // 80 MB/s × 2 ÷ 40 = 4 brokers.
    expect(value(plan, 'brokers')).toBe(4);
    // 1.6 cores at full use → 2.
    expect(value(plan, 'aggregator cores')).toBe(2);
    expect(plan.assumptions.brokerMbPerS).toBe(40);
  });

  it('never plans fewer brokers than the replication factor', () => {
    expect(value(computePlan({ ...TARGET, events: 1000 }, FIGS), 'brokers')).toBe(3);
  });

  it('adds the mirror lag to what crosses regions: 1.5 round trips, linger and a local round trip', () => {
    const plan = computePlan(TARGET, FIGS, { rttMs: 100 });
    expect(plan.propagation.mirrorLagMs).toBe(150 + 5 + 20);
    const ms = Object.fromEntries(plan.propagation.rows.map((r) => [r.item, r.ms]));
    expect(ms["automatic ban on its own region's bans topic"]).toBe(40);
    expect(ms['automatic ban, its own region']).toBe(250);
    expect(ms['manual ban, policy or allowlist entry, another region']).toBe(175 + 10);
    expect(ms['automatic ban if it were mirrored (not the design)']).toBe(250 + 175);
  });

  it("flags a ban count past the enforcer's ban cap, says when to raise the cap, and flags a region loss the headroom cannot absorb", () => {
    const bansLimit = (plan: ReturnType<typeof computePlan>) => plan.limits.find((l) => l.text.startsWith('bans per enforcer'))!;
    expect(bansLimit(computePlan(TARGET, FIGS))).toMatchObject({ ok: true });
    expect(bansLimit(computePlan(TARGET, FIGS)).text).not.toMatch(/set ENFORCER_MAX_BANS/);
    expect(bansLimit(computePlan({ ...TARGET, bans: 12_000_000 }, FIGS)).text).toMatch(/set ENFORCER_MAX_BANS to 12,000,000$/);
    const over = computePlan({ ...TARGET, bans: ENFORCER_MAX_BANS.ceiling + 1 }, FIGS);
    expect(bansLimit(over).ok).toBe(false);
    expect(over.limits.find((l) => l.text.startsWith('one region lost'))!.ok).toBe(true);
    const under = computePlan({ ...TARGET, bans: 5_000_000, headroom: 0.2 }, FIGS);
    expect(bansLimit(under).ok).toBe(true);
    // 3 regions at 80% use: one lost puts 120% on the other two.
    expect(under.limits.find((l) => l.text.startsWith('one region lost'))!.ok).toBe(false);
  });

  it('refuses a target it cannot plan, naming the flag', () => {
    expect(() => computePlan({ ...TARGET, headroom: 1 }, FIGS)).toThrow(/--headroom/);
    expect(() => computePlan({ ...TARGET, regions: 1.5 }, FIGS)).toThrow(/--regions/);
    expect(() => computePlan({ ...TARGET, events: 0 }, FIGS)).toThrow(/--events/);
    expect(() => computePlan(TARGET, FIGS, { gatewayShare: 2 })).toThrow(/--gateway-share/);
    expect(() => computePlan(TARGET, FIGS, { replicationFactor: 0 })).toThrow(/--rf/);
  });
});

describe('figures', () => {
  const TABLE = [
    "From one run on this project's CI machines (4 cores, 24 GiB).",
    '',
    '| benchmark | figure | value | ceiling (same run) | ratio | target | anchors |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    '| `aggregator` | `events_per_s` | 400,000 | 635,730 (`ceiling_events_per_s`) | 0.8 | x | y |',
    '| `ingest` | `avro_events_per_s` | 800,000 | 955,200 (`ceiling_events_per_s`) | 0.4 | x | y |',
    '| `propagation` | `p99_ms` | 269 | 22.2 (`ceiling_roundtrip_p99_ms`) | – | ≤ 250 | y |',
    '| `ban-latency` | `ban_delay_p99_ms` | 40.6 | 13.6 (`ceiling_roundtrip_p99_ms`) | – | ≤ 100 | y |',
    '| `enforcer` | `ban_cache_bytes_per_ban` | not run | – | – | – | y |',
  ].join('\n');

  it("reads the performance table's values and named ceilings, per benchmark", () => {
    const f = figuresFromTable(TABLE);
    expect(f.aggregatorEventsPerS?.value).toBe(400_000);
    expect(f.aggregatorWorkers?.value).toBe(4);
    expect(f.propagationP99Ms?.value).toBe(269);
    // The ceiling of the propagation row, not the ban-latency one of the same name.
    expect(f.roundtripP99Ms?.value).toBe(22.2);
    expect(f.roundtripP99Ms?.source).toContain('`propagation` `ceiling_roundtrip_p99_ms`');
    expect(f.banBytes).toBeUndefined();
  });

  it('bounds CPU per event by the cores of the machine and the rate when the table has no CPU row', () => {
    const f = figuresFromTable(TABLE);
    // 4 cores ÷ 400,000 events/s = 10 µs; 4 ÷ 800,000 = 5 µs.
    expect(f.aggregatorCpuUsPerEvent?.value).toBe(10);
    expect(f.aggregatorCpuUsPerEvent?.source).toMatch(/upper bound/);
    expect(f.ingestAvroCpuUsPerEvent?.value).toBe(5);
  });

  it('prefers bench/results over the table and the table over the fallbacks, and says which', () => {
    const results = figuresFromResults({
      aggregator: { machine: { cores: 2, cpu: 'Test CPU' }, figures: { cpu_us_per_event: 4.66, avg_event_bytes: 150, events_per_s: 'n/a' } },
    });
    expect(results.aggregatorCpuUsPerEvent).toEqual({ value: 4.66, source: 'bench/results/aggregator.json `cpu_us_per_event` (2 cores, Test CPU)' });
    expect(results.aggregatorEventsPerS).toBeUndefined();
    const merged = mergeFigures(results, figuresFromTable(readFileSync(join(ROOT, 'docs/performance.md'), 'utf8')), FALLBACK_FIGURES);
    expect(merged.aggregatorCpuUsPerEvent?.value).toBe(4.66);
    expect(merged.eventBytes?.value).toBe(150);
    expect(merged.propagationP99Ms?.source).toMatch(/^docs\/performance\.md/);
    // The table has its row now: it wins over the fallback.
    expect(merged.banBytes?.source).toMatch(/^docs\/performance\.md/);
  });

  it('names every figure no source has', () => {
    expect(() => mergeFigures(figuresFromTable(TABLE))).toThrow(/no figure for .*window bytes_per_key/);
  });

  it('reads numbers as the docs and the flags write them', () => {
    expect(parseNumber('1,000,000')).toBe(1_000_000);
    expect(parseNumber('1e6')).toBe(1_000_000);
    expect(parseNumber('0.0003')).toBe(0.0003);
    expect(parseNumber('–')).toBeUndefined();
    expect(parseNumber('12 MB')).toBeUndefined();
  });
});

describe('the document', () => {
  it('replaces only the text between the markers, and refuses a document without them', () => {
    const doc = `# Capacity\n\nintro\n\n${MARKERS.begin}\nold\n${MARKERS.end}\n\nafter\n`;
    expect(replaceSection(doc, 'new\n')).toBe(`# Capacity\n\nintro\n\n${MARKERS.begin}\n\nnew\n\n${MARKERS.end}\n\nafter\n`);
    expect(() => replaceSection('# no markers', 'x')).toThrow(/markers/);
  });

  it("docs/operations/capacity.md shows the plan that docs/performance.md's figures give (npm run docs:reference)", () => {
    const figures = mergeFigures(figuresFromTable(readFileSync(join(ROOT, 'docs/performance.md'), 'utf8')), FALLBACK_FIGURES);
    const doc = readFileSync(join(ROOT, 'docs/operations/capacity.md'), 'utf8');
    expect(doc).toBe(replaceSection(doc, renderMarkdown(computePlan(DEFAULT_TARGET, figures))));
  });
});

describe('npm run capacity', () => {
  const run = (...args: string[]) => spawnSync(process.execPath, [join(ROOT, 'scripts/capacity.mjs'), ...args], { encoding: 'utf8' });

  it('prints the plan for the target given by flags, with the source of every figure', () => {
    const r = run('--figures', 'docs', '--events', '2e6', '--regions', '2');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('capacity plan: 2,000,000 events/s, 10,000,000 live bans, 2 regions');
    expect(r.stdout).toContain('figures from: docs/performance.md');
  });

  it('exits 2 naming a bad flag', () => {
    const r = run('--headroom', 'lots');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--headroom must be a number');
    expect(run('--bogus').stderr).toContain('unknown argument --bogus');
  });
});

describe('TOPICS', () => {
  it('counts the topics packages/kafka makes, by partition count', () => {
    const specs = topicSpecs({ prefix: '', partitions: 12, replicationFactor: 3 });
    expect({ partitioned: specs.filter((s) => s.numPartitions === 12).length, single: specs.filter((s) => s.numPartitions === 1).length }).toEqual(TOPICS);
    expect(specs).toHaveLength(TOPICS.partitioned + TOPICS.single);
  });
});
