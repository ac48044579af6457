import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Ban, RequestEvent } from '@banstream/schemas';
import { testInfra, waitUntil } from './support/infra.js';
import { exitWithin, REPO_ROOT } from './support/processes.js';
import { decodeBan, event, publishEvents, publishPolicy, startAggregator, TopicTail, type Aggregator } from './support/aggregator.js';
import { connectTestBroker, type TestBroker } from './support/broker.js';
import { startControl, testTokens, type Control } from './support/control.js';

const run = promisify(execFile);

/** The backtest replays retained events through the aggregator's own engine: it must find the bans the live aggregator made. */
describe('backtest against the live aggregator', () => {
  const { kafkaBrokers } = testInfra();
  const tokens = testTokens();
  let broker: TestBroker;
  let aggregator: Aggregator;
  let control: Control;
  let bans: TopicTail<Ban>;
  let from = 0;
  let to = 0;

  const ban = (id: string, key: string[], count: number) => ({ id, mode: 'enforce', key, threshold: { count, interval: '1m' }, action: { type: 'ban', banDuration: '10m', status: 403 } });
  const POLICIES = [ban('per-ip', ['ip'], 20), ban('per-prefix', ['prefix'], 80), ban('per-user', ['user'], 30)];

  /** Attackers, a scraping network, an account used from many networks, and ordinary clients, in time order. */
  function traffic(start: number): RequestEvent[] {
    const events: RequestEvent[] = [];
    let t = start;
    const add = (ip: string, n: number, extra: Partial<RequestEvent> = {}) => {
      for (let i = 0; i < n; i++) events.push(event(ip, (t += 3), extra));
    };
    for (let round = 0; round < 5; round++) {
      add('203.0.113.9', 12, { country: 'FR' });
      add('198.51.100.23', 7, { country: 'DE' });
      add('192.0.2.44', 5, { country: 'US' });
      for (let h = 20; h < 30; h++) add(`203.0.113.${h}`, 4, { country: 'FR' });
      for (let n = 0; n < 10; n++) add(`100.64.${n}.7`, 1, { userId: 'mallory' });
      for (let c = 0; c < 30; c++) add(`10.${c}.1.1`, 1, { userId: `user-${c}`, country: 'GB' });
    }
    return events;
  }

  beforeAll(async () => {
    broker = await connectTestBroker(kafkaBrokers);
    const { kafka, producer, topics } = broker;
    for (const p of POLICIES) await publishPolicy(producer, topics.name('policies'), p);
    [aggregator, control] = await Promise.all([
      startAggregator({ ...broker.env, AGGREGATOR_TICK_MS: '20', AGGREGATOR_GROUP_ID: `${topics.prefix}aggregator` }),
      startControl({ ...broker.env, CONTROL_TOKENS: tokens.entries }),
    ]);
    bans = await new TopicTail(kafka, topics.name('bans'), decodeBan).start();
    from = Date.now() - 1000;
    const events = traffic(Date.now() - 2000);
    // Several records per network, several networks per partition: the live aggregator and the replay both see many records.
    for (let i = 0; i < events.length; i += 150) await publishEvents(producer, topics.name('events'), events.slice(i, i + 150), 40);
    const expected = ['ip:203.0.113.9', 'ip:198.51.100.23', 'ip:192.0.2.44', 'cidr:203.0.113.0/24', 'user:mallory'];
    await waitUntil(() => expected.every((s) => bans.records.some((r) => r.key === s)), `the live bans of ${expected.join(', ')}`, 30_000);
    // Let anything still in flight land, then close the range.
    let seen = -1;
    await waitUntil(
      async () => {
        const settled = seen === bans.records.length;
        seen = bans.records.length;
        return settled && (await aggregator.metric('banstream_aggregator_consumer_lag')) === 0;
      },
      'the aggregator to settle',
      20_000,
      500,
    );
    to = Date.now();
  }, 150_000);

  afterAll(async () => {
    await control?.stop();
    aggregator?.proc.child.kill('SIGTERM');
    if (aggregator) await exitWithin(aggregator.proc, 15_000);
    await bans?.stop();
    await broker?.close();
  });

  async function backtest(body: Record<string, unknown>) {
    const started = await control.call('POST', '/v1/backtests', { token: tokens.operator, body: { ...body, from: String(from), to: String(to) } });
    expect(started.status).toBe(202);
    return waitUntil(
      async () => {
        const job = await control.call('GET', `/v1/backtests/${started.body.id}`, { token: tokens.viewer });
        if (job.body.state === 'failed') throw new Error(job.body.error);
        return job.body.state === 'done' ? job.body.result : undefined;
      },
      'the backtest to finish',
      30_000,
      100,
    );
  }

  const live = (policyId: string) => bans.records.filter((r) => r.value?.policyId === policyId).map((r) => r.value!);
  const shape = (b: { subject: string; startedAt: number; expiresAt: number; evidenceCount: number; escalationLevel: number }) =>
    `${b.subject} ${b.startedAt} ${b.expiresAt} ${b.evidenceCount} ${b.escalationLevel}`;

  it('finds exactly the bans the aggregator made for subjects counted per events partition (ip, prefix): same subjects, times and counts', async () => {
    for (const id of ['per-ip', 'per-prefix']) {
      const report = await backtest({ policyId: id });
      expect(report.candidate.bans.list.map(shape).sort(), id).toEqual(live(id).map(shape).sort());
      expect(report.candidate.bans.total).toBeGreaterThan(0);
      expect(report.invalidEvents).toBe(0);
    }
  });

  it('finds the same subjects for a policy counted after the repartition (user)', async () => {
    const report = await backtest({ policyId: 'per-user' });
    expect(report.candidate.bans.list.map((b: Ban) => b.subject)).toEqual(live('per-user').map((b) => b.subject));
    expect(report.candidate.bans.list[0].evidenceCount).toBeGreaterThan(30);
  });

  it('reports the traffic affected and compares a candidate with the active version', async () => {
    const report = await backtest({ policy: ban('per-ip', ['ip'], 30) });
    expect(report.events).toBe(traffic(0).length);
    expect(report.clients).toBe(3 + 10 + 10 + 30);
    expect(report.candidate.bans.list.map((b: Ban) => b.subject).sort()).toEqual(['ip:198.51.100.23', 'ip:203.0.113.9']);
    expect(report.active).toMatchObject({ policyId: 'per-ip', version: 1, bans: { total: 3 } });
    expect(report.comparison).toMatchObject({ bannedOnlyByCandidate: [], bannedOnlyByActive: ['ip:192.0.2.44'], bannedByBoth: 2 });
    expect(report.candidate.affected.clients).toBe(2);
    expect(report.candidate.affected.requestShare).toBeGreaterThan(0);
    expect(report.candidate.topCountries.map((c: { name: string }) => c.name)).toEqual(['FR', 'DE']);
    expect(report.candidate.topPrefixes[0].name).toBe('203.0.113.0/24');
    expect(report.comparison.affectedRequestsDelta).toBeLessThan(0);
  });

  it('is what `banstream backtest --json` prints, with exit code 0', async () => {
    const env = { ...process.env, BANSTREAM_URL: control.url, BANSTREAM_TOKEN: tokens.operator };
    const { stdout } = await run(process.execPath, ['packages/cli/dist/main.js', 'backtest', '--policy', 'per-ip', '--from', String(from), '--to', String(to), '--json'], { cwd: REPO_ROOT, env });
    const report = JSON.parse(stdout);
    expect(report.candidate.bans.list.map(shape).sort()).toEqual(live('per-ip').map(shape).sort());
    const human = await run(process.execPath, ['packages/cli/dist/main.js', 'backtest', '--policy', 'per-ip', '--from', String(from), '--to', String(to)], { cwd: REPO_ROOT, env });
    expect(human.stdout).toContain('3 ban(s) of 3 subject(s)');
    expect(human.stdout).toContain('ip:203.0.113.9');
    const denied = await run(process.execPath, ['packages/cli/dist/main.js', 'backtest', '--policy', 'per-ip', '--from', '1h'], {
      cwd: REPO_ROOT,
      env: { ...env, BANSTREAM_TOKEN: tokens.viewer },
    }).catch((e: { code: number; stderr: string }) => e);
    expect(denied).toMatchObject({ code: 5 });
    expect((denied as { stderr: string }).stderr).toContain('needs operator');
  });
});
