import { randomUUID } from 'node:crypto';
import type { Admin } from '@banstream/kafka';
import { createEdgePublisher, DROP_REASONS, type BufferStats, type EdgePublisher, type EdgePublisherOptions } from '@banstream/edge';
import type { Ban, WindowCount } from '@banstream/schemas';
import { captureLogger, uniqueName, waitUntil } from './infra.js';
import { connectTestBroker, type TestBroker } from './broker.js';
import { produceOrFail } from './kafka.js';
import { encodeBan, manualBan } from './bans.js';
import { decodeBan, decodeCount, event, publishPolicy, startAggregator, TopicTail, type Aggregator } from './aggregator.js';
import { describeProcess, exitWithin, freePort, spawnService, type RunningProcess } from './processes.js';

/**
 * The whole pipeline for fault tests: edges (EdgePublisher) -> events topic ->
 * the built aggregator -> counts and bans -> enforcers. Every event of a test
 * carries the test's own host, and a policy keyed on `host` with a 1 h window
 * counts them all: with AGGREGATOR_HOT_SHARE=0 its count record carries the exact
 * total, which the tests compare with what the edges had acknowledged.
 */
export const TOTAL_POLICY = 'fault-total';

/** An edge's drop counts when it lost nothing. */
export const NO_DROPS = Object.fromEntries(DROP_REASONS.map((r) => [r, 0]));

export interface Sidecar {
  proc: RunningProcess;
  url: string;
  /** POST /v1/check; the answer and how long it took. */
  check(body: { ip: string; path?: string; userId?: string }): Promise<{ status: number; body: Record<string, unknown>; ms: number }>;
  ready(): Promise<boolean>;
}

export interface Pipeline {
  broker: TestBroker;
  host: string;
  /** The aggregator's group: its lag is this group's on the events topic. */
  groupId: string;
  aggregatorEnv: Record<string, string>;
  startAggregator(extra?: Record<string, string>): Promise<Aggregator>;
  startSidecar(env: Record<string, string>): Promise<Sidecar>;
  edge(name: string, options?: Pick<EdgePublisherOptions, 'budgetBytes'>): Edge;
  policy(spec: Record<string, unknown> & { id: string }): Promise<void>;
  ban(subject: string, ttlMs?: number): Promise<Ban>;
  /** Reads the counts and bans topics (again, after a broker outage: new consumers). */
  watch(): Promise<void>;
  counts(): TopicTail<WindowCount>;
  bans(): TopicTail<Ban>;
  /** The total the aggregator published for this test's host, or undefined before the first count. */
  counted(): number | undefined;
  /** Waits until the published total equals `expected`; fails naming both. */
  waitCounted(expected: () => number, timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

export async function startPipeline(brokers: string, partitions = 3, replicationFactor = 1): Promise<Pipeline> {
  const broker = await connectTestBroker(brokers, partitions, replicationFactor);
  const { topics, producer } = broker;
  const host = `${uniqueName('fault')}.example`;
  const groupId = `${topics.prefix}aggregator`;
  const aggregatorEnv = {
    ...broker.env,
    AGGREGATOR_GROUP_ID: groupId,
    AGGREGATOR_HOT_SHARE: '0',
    AGGREGATOR_TICK_MS: '20',
    AGGREGATOR_SESSION_TIMEOUT_MS: '6000',
    GEO_ALERT_ENABLED: 'false',
  };
  const processes: RunningProcess[] = [];
  const aggregators: Aggregator[] = [];
  const edges: Edge[] = [];
  let counts: TopicTail<WindowCount> | undefined;
  let bans: TopicTail<Ban> | undefined;
  await publishPolicy(producer, topics.name('policies'), {
    id: TOTAL_POLICY,
    key: ['host'],
    threshold: { count: 1_000_000_000, interval: '1h' },
    action: { type: 'throttle' },
  });

  const pipeline: Pipeline = {
    broker,
    host,
    groupId,
    aggregatorEnv,
    async startAggregator(extra = {}) {
      const a = await startAggregator({ ...aggregatorEnv, ...extra });
      processes.push(a.proc);
      aggregators.push(a);
      return a;
    },
    async startSidecar(env) {
      const s = await startSidecar({ ...broker.env, ENFORCER_REDIS_KEY_PREFIX: topics.prefix, ...env });
      processes.push(s.proc);
      return s;
    },
    edge(name, options = {}) {
      const e = createEdge(broker, host, name, options);
      edges.push(e);
      return e;
    },
    policy: (spec) => publishPolicy(producer, topics.name('policies'), spec),
    async ban(subject, ttlMs = 600_000) {
      // An id of its own: the same subject may be banned again.
      const ban = manualBan(subject, { banId: `manual-${randomUUID()}`, expiresAt: Date.now() + ttlMs });
      await produceOrFail(producer, topics.name('bans'), [{ key: subject, value: encodeBan(ban) }]);
      return ban;
    },
    async watch() {
      await Promise.all([counts?.stop(), bans?.stop()]);
      counts = await new TopicTail(broker.kafka, topics.name('counts'), decodeCount).start();
      bans = await new TopicTail(broker.kafka, topics.name('bans'), decodeBan).start();
    },
    counts: () => counts ?? fail('watch() first'),
    bans: () => bans ?? fail('watch() first'),
    counted: () => counts?.latest().get(`${TOTAL_POLICY}|host:${host}`)?.count,
    async waitCounted(expected, timeoutMs) {
      await waitUntil(() => pipeline.counted() === expected(), 'the aggregator to count every accepted event', timeoutMs, 200).catch(async (error: Error) => {
        const state = await Promise.all(
          aggregators.map((a) =>
            fetch(`http://127.0.0.1:${a.port}/metrics`)
              .then((r) => r.text())
              .catch(() => 'gone'),
          ),
        );
        const logs = state
          .map((m) =>
            m
              .split('\n')
              .filter((l) => /consumed_total|replaying|counts_emitted|consumer_lag|entries_applied|late_events/.test(l) && !l.startsWith('#'))
              .join('\n'),
          )
          .join('\n---\n');
        throw new Error(`${error.message}: counted ${pipeline.counted()}, accepted ${expected()}\naggregator state:\n${logs}`);
      });
    },
    async close() {
      for (const e of edges) await e.publisher.close(2_000).catch(() => undefined);
      for (const p of processes) {
        p.child.kill('SIGCONT');
        p.child.kill('SIGTERM');
        await exitWithin(p, 15_000).catch(() => p.child.kill('SIGKILL'));
      }
      await Promise.all([counts?.stop(), bans?.stop()]).catch(() => undefined);
      await broker.close().catch(() => undefined);
    },
  };
  return pipeline;
}

function fail(message: string): never {
  throw new Error(message);
}

/** An edge service's publisher, with what it has been acknowledged. */
export interface Edge {
  publisher: EdgePublisher;
  /** One request's event, as an edge publishes it after answering. */
  send(ip: string, status?: number, path?: string): void;
  /** `perTick` events for `path` every `tickMs`, spread round-robin over `ips`, until stopped. */
  steady(ips: readonly string[], perTick: number, tickMs?: number, path?: string): { stop(): void };
  /** Events Kafka acknowledged: the accepted side of the books. */
  accepted(): number;
  stats(): BufferStats;
  /** Waits until nothing is buffered or in flight. */
  settle(timeoutMs: number): Promise<BufferStats>;
  /** The publisher's last warnings and errors, for failure messages. */
  warnings(): string[];
}

function createEdge(broker: TestBroker, host: string, name: string, options: Pick<EdgePublisherOptions, 'budgetBytes'>): Edge {
  const log = captureLogger();
  const publisher = createEdgePublisher({ kafka: broker.kafka, topic: broker.topics.name('events'), logger: log.logger, lingerMs: 2, ...options });
  const edge: Edge = {
    publisher,
    send(ip, status = 200, path = '/') {
      publisher.publish({ ...event(ip, Date.now(), { host, status, path, edgeId: name }), eventId: randomUUID() });
    },
    steady(ips, perTick, tickMs = 20, path = '/') {
      let next = 0;
      const timer = setInterval(() => {
        for (let i = 0; i < perTick; i++) edge.send(ips[next++ % ips.length]!, 200, path);
      }, tickMs);
      return { stop: () => clearInterval(timer) };
    },
    accepted: () => publisher.stats().delivered,
    stats: () => publisher.stats(),
    settle: (timeoutMs) =>
      waitUntil(
        () => {
          const s = publisher.stats();
          return s.pendingEvents === 0 && s.inFlightEvents === 0 ? s : undefined;
        },
        `edge ${name} to deliver what it buffered`,
        timeoutMs,
        50,
      ).catch((error: Error) => {
        throw new Error(`${error.message}: ${JSON.stringify(publisher.stats())}; last warnings: ${edge.warnings().join(' | ')}`);
      }),
    warnings: () =>
      log
        .lines()
        .filter((l) => Number(l.level) >= 40)
        .slice(-8)
        .map((l) => `${String(l.msg)} ${l.err ? JSON.stringify(l.err).slice(0, 300) : ''}`),
  };
  return edge;
}

/**
 * An edge serving requests in a loop: it asks the sidecar `current()` returns,
 * answers (failing open when the sidecar does not answer) and publishes the event
 * with the status it answered.
 */
export function serveThrough(edge: Edge, current: () => Sidecar, clients: readonly string[]) {
  let serving = true;
  const served = { checked: 0, failedOpen: 0 };
  const loop = (async () => {
    for (let i = 0; serving; i++) {
      const ip = clients[i % clients.length]!;
      const answer = await current()
        .check({ ip })
        .catch(() => undefined);
      if (answer?.status === 200) served.checked++;
      else served.failedOpen++;
      edge.send(ip, answer?.body.allowed === false ? Number(answer.body.status) : 200);
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  return {
    served,
    async stop() {
      serving = false;
      await loop;
    },
  };
}

/** Starts the built enforcer sidecar on `env.HTTP_PORT` (a free port when not given) and waits for /readyz. */
export async function startSidecar(env: Record<string, string>): Promise<Sidecar> {
  const port = env.HTTP_PORT === undefined ? await freePort() : Number(env.HTTP_PORT);
  const proc = spawnService('enforcer', { LOG_LEVEL: 'warn', ...env, HTTP_PORT: String(port) });
  const url = `http://127.0.0.1:${port}`;
  const sidecar: Sidecar = {
    proc,
    url,
    async check({ ip, path = '/', userId }) {
      const started = performance.now();
      const res = await fetch(`${url}/v1/check`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ip, method: 'GET', host: 'shop.example', path, ...(userId ? { userId } : {}) }),
      });
      const body = (await res.json()) as Record<string, unknown>;
      return { status: res.status, body, ms: performance.now() - started };
    },
    ready: async () => (await fetch(`${url}/readyz`).catch(() => undefined))?.status === 200,
  };
  await waitUntil(
    () => sidecar.ready(),
    () => `enforcer on ${port} to be ready (${describeProcess(proc)})`,
    60_000,
    10,
  );
  return sidecar;
}

/** Events the group has not committed yet, summed over the topic's partitions, from the broker's own offsets. */
export async function consumerLag(admin: Admin, groupId: string, topic: string): Promise<number> {
  const [ends, [committed]] = await Promise.all([admin.fetchTopicOffsets(topic), admin.fetchOffsets({ groupId, topics: [topic] })]);
  let lag = 0;
  for (const e of ends) {
    const offset = Number(committed?.partitions.find((p) => p.partition === e.partition)?.offset ?? '-1');
    lag += Number(e.high) - (offset < 0 ? Number(e.low) : offset);
  }
  return lag;
}
