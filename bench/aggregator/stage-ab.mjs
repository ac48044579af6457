// Development only (not a benchmark of record): node bench/aggregator/stage-ab.mjs <build root A> <build root B> [pairs] [events].
// Env SPAN_MS, HOT_IPS, HOT_SHARE shape the events (bench shape: 1000000 events, SPAN_MS=5000, HOT_IPS=10).
// Paired in-process A/B: two builds' EventsStage over the same events, alternating rounds.
import { loadBuild, makeRecords } from './stage-driver.mjs';
const [a, b, pairs = '8', total = '200000'] = process.argv.slice(2);
const A = await loadBuild(a),
  B = await loadBuild(b);
const now = Date.now();
const ra = makeRecords(A, Number(total), now),
  rb = makeRecords(B, Number(total), now);
const round = (build, records) => {
  const t = process.cpuUsage();
  const n = build.run(records);
  const c = process.cpuUsage(t);
  return (c.user + c.system) / n;
};
for (let i = 0; i < 2; i++) {
  round(A, ra);
  round(B, rb);
}
const ratios = [];
for (let i = 0; i < Number(pairs); i++) {
  const first = i % 2 === 0;
  const x = first ? round(A, ra) : 0;
  const y = round(B, rb);
  const x2 = first ? x : round(A, ra);
  ratios.push({ a: x2, b: y, ratio: y / x2 });
}
ratios.sort((p, q) => p.ratio - q.ratio);
const med = ratios[Math.floor(ratios.length / 2)];
console.log(
  JSON.stringify({ a, b, pairs: ratios.length, median_ratio_b_over_a: +med.ratio.toFixed(3), a_us: +med.a.toFixed(3), b_us: +med.b.toFixed(3), ratios: ratios.map((r) => +r.ratio.toFixed(3)) }),
);
