import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { SCHEMA_NAMES, type Ban, type GeoAlert, type GeoBaseline } from '@banstream/schemas';
import { captureLogger, testInfra, waitUntil } from './support/infra.js';
import { exitWithin, REPO_ROOT } from './support/processes.js';
import { connectTestBroker, type TestBroker } from './support/broker.js';
import { catalog, decodeBan, startAggregator, TopicTail, type Aggregator } from './support/aggregator.js';
import { startControl, testTokens, type Control } from './support/control.js';
import { startEdge, type Edge } from '../demo/edge.js';
import { Driver } from '../demo/driver.js';
import { applyDemoPolicies } from '../demo/control.js';
import { publishHistory } from '../demo/history.js';
import { BOTNET_PREFIX, COUNTRIES, DEMO_SCENARIO, FLOOD_IP, isLegitimateIp, nightCountry, Scenario, type Country, type ScenarioOptions } from '../demo/scenario.js';

const PARTITIONS = 6;
const run = promisify(execFile);

/**
 * The whole pipeline as a shop would run it: the real aggregator and control
 * services, two edges (each a Fastify app with its own enforcer and publisher),
 * the demo's traffic mix over real HTTP, after a history of the same users that
 * teaches the geographic baselines. The attackers are banned at every edge, no
 * legitimate client ever is, the CLI's unban reaches every edge, and the night
 * spike raises one alert.
 */
describe('end to end: edges, aggregator, control, CLI', () => {
  const { kafkaBrokers } = testInfra();
  const tokens = testTokens();
  const { logger } = captureLogger();
  let broker: TestBroker;
  let control: Control;
  let aggregator: Aggregator | undefined;
  let edges: Edge[] = [];
  let driver: Driver | undefined;
  let bans: TopicTail<Ban>;
  let alerts: TopicTail<GeoAlert>;
  let baselines: TopicTail<GeoBaseline>;
  let scenario: Scenario;
  // Attacks start 3 s in and stop at 30 s; the night spike runs to 60 s.
  const options: ScenarioOptions = { ...DEMO_SCENARIO, partitions: PARTITIONS, phases: { flood: [3_000, 30_000], botnet: [3_000, 30_000], spike: [3_000, 60_000] } };
  // The country deepest in its night when the traffic starts.
  let spiking: Country;

  beforeAll(async () => {
    broker = await connectTestBroker(kafkaBrokers, PARTITIONS);
    control = await startControl({ ...broker.env, CONTROL_TOKENS: tokens.entries });
    aggregator = await startAggregator({
      ...broker.env,
      AGGREGATOR_GROUP_ID: `${broker.topics.prefix}aggregator`,
      GEO_TIME_ZONES: COUNTRIES.map((c) => `${c.code}=${c.zone}`).join(','),
      // Ten-second geo windows: the spike is judged within seconds, and 30 samples of an hour are 5 minutes of history.
      AGGREGATOR_GEO_WINDOW_MS: '10000',
      GEO_BASELINE_FLUSH_MS: '500',
    });
    // Ten-minute bans: only the CLI lifts them within the test.
    await applyDemoPolicies(control.url, tokens.admin, '10m');
    bans = await new TopicTail(broker.kafka, broker.topics.name('bans'), decodeBan).start();
    alerts = await new TopicTail(broker.kafka, broker.topics.name('alerts'), (b) => catalog.codec(SCHEMA_NAMES.geoAlert).decode(b)).start();
    baselines = await new TopicTail(broker.kafka, broker.topics.name('aggregator-baselines'), (b) => catalog.codec(SCHEMA_NAMES.geoBaseline).decode(b)).start();

    const historyEnd = Date.now();
    const history = await publishHistory(broker.producer, broker.topics.name('events'), options, historyEnd, 1);
    await waitUntil(async () => (await aggregator!.metric('banstream_aggregator_events_consumed_total')) >= history, `the aggregator to count ${history} history events`, 180_000, 500);
    // Every country's baseline judged through its history: the hours ahead are warm.
    for (const c of COUNTRIES) {
      await waitUntil(() => (baselines.latest().get(`country:${c.code}`)?.evaluatedUntil ?? 0) >= historyEnd - 5 * 60_000, `${c.code}'s history judged`, 120_000, 200);
    }
    console.log(`history: ${history} events published and counted`);

    edges = await Promise.all(['edge-a', 'edge-b'].map((edgeId) => startEdge({ brokers: kafkaBrokers, topicPrefix: broker.topics.prefix, edgeId, logger })));
    await waitUntil(() => edges.every((e) => e.enforcer.ready), 'both enforcers ready', 60_000, 50);
    scenario = new Scenario(options, Date.now());
    spiking = nightCountry(scenario.startedAt);
    console.log(`the night spike comes from ${spiking.code}`);
    driver = new Driver({ edges: edges.map((e) => e.url), scenario }).start();
  }, 420_000);

  afterAll(async () => {
    await driver?.stop();
    for (const edge of edges) await edge.close();
    if (aggregator) {
      aggregator.proc.child.kill('SIGTERM');
      await exitWithin(aggregator.proc, 15_000).catch(() => aggregator!.proc.child.kill('SIGKILL'));
    }
    await control?.stop();
    await bans?.stop();
    await alerts?.stop();
    await baselines?.stop();
    await broker?.close();
  });

  /** What each edge answers a client now (a plain page view, which no policy counts toward a ban). */
  const statusAt = async (edge: Edge, ip: string) => (await fetch(`${edge.url}/`, { headers: { 'x-forwarded-for': ip } })).status;

  it('bans the flood IP and the botnet /24 at every edge, and logs how long that took', async () => {
    for (const attacker of ['flood', 'botnet'] as const) {
      const ms = await waitUntil(() => driver!.propagationMs(attacker), `${attacker} refused by both edges`, 60_000, 50);
      const episode = driver!.attacks[attacker]!;
      const ban = await waitUntil(() => bans.latest().get(attacker === 'flood' ? `ip:${FLOOD_IP}` : `cidr:${BOTNET_PREFIX}`), `the ${attacker} ban on the bans topic`, 10_000);
      const crossing = episode.startedAt + ms - ban.startedAt;
      console.log(
        `propagation: ${attacker} refused at every edge ${ms} ms after its first request, ${crossing} ms after the request that crossed the threshold (${Object.entries(episode.deniedAt)
          .map(([e, t]) => `${e} +${t - episode.startedAt} ms`)
          .join(', ')})`,
      );
    }
    const live = bans.latest();
    expect(live.get(`ip:${FLOOD_IP}`)).toMatchObject({ policyId: 'demo-flood', httpStatus: 429, origin: 'aggregator', preview: false });
    expect(live.get(`cidr:${BOTNET_PREFIX}`)).toMatchObject({ policyId: 'demo-login-stuffing', httpStatus: 403, origin: 'aggregator', preview: false });
    for (const edge of edges) {
      expect(await statusAt(edge, FLOOD_IP)).toBe(429);
      expect(await statusAt(edge, '198.51.100.200')).toBe(403);
    }
  }, 90_000);

  it('raises exactly one geographic alert: the night spike', async () => {
    const fired = await waitUntil(() => alerts.records.find((r) => r.value?.state === 'fired'), `the ${spiking.code} spike alert`, 120_000, 200);
    // Let the spike run to its end (60 s in) and the others be judged meanwhile before counting alerts.
    await waitUntil(() => Date.now() - scenario.startedAt > 70_000, 'the spike to end', 120_000, 500);
    const firedAlerts = alerts.records.filter((r) => r.value?.state === 'fired').map((r) => r.value!);
    expect(firedAlerts.map((a) => [a.code, a.scope])).toEqual([[spiking.code, 'country']]);
    expect(fired.value!.ratio).toBeGreaterThanOrEqual(3);
    expect(fired.value!.zScore).toBeGreaterThanOrEqual(5);
    console.log(
      `alert: ${fired.value!.alertId} ${fired.value!.currentRate.toFixed(2)} req/s against ${fired.value!.baselineRate.toFixed(3)} usual (ratio ${fired.value!.ratio.toFixed(1)}, z ${fired.value!.zScore.toFixed(1)}), ${fired.value!.at - scenario.startedAt} ms after the spike's start`,
    );
  }, 150_000);

  it('never bans or refuses a legitimate client', async () => {
    const subjects = [...new Set(bans.records.filter((r) => r.value !== null).map((r) => r.key))].sort();
    expect(subjects).toEqual([`cidr:${BOTNET_PREFIX}`, `ip:${FLOOD_IP}`]);
    expect(subjects.some((s) => isLegitimateIp(s.replace(/^(ip|cidr):/, ''), PARTITIONS))).toBe(false);
    const { legit, spike } = driver!.stats;
    console.log(`traffic: ${JSON.stringify(driver!.stats)}, failures: ${JSON.stringify(driver!.failures)}`);
    expect(legit.sent).toBeGreaterThan(50);
    expect(spike.sent).toBeGreaterThan(100);
    expect([legit.denied, legit.erred, legit.failed, spike.denied, spike.erred, spike.failed, driver!.deniedLegit.size]).toEqual([0, 0, 0, 0, 0, 0, 0]);
    expect(legit.allowed).toBeGreaterThan(0);
  });

  it('`banstream bans rm` from the CLI lifts both bans at every edge', async () => {
    // The attacks stopped at 30 s; the flood's 10 s window has cooled, so nothing bans it again.
    await waitUntil(() => Date.now() - scenario.startedAt > 42_000, 'the attacks to stop and cool', 60_000, 500);
    const env = { PATH: process.env.PATH ?? '', BANSTREAM_URL: control.url, BANSTREAM_TOKEN: tokens.operator };
    for (const subject of [`ip:${FLOOD_IP}`, `cidr:${BOTNET_PREFIX}`]) {
      const { stdout } = await run(process.execPath, ['packages/cli/bin/banstream.js', 'bans', 'rm', subject], { cwd: REPO_ROOT, env });
      expect(stdout).toContain(subject);
    }
    for (const edge of edges) {
      await waitUntil(async () => (await statusAt(edge, FLOOD_IP)) === 200, `${edge.edgeId} to let the flood IP through`, 20_000, 100);
      await waitUntil(async () => (await statusAt(edge, '198.51.100.200')) === 200, `${edge.edgeId} to let the botnet network through`, 20_000, 100);
    }
    // The test's own reader of the bans topic is a consumer of its own, maybe behind the edges'.
    await waitUntil(() => !bans.latest().has(`ip:${FLOOD_IP}`) && !bans.latest().has(`cidr:${BOTNET_PREFIX}`), 'the tombstones in the test’s bans reader', 20_000, 100);
  }, 90_000);
});
