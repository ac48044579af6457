import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normaliseSubject } from '@banstream/core';
import { testInfra, waitUntil } from './support/infra.js';
import { encodeBan, manualBan } from './support/bans.js';
import { connectTestBroker, type TestBroker } from './support/broker.js';
import { produceOrFail } from './support/kafka.js';
import { describeProcess, exitWithin, freePort, spawnService, type RunningProcess } from './support/processes.js';
import { publishPolicy, sumMetric } from './support/aggregator.js';

const UNENFORCEABLE = 'banstream_enforcer_auth_unenforceable';

/** A manual ban as the control API writes it, as a bans-topic message. */
const banMessage = (typed: string) => {
  const subject = normaliseSubject(typed);
  return { key: subject, value: encodeBan(manualBan(subject)) };
};

/**
 * Two real sidecars on one topic layout: one told where its trusted proxy puts the
 * country and the ASN, one not. The first applies country and ASN bans at GET
 * /v1/auth; the second cannot, and says so in its log and its metrics.
 */
describe('GET /v1/auth and the bans on country, ASN and route', () => {
  const { kafkaBrokers, redisUrl } = testInfra();
  let broker: TestBroker | undefined;
  const sidecars: { proc: RunningProcess; url: string }[] = [];
  let told: { proc: RunningProcess; url: string };
  let blind: { proc: RunningProcess; url: string };

  const start = async (env: Record<string, string>) => {
    const port = await freePort();
    const proc = spawnService('enforcer', {
      ...broker!.env,
      REDIS_URL: redisUrl,
      HTTP_PORT: String(port),
      LOG_LEVEL: 'warn',
      ENFORCER_PURGE_MS: '200',
      ...env,
    });
    const sidecar = { proc, url: `http://127.0.0.1:${port}` };
    sidecars.push(sidecar);
    await waitUntil(
      async () => (await fetch(`${sidecar.url}/readyz`)).status === 200,
      () => `enforcer ready: ${describeProcess(proc)}`,
      60_000,
      50,
    );
    return sidecar;
  };
  const auth = (s: { url: string }, headers: Record<string, string>) =>
    fetch(`${s.url}/v1/auth`, { headers: { 'x-forwarded-for': '198.51.100.7', 'x-original-uri': '/', ...headers } }).then((r) => r.status);
  const metrics = async (s: { url: string }) => (await fetch(`${s.url}/metrics`)).text();

  beforeAll(async () => {
    broker = await connectTestBroker(kafkaBrokers, 3);
    await produceOrFail(broker.producer, broker.topics.name('bans'), [banMessage('country:AU'), banMessage('asn:13335')]);
    await publishPolicy(broker.producer, broker.topics.name('policies'), {
      id: 'fr-logins',
      key: ['ip'],
      match: { countries: ['FR'], paths: ['/login'] },
      threshold: { count: 5, interval: '1m' },
      action: { type: 'throttle', status: 429 },
    });
    [told, blind] = await Promise.all([start({ ENFORCER_COUNTRY_HEADER: 'X-Banstream-Country', ENFORCER_ASN_HEADER: 'x-banstream-asn' }), start({})]);
  }, 120_000);

  afterAll(async () => {
    for (const s of sidecars) {
      s.proc.child.kill('SIGTERM');
      await exitWithin(s.proc, 15_000);
    }
    await broker?.close();
  });

  it('applies country and ASN bans from the headers it is told to read, from its trusted proxy', async () => {
    expect(await auth(told, { 'x-banstream-country': 'AU' })).toBe(403);
    expect(await auth(told, { 'x-banstream-asn': '13335' })).toBe(403);
    expect(await auth(told, { 'x-banstream-country': 'NZ', 'x-banstream-asn': '13336' })).toBe(204);
    expect(await auth(told, { 'x-banstream-country': 'AUS' })).toBe(400);
  });

  it('without those headers configured, says what it cannot apply: a log line per scope and a gauge by scope and kind', async () => {
    expect(await auth(blind, { 'x-banstream-country': 'AU', 'x-banstream-asn': '13335', 'cf-ipcountry': 'AU' })).toBe(204);
    const text = await metrics(blind);
    expect(sumMetric(text, UNENFORCEABLE, 'scope="country",kind="ban"')).toBe(1);
    expect(sumMetric(text, UNENFORCEABLE, 'scope="asn",kind="ban"')).toBe(1);
    expect(sumMetric(text, UNENFORCEABLE, 'scope="country",kind="policy"')).toBe(1);
    await waitUntil(
      () => blind.proc.output().includes('GET /v1/auth cannot apply bans on country'),
      () => `the log line GET /v1/auth cannot apply bans on country; the process said:\n${blind.proc.output()}`,
      10_000,
    );
    await waitUntil(
      () => blind.proc.output().includes('GET /v1/auth cannot apply policies on country'),
      () => `the log line GET /v1/auth cannot apply policies on country; the process said:\n${blind.proc.output()}`,
      10_000,
    );
    // What it is told, it applies: nothing counted there.
    const toldText = await metrics(told);
    expect(sumMetric(toldText, UNENFORCEABLE, 'scope="country"') + sumMetric(toldText, UNENFORCEABLE, 'scope="asn"')).toBe(0);
    expect(told.proc.output()).not.toContain('cannot apply bans on country');
  });

  it('reports a ban that arrives later on a scope it lacks, in its log and its gauge', async () => {
    await produceOrFail(broker!.producer, broker!.topics.name('bans'), [banMessage('route:/users/:id')]);
    await waitUntil(async () => sumMetric(await metrics(blind), UNENFORCEABLE, 'scope="route",kind="ban"') === 1, 'the route ban counted', 20_000, 50);
    await waitUntil(
      () => blind.proc.output().includes('GET /v1/auth cannot apply bans on route'),
      () => `the log line GET /v1/auth cannot apply bans on route; the process said:\n${blind.proc.output()}`,
      10_000,
    );
  });
});
