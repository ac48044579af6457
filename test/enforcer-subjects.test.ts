import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createEnforcer, type Enforcer } from '@banstream/enforcer';
import { createMetricsRegistry } from '@banstream/platform';
import { captureLogger, testInfra, waitUntil } from './support/infra.js';
import { connectTestBroker, type TestBroker } from './support/broker.js';
import { exitWithin, freePort, spawnService, type RunningProcess } from './support/processes.js';
import { startControl, testTokens, type Control } from './support/control.js';
import { ALLOWLIST_KINDS, subjectCases, type Carrier, type SubjectCase } from './support/subjects.js';

interface Answer {
  allowed: boolean;
  source: string;
  policyId?: string;
  reason: string;
}

const PER_KIND: Record<SubjectCase['kind'], number> = {
  user: 3,
  apikey: 3,
  ipv4: 2,
  ipv6: 2,
  mapped: 2,
  cidr4: 2,
  cidr6: 1,
  'cidr-mapped': 1,
  path: 1,
  header: 1,
  country: 0,
  'ip+path': 1,
  'cidr+user': 1,
};

/** 20 generated subjects, each kind represented; the seed is printed so a failure can be replayed (SUBJECTS_SEED). */
function pickCases(seed: number): SubjectCase[] {
  // Networks no wider than the control API's guard rails take without force; ids the sidecar's JSON body takes.
  const all = fc.sample(subjectCases({ maxUserLength: 256, minBits: { v4: 8, v6: 32 }, wellFormed: true }), { numRuns: 2_000, seed });
  return Object.entries(PER_KIND).flatMap(([kind, n]) => all.filter((c) => c.kind === kind).slice(0, n));
}

/**
 * Deliverable 6 end to end: the real control API writes a manual ban and an allowlist
 * entry for each generated subject, as an operator types it; the enforcer library
 * (createEnforcer) and the sidecar (POST /v1/check) both deny a request carrying it,
 * then allow it by the allowlist, then, both lifted, allow it as clean.
 */
describe('every subject the control API accepts is enforced (library and sidecar)', () => {
  const { kafkaBrokers, redisUrl } = testInfra();
  const tokens = testTokens();
  const seed = Number(process.env.SUBJECTS_SEED ?? Date.now() % 2 ** 31);
  let broker: TestBroker;
  let control: Control;
  let sidecar: RunningProcess;
  let sidecarUrl = '';
  let library: Enforcer;

  beforeAll(async () => {
    broker = await connectTestBroker(kafkaBrokers);
    control = await startControl({ ...broker.env, CONTROL_TOKENS: tokens.entries });
    const port = await freePort();
    sidecar = spawnService('enforcer', { ...broker.env, REDIS_URL: redisUrl, HTTP_PORT: String(port), LOG_LEVEL: 'warn', ENFORCER_REDIS_KEY_PREFIX: broker.topics.prefix });
    sidecarUrl = `http://127.0.0.1:${port}`;
    library = createEnforcer({
      kafka: broker.kafka,
      admin: broker.admin,
      topicPrefix: broker.topics.prefix,
      logger: captureLogger().logger,
      registry: createMetricsRegistry('subjects-test', { defaultMetrics: false }),
      instanceId: `subjects-${seed}`,
    });
    await Promise.all([library.start(), waitUntil(async () => (await fetch(`${sidecarUrl}/readyz`)).status === 200, `enforcer ready\n${sidecar.output()}`, 60_000, 50)]);
  }, 120_000);

  afterAll(async () => {
    await library?.stop();
    await control?.stop();
    if (sidecar) {
      sidecar.child.kill('SIGTERM');
      await exitWithin(sidecar, 15_000).catch(() => sidecar.child.kill('SIGKILL'));
    }
    await broker?.close();
  });

  const request = (c: Carrier) => ({ method: 'GET', host: 'shop.example', path: '/', ...c });
  const both = async (c: Carrier): Promise<[Answer, Answer]> => {
    const res = await fetch(`${sidecarUrl}/v1/check`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(request(c)) });
    expect(res.status).toBe(200);
    return [await library.check(request(c)), (await res.json()) as Answer];
  };
  const until = (c: Carrier, what: string, ok: (a: Answer) => boolean) =>
    waitUntil(
      async () => {
        const answers = await both(c);
        return answers.every(ok) ? answers : undefined;
      },
      `${what} (seed ${seed})`,
      10_000,
      20,
    );

  it('denies by each manual ban and allows by each allowlist entry, for 20 generated subjects (paths, headers, composites too)', async () => {
    const cases = pickCases(seed);
    expect(cases).toHaveLength(20);
    for (const c of cases) {
      const label = `${c.kind} ${JSON.stringify(c.typed)} (seed ${seed})`;
      const added = await control.call('POST', '/v1/bans', { token: tokens.operator, body: { subject: c.typed, duration: '10m', reason: 'property test', force: true } });
      expect(added.status, `${label}: ${JSON.stringify(added.body)}`).toBe(201);
      const subject = added.body.subject as string;
      const [lib, car] = await until(c.carrier, `the ban on ${label} to deny`, (a) => !a.allowed);
      for (const a of [lib, car]) expect(a, label).toMatchObject({ source: 'ban', policyId: 'manual' });

      if (ALLOWLIST_KINDS.has(c.kind)) {
        // The allowlist's POST takes 512 characters: a long id is allowed by the subject the ban lists.
        const entry = c.typed.length <= 512 ? c.typed : subject;
        const allowed = await control.call('POST', '/v1/allowlist', { token: tokens.operator, body: { entry, reason: 'property test', ttl: '10m' } });
        expect(allowed.status, `${label}: ${JSON.stringify(allowed.body)}`).toBe(201);
        await until(c.carrier, `the allowlist entry for ${label} to allow`, (a) => a.allowed && a.source === 'allowlist');
        expect((await control.call('DELETE', `/v1/allowlist/${encodeURIComponent(allowed.body.entry as string)}`, { token: tokens.operator })).status, label).toBe(200);
      }
      expect((await control.call('DELETE', `/v1/bans/${encodeURIComponent(subject)}`, { token: tokens.operator })).status, label).toBe(200);
      await until(c.carrier, `${label} to be clean again`, (a) => a.allowed && a.source === 'none');
    }
  }, 180_000);
});
