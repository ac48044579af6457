// The enforcer's local check compared between builds, in one process, taking turns:
//   node --import tsx --expose-gc bench/compare/enforcer-local.mjs ROUNDS ROOT_A ROOT_B [ROOT_C…]
// The loops of bench/enforcer/local.ts (checks, and the floor with attributes) and its
// Map ceiling. Whole `npm run bench -- enforcer` runs back to back drift more than 5%
// on a shared VM (the same build, run twice, moved local_checks_per_s by a third), so
// a comparison of builds within 5% needs them measured in turns, in one run.
// Each ROOT is a checkout with `npm ci && npm run build` done. Every build gets its own
// million bans, its own compiled loop (new Function: no shared inline caches), and the
// same addresses, paths and clock; rounds alternate the builds in rotated order, so
// drift of the machine falls on all of them alike. Prints medians per build and the
// medians of per-round ratios to the first build, as JSON.
import { pathToFileURL } from 'node:url';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { median, prng } from '../lib.js';
import { BENCH_POLICIES, benchBan, ipOf } from '../enforcer/local-fixture.js';

const [roundsArg, ...rootArgs] = process.argv.slice(2);
const roots = rootArgs.map((r) => resolve(r));
const ROUNDS = Number(roundsArg);
const BANS = 1_000_000;
const CHECKS = 2_000_000;
const WARM_UP = 200_000;
const now = Date.now();

const random = prng(7);
const ips = [];
for (let i = 0; i < 65_536; i++) ips.push(Buffer.from(ipOf(Math.floor(random() * BANS * 2 * 1.1)), 'latin1').toString('latin1'));
const paths = ['/', '/api/items', '/login', '/products/1'];
const headers = { 'user-agent': 'bench' };
const uniform = () => 0.5;
const reasonOf = (ban) => ban.reason;

async function load(root) {
  const url = (p) => pathToFileURL(`${root}/${p}`).href;
  const core = await import(url('packages/core/dist/index.js'));
  const PolicyBook = core.PolicyBook ?? (await import(url('packages/platform/dist/index.js'))).PolicyBook;
  const { BanCache } = await import(url('services/enforcer/dist/cache/ban-cache.js'));
  const { CountCache } = await import(url('services/enforcer/dist/cache/count-cache.js'));
  const { decideLocally } = await import(url('services/enforcer/dist/decide.js'));
  const bans = new BanCache();
  for (let i = 0; i < BANS; i++) {
    const ban = benchBan(i, now);
    bans.observe(ban.subject, ban);
  }
  const policies = new PolicyBook();
  for (const record of BENCH_POLICIES) policies.apply(record.id, record);
  const state = { bans, counts: new CountCache(), allowlist: new core.Allowlist(), policies };
  const deps = { attributesFromRequest: core.attributesFromRequest, decideLocally, state, bans, ips, paths, headers, now, uniform, reasonOf };
  // Compiled apart per build: no inline cache sees two builds' objects.
  const local = new Function(
    'd',
    'n',
    `let sink = 0; for (let i = 0; i < n; i++) { const attrs = d.attributesFromRequest({ ip: d.ips[i & 65535], method: 'GET', host: 'shop.example', path: d.paths[i & 3], headers: d.headers, timestamp: d.now }); sink += d.decideLocally(d.state, attrs, d.now, d.uniform).candidates.length; } return sink;`,
  );
  const floor = new Function(
    'd',
    'n',
    `let sink = 0; for (let i = 0; i < n; i++) { const attrs = d.attributesFromRequest({ ip: d.ips[i & 65535], method: 'GET', host: 'shop.example', path: d.paths[i & 3], headers: d.headers, timestamp: d.now }); if (d.bans.addressDenial(attrs.ipAddress, d.now, d.reasonOf) !== undefined) sink++; } return sink;`,
  );
  return { root, deps, loops: { local, floor } };
}

const ceilingMap = new Map();
for (let i = 0; i < BANS; i++) ceilingMap.set(`ip:${ipOf(i * 2)}`, i);
const ceiling = new Function('m', 'ips', 'n', "let sink = 0; for (let i = 0; i < n; i++) if (m.get('ip:' + ips[i & 65535]) !== undefined) sink++; return sink;");

const builds = [];
for (const root of roots) {
  if (!existsSync(`${root}/services/enforcer/dist/decide.js`)) throw new Error(`${root}: not built`);
  builds.push(await load(root));
}
globalThis.gc?.();
const timed = (fn, ...args) => {
  fn(...args.slice(0, -1), WARM_UP);
  const t = performance.now();
  fn(...args.slice(0, -1), CHECKS);
  return (CHECKS / (performance.now() - t)) * 1000;
};
const runs = builds.map(() => ({ local: [], floor: [], ratio: [] }));
const ceilings = [];
for (let round = 0; round < ROUNDS; round++) {
  const c = timed(ceiling, ceilingMap, ips, 0);
  ceilings.push(c);
  for (let k = 0; k < builds.length; k++) {
    const b = (k + round) % builds.length;
    const { deps, loops } = builds[b];
    const local = timed(loops.local, deps, 0);
    const floor = timed(loops.floor, deps, 0);
    runs[b].local.push(local);
    runs[b].floor.push(floor);
    runs[b].ratio.push(local / c);
  }
  process.stderr.write(
    `round ${round + 1}: ${builds.map((b, i) => `${b.root.split('/').pop()} ${Math.round(runs[i].local.at(-1))}/${Math.round(runs[i].floor.at(-1))}`).join('  ')}  ceiling ${Math.round(c)}\n`,
  );
}
const result = {
  name: 'compare-enforcer-local',
  rounds: ROUNDS,
  ceiling_lookups_per_s: Math.round(median(ceilings)),
  builds: builds.map((b, i) => ({
    root: b.root,
    local_checks_per_s: Math.round(median(runs[i].local)),
    floor_with_attributes_checks_per_s: Math.round(median(runs[i].floor)),
    local_ratio: Number(median(runs[i].ratio).toFixed(3)),
    vs_first: {
      local_checks: Number(median(runs[i].local.map((x, r) => x / runs[0].local[r])).toFixed(3)),
      floor_with_attributes: Number(median(runs[i].floor.map((x, r) => x / runs[0].floor[r])).toFixed(3)),
    },
  })),
};
console.log(JSON.stringify(result));
