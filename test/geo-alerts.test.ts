import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Admin, Kafka, Producer } from '@banstream/kafka';
import { SCHEMA_NAMES, type GeoAlert, type GeoBaseline, type RequestEvent } from '@banstream/schemas';
import { testInfra, waitUntil } from './support/infra.js';
import { exitWithin } from './support/processes.js';
import { catalog, connectWithTopics, publishEvents, startAggregator, TopicTail, type Aggregator } from './support/aggregator.js';
import { diurnalPerMinute, localHour, localMidnightBefore, onDistinctPartitions, seeded, signedWith, trafficOf, webhookServer, type Country } from './support/geo.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const PARTITIONS = 4;
/** Requests a minute: 0.5 at 02:00 local time, 16 at 14:00, every day; FR adds 30 from 01:00 to 06:00 on the last night. */
const TROUGH = 0.5;
const PEAK = 16;
const SPIKE = 30;
const SECRET = 'whsec-test-0123456789abcdef';

/**
 * Geographic spike alerting end to end, against the real broker: a week of diurnal
 * traffic from four countries in their own time zones, compressed in event time
 * (published in seconds), is learned; the aggregator restarts; then one night: FR
 * spikes from 01:00 to 06:00 Paris time while JP and AU go through their daily
 * peaks. Exactly one alert and one resolved for FR, nothing else; the webhook gets
 * both, the first after failing twice.
 */
describe('geographic spike alerting', () => {
  const { kafkaBrokers } = testInfra();
  let kafka: Kafka;
  let admin: Admin;
  let producer: Producer;
  let topics: Awaited<ReturnType<typeof connectWithTopics>>['topics'];
  let aggregator: Aggregator | undefined;
  let alerts: TopicTail<GeoAlert>;
  let baselines: TopicTail<GeoBaseline>;
  let webhook: Awaited<ReturnType<typeof webhookServer>>;
  let env: Record<string, string>;
  let firstLogs = '';

  const countries: Country[] = onDistinctPartitions(
    [
      { code: 'FR', zone: 'Europe/Paris' },
      { code: 'JP', zone: 'Asia/Tokyo' },
      { code: 'AU', zone: 'Australia/Sydney' },
      { code: 'US', zone: 'America/New_York' },
    ],
    PARTITIONS,
  );
  // The night to watch: the last Paris midnight that leaves room for 8 hours of it before now.
  const night = localMidnightBefore(Date.now() - 8 * HOUR - 10 * MIN, 'Europe/Paris');
  const spike = { from: night + HOUR, to: night + 6 * HOUR };
  const random = seeded(7);
  const dayFactor = new Map<string, number>();
  const perMinute = (c: Country) => (t: number) => {
    // Each day a little busier or quieter than the last, as real traffic is.
    const day = `${c.code}${Math.floor((t - night) / DAY)}`;
    if (!dayFactor.has(day)) dayFactor.set(day, 0.9 + 0.2 * random());
    const normal = dayFactor.get(day)! * diurnalPerMinute(localHour(t, c.zone), TROUGH, PEAK);
    return c.code === 'FR' && t >= spike.from && t < spike.to ? normal + SPIKE : normal;
  };
  const traffic = (from: number, to: number): RequestEvent[] => countries.flatMap((c) => trafficOf(c, from, to, perMinute(c), random));
  const latestBaseline = (subject: string) => baselines.latest().get(subject);
  /** In time order, a slice at a time, so no produce request outgrows the broker's limit. */
  const publish = async (events: RequestEvent[]) => {
    events.sort((a, b) => a.timestamp - b.timestamp);
    for (let i = 0; i < events.length; i += 10_000) await publishEvents(producer, topics.name('events'), events.slice(i, i + 10_000));
  };

  beforeAll(async () => {
    ({ kafka, admin, producer, topics } = await connectWithTopics(kafkaBrokers, PARTITIONS));
    webhook = await webhookServer(2);
    alerts = await new TopicTail(kafka, topics.name('alerts'), (b) => catalog.codec(SCHEMA_NAMES.geoAlert).decode(b)).start();
    baselines = await new TopicTail(kafka, topics.name('aggregator-baselines'), (b) => catalog.codec(SCHEMA_NAMES.geoBaseline).decode(b)).start();
    env = {
      KAFKA_BROKERS: kafkaBrokers,
      TOPIC_PREFIX: topics.prefix,
      TOPIC_PARTITIONS: String(PARTITIONS),
      AGGREGATOR_GROUP_ID: `${topics.prefix}aggregator`,
      LOG_LEVEL: 'info',
      GEO_TIME_ZONES: countries.map((c) => `${c.code}=${c.zone}`).join(','),
      GEO_ALERT_MIN_RATE: '0.15',
      GEO_BASELINE_FLUSH_MS: '500',
      GEO_ALERT_WEBHOOK_URL: webhook.url,
      GEO_ALERT_WEBHOOK_SECRET: SECRET,
      GEO_ALERT_WEBHOOK_BACKOFF_MS: '100',
    };
    aggregator = await startAggregator(env);
  }, 120_000);

  afterAll(async () => {
    if (aggregator) {
      aggregator.proc.child.kill('SIGTERM');
      await exitWithin(aggregator.proc, 15_000);
    }
    webhook?.server.close();
    await alerts?.stop();
    await baselines?.stop();
    await producer?.disconnect();
    await admin?.disconnect();
  });

  it('learns a week of diurnal traffic per local hour of the week without alerting, and persists it', async () => {
    await publish(traffic(night - 7 * DAY - HOUR, night));
    // Judged up to its last minutes (a quiet country's last request may come a while before midnight).
    for (const c of countries) {
      await waitUntil(() => (latestBaseline(`country:${c.code}`)?.evaluatedUntil ?? 0) >= night - 15 * MIN, `the week of ${c.code} judged and its baseline written`, 120_000, 200);
    }
    expect(alerts.records).toEqual([]);
    const fr = latestBaseline('country:FR')!;
    expect(fr.timeZone).toBe('Europe/Paris');
    // Every hour of the week learned about an hour of samples, one a minute.
    expect(Math.min(...fr.samples)).toBeGreaterThanOrEqual(55);
    // The busiest hour of the day, over the week, is the curve's peak at 14:00 Paris time.
    const byHour = Array.from({ length: 24 }, (_, h) => fr.means.filter((_m, i) => i % 24 === h).reduce((a, b) => a + b, 0));
    expect(byHour.indexOf(Math.max(...byHour))).toBe(14);
  }, 240_000);

  it('restarts and takes up what was learned from the baselines topic instead of learning again', async () => {
    aggregator!.proc.child.kill('SIGTERM');
    expect(await exitWithin(aggregator!.proc, 20_000)).toBe(0);
    firstLogs = aggregator!.proc.output();
    aggregator = await startAggregator(env);
    // Until the retained input is replayed nothing new is learned: everything in it was judged before.
    await new Promise((r) => setTimeout(r, 2_000));
    await waitUntil(async () => (await aggregator!.metric('banstream_aggregator_partitions_replaying')) === 0, 'the replay after the restart', 60_000, 200);
    expect(await aggregator!.metric('banstream_aggregator_geo_samples_learned_total')).toBe(0);
  }, 180_000);

  it('alerts once on a 01:00-06:00 spike from FR and resolves it, not on the daily peaks of the others', async () => {
    await publish(traffic(night, night + 8 * HOUR));
    await waitUntil(() => alerts.records.some((r) => r.value?.state === 'resolved'), 'the FR alert to resolve', 120_000, 200);
    // The others are judged through the night (JP and AU peak at 14:00 local: 06:00 and 04:00 in Paris) before we count alerts.
    for (const c of countries) {
      await waitUntil(() => (latestBaseline(`country:${c.code}`)?.evaluatedUntil ?? 0) >= night + 7 * HOUR + 30 * MIN, `${c.code} judged through the night`, 60_000, 200);
    }
    expect(await aggregator!.metric('banstream_aggregator_geo_baselines_restored_total')).toBe(countries.length);

    const records = alerts.records.map((r) => ({ key: r.key, ...r.value! }));
    expect(records.map((r) => [r.key, r.code, r.scope, r.state])).toEqual([
      ['FR', 'FR', 'country', 'fired'],
      ['FR', 'FR', 'country', 'resolved'],
    ]);
    const [fired, resolved] = records;
    expect(resolved!.alertId).toBe(fired!.alertId);
    // Detected within a minute of event time of the spike's start, resolved after its end.
    expect(fired!.at).toBeGreaterThan(spike.from);
    expect(fired!.at - spike.from).toBeLessThanOrEqual(60_000);
    expect(resolved!.at).toBeGreaterThan(spike.to);
    expect(resolved!.at - spike.to).toBeLessThan(10 * MIN);
    expect(fired).toMatchObject({ timeZone: 'Europe/Paris', localHourOfWeek: expect.any(Number) });
    expect(fired!.localHourOfWeek! % 24).toBe(1);
    expect(fired!.ratio).toBeGreaterThanOrEqual(3);
    expect(fired!.zScore).toBeGreaterThanOrEqual(5);
    expect(fired!.currentRate).toBeGreaterThanOrEqual(0.15);
    expect(await aggregator!.metric('banstream_aggregator_geo_alerts_total')).toBe(2);
  }, 240_000);

  it('posts both to the webhook, signed, the first after two failures, and never logs the secret or the URL', async () => {
    await waitUntil(() => webhook.requests.filter((r) => r.status === 200).length >= 2, 'both alerts posted', 30_000, 100);
    expect(webhook.requests.map((r) => r.status)).toEqual([500, 500, 200, 200]);
    const [, , fired, resolved] = webhook.requests;
    const alertId = alerts.records[0]!.value!.alertId;
    expect(fired!.body.text).toMatch(/Traffic spike from FR \(country\)/);
    expect(JSON.stringify(fired!.body.blocks)).toContain(alertId);
    expect(resolved!.body.text).toMatch(/Resolved: traffic from FR/);
    expect(webhook.requests.every((r) => signedWith(SECRET, r))).toBe(true);
    expect(await aggregator!.metric('banstream_aggregator_geo_webhook_retries_total')).toBe(2);
    const logs = firstLogs + aggregator!.proc.output();
    expect(logs).toContain('webhook failed: retrying');
    expect(logs).not.toContain(SECRET);
    expect(logs).not.toContain('XXXXTOKENXXXX');
  }, 60_000);
});
