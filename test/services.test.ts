import { afterAll, describe, expect, it } from 'vitest';
import { captureLogger, testInfra, uniqueName, waitUntil } from './support/infra.js';
import { exitWithin, freePort, spawnService, type RunningProcess } from './support/processes.js';
import { testKafka } from './support/kafka.js';

const SERVICES = ['ingest', 'aggregator', 'enforcer', 'control'] as const;

describe('the services as real processes', () => {
  const prefix = `${uniqueName('svc')}.`;
  const running: RunningProcess[] = [];

  afterAll(async () => {
    for (const p of running) p.child.kill('SIGKILL');
    const admin = testKafka(testInfra().kafkaBrokers, captureLogger().logger).admin();
    await admin.connect();
    const ours = (await admin.listTopics()).filter((t) => t.startsWith(prefix));
    if (ours.length > 0) await admin.deleteTopics({ topics: ours });
    await admin.disconnect();
  });

  it.each(SERVICES)('%s reports ready on /readyz, serves /metrics, and stops cleanly on SIGTERM', async (service) => {
    const port = await freePort();
    const { kafkaBrokers, redisUrl } = testInfra();
    const proc = spawnService(service, {
      KAFKA_BROKERS: kafkaBrokers,
      REDIS_URL: redisUrl,
      TOPIC_PREFIX: prefix,
      TOPIC_PARTITIONS: '2',
      HTTP_PORT: String(port),
      LOG_LEVEL: 'info',
      SHUTDOWN_TIMEOUT_MS: '5000',
      // The gateway takes events without an edge token only when told so (only ingest reads this).
      INGEST_ALLOW_ANONYMOUS_EDGES: 'true',
    });
    running.push(proc);

    const ready = await waitUntil(
      async () => {
        const res = await fetch(`http://127.0.0.1:${port}/readyz`);
        return res.status === 200 ? ((await res.json()) as { checks: Record<string, boolean> }) : undefined;
      },
      `${service} /readyz to answer 200`,
      30_000,
      100,
    );
    expect(ready.checks.kafka).toBe(true);
    if (service === 'enforcer') expect(ready.checks.redis).toBe(true);

    expect((await fetch(`http://127.0.0.1:${port}/livez`)).status).toBe(200);
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toContain(`banstream_process_cpu_user_seconds_total{service="${service}"}`);

    proc.child.kill('SIGTERM');
    expect(await exitWithin(proc, 10_000)).toBe(0);
    expect(proc.output()).toContain('"msg":"stopped"');
  });

  it('exits 78 with a message naming each invalid variable and the expected form', async () => {
    const proc = spawnService('enforcer', { KAFKA_BROKERS: 'localhost', HTTP_PORT: '99999', REDIS_URL: 'redis://127.0.0.1:1' });
    running.push(proc);
    expect(await exitWithin(proc, 10_000)).toBe(78);
    const output = proc.output();
    expect(output).toContain('enforcer: invalid configuration');
    expect(output).toContain('KAFKA_BROKERS: expected a comma-separated list of host:port, e.g. 127.0.0.1:9092,127.0.0.1:9093 (got "localhost")');
    expect(output).toContain('HTTP_PORT: expected a TCP port from 0 to 65535 (got "99999")');
    expect(output).not.toContain('REDIS_URL');
  });

  it('the enforcer exits 78 naming each Redis variable that does not fit REDIS_MODE, without echoing the password', async () => {
    const proc = spawnService('enforcer', {
      KAFKA_BROKERS: '127.0.0.1:1',
      HTTP_PORT: String(await freePort()),
      REDIS_MODE: 'cluster',
      REDIS_URL: 'redis://127.0.0.1:1',
      REDIS_PASSWORD: 'hunter2-redis',
      REDIS_PASSWORD_FILE: '/nonexistent/redis-password',
      REDIS_TLS_CA_FILE: '/nonexistent/ca.pem',
    });
    running.push(proc);
    expect(await exitWithin(proc, 10_000)).toBe(78);
    const output = proc.output();
    expect(output).toContain('enforcer: invalid configuration');
    expect(output).toContain('REDIS_CLUSTER_NODES: missing; required with REDIS_MODE=cluster');
    expect(output).toContain('REDIS_URL: set, but REDIS_MODE is cluster');
    expect(output).toContain('REDIS_PASSWORD_FILE: set together with REDIS_PASSWORD');
    expect(output).toContain('REDIS_TLS_CA_FILE: set, but TLS is off');
    expect(output).not.toContain('hunter2');
  });

  it('the gateway exits 78 without edge tokens unless anonymous edges are allowed, naming both variables', async () => {
    const proc = spawnService('ingest', { KAFKA_BROKERS: '127.0.0.1:1', HTTP_PORT: String(await freePort()) });
    running.push(proc);
    expect(await exitWithin(proc, 10_000)).toBe(78);
    expect(proc.output()).toContain('ingest: INGEST_EDGE_TOKENS is not set, so anyone who can reach the gateway could post events: set INGEST_EDGE_TOKENS');
    expect(proc.output()).toContain('or INGEST_ALLOW_ANONYMOUS_EDGES=true to accept edges without one');
  });

  it('refuses a clear token where only hashes belong, without echoing it', async () => {
    const proc = spawnService('control', { KAFKA_BROKERS: '127.0.0.1:1', CONTROL_TOKENS: 'alice:admin:bst_this-is-a-clear-token' });
    running.push(proc);
    expect(await exitWithin(proc, 10_000)).toBe(78);
    expect(proc.output()).toContain('CONTROL_TOKENS: expected comma-separated name:role:sha256hex entries');
    expect(proc.output()).not.toContain('bst_this-is-a-clear-token');
  });

  it('control exits 78 naming CONTROL_FEED_ALLOWED_NETWORKS and the entry that is not a network', async () => {
    const proc = spawnService('control', { KAFKA_BROKERS: '127.0.0.1:1', HTTP_PORT: String(await freePort()), CONTROL_FEED_ALLOWED_NETWORKS: '10.20.0.0/16,10.0.0.0/33' });
    running.push(proc);
    expect(await exitWithin(proc, 10_000)).toBe(78);
    expect(proc.output()).toContain('CONTROL_FEED_ALLOWED_NETWORKS: not a network: "10.0.0.0/33" (an IPv4 prefix length is an integer from 0 to 32, not 33)');
  });
});
