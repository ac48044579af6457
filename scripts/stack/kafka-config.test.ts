import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { kafkaNodeProperties, StackError, stackSettings } from './index.mjs';

const TEMPLATE = readFileSync(join(import.meta.dirname, '../../infra/kafka/server.properties.template'), 'utf8');
const THREE = [
  { id: 1, controllerPort: 39003 },
  { id: 2, controllerPort: 39004 },
  { id: 3, controllerPort: 39005 },
];

/** The key=value lines of a properties text (comments and blanks left out). */
function parse(text: string): Record<string, string> {
  const entries = text
    .split('\n')
    .filter((l) => l.trim() !== '' && !l.startsWith('#'))
    .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)] as const);
  return Object.fromEntries(entries);
}

describe('kafkaNodeProperties', () => {
  it('gives a node of three its own id, ports and folder, the whole quorum, and three replicas (two in sync) for internal topics', () => {
    const p = parse(kafkaNodeProperties(TEMPLATE, { nodeId: 2, kafkaPort: 39001, controllerPort: 39004, dataDir: '/data/node-2', voters: THREE }));
    expect(p['node.id']).toBe('2');
    expect(p['process.roles']).toBe('broker,controller');
    expect(p['controller.quorum.voters']).toBe('1@127.0.0.1:39003,2@127.0.0.1:39004,3@127.0.0.1:39005');
    expect(p.listeners).toBe('PLAINTEXT://127.0.0.1:39001,CONTROLLER://127.0.0.1:39004');
    expect(p['advertised.listeners']).toBe('PLAINTEXT://127.0.0.1:39001');
    expect(p['log.dirs']).toBe('/data/node-2');
    for (const key of ['offsets.topic.replication.factor', 'transaction.state.log.replication.factor', 'share.coordinator.state.topic.replication.factor', 'default.replication.factor']) {
      expect(p[key], key).toBe('3');
    }
    expect(p['transaction.state.log.min.isr']).toBe('2');
    expect(p['share.coordinator.state.topic.min.isr']).toBe('2');
    // No placeholder is left for Kafka to choke on.
    expect(Object.values(p).join('\n')).not.toContain('${');
  });

  it('keeps the single node as it always was: one voter, one replica', () => {
    const p = parse(kafkaNodeProperties(TEMPLATE, { nodeId: 1, kafkaPort: 19092, controllerPort: 19093, dataDir: '/d', voters: [{ id: 1, controllerPort: 19093 }] }));
    expect(p['controller.quorum.voters']).toBe('1@127.0.0.1:19093');
    expect(p['offsets.topic.replication.factor']).toBe('1');
    expect(p['transaction.state.log.min.isr']).toBe('1');
  });

  it('detects a dead node of a cluster sooner than Kafka would: quorum fetch 1 s, election 500 ms, broker session 1 s with heartbeats every 250 ms', () => {
    const p = parse(kafkaNodeProperties(TEMPLATE, { nodeId: 1, kafkaPort: 39000, controllerPort: 39003, dataDir: '/d', voters: THREE }));
    expect(p['controller.quorum.fetch.timeout.ms']).toBe('1000');
    expect(p['controller.quorum.election.timeout.ms']).toBe('500');
    expect(p['controller.quorum.election.backoff.max.ms']).toBe('500');
    expect(p['broker.session.timeout.ms']).toBe('1000');
    expect(p['broker.heartbeat.interval.ms']).toBe('250');
    // A partition a follower starts to follow joins its next fetch: acks=all writes to a new leader wait out the one in flight.
    expect(p['replica.fetch.wait.max.ms']).toBe('100');
  });

  it("keeps a single node's session at 3 s (fencing the only broker stops everything) and Kafka's own quorum timeouts", () => {
    const p = parse(kafkaNodeProperties(TEMPLATE, { nodeId: 1, kafkaPort: 19092, controllerPort: 19093, dataDir: '/d', voters: [{ id: 1, controllerPort: 19093 }] }));
    expect(p['broker.session.timeout.ms']).toBe('3000');
    expect(p['broker.heartbeat.interval.ms']).toBe('500');
    expect(p['controller.quorum.fetch.timeout.ms']).toBe('2000');
    expect(p['controller.quorum.election.timeout.ms']).toBe('1000');
    expect(p['controller.quorum.election.backoff.max.ms']).toBe('1000');
    expect(p['replica.fetch.wait.max.ms']).toBe('500');
  });

  it("gives every quorum size timeouts with margin: heartbeats at most a quarter of the session, a quorum fetch timeout above KRaft's 500 ms fetch wait", () => {
    for (let n = 1; n <= 5; n++) {
      const voters = Array.from({ length: n }, (_, i) => ({ id: i + 1, controllerPort: 40_000 + i }));
      const text = kafkaNodeProperties(TEMPLATE, { nodeId: 1, kafkaPort: 39999, controllerPort: 40_000, dataDir: '/d', voters });
      const p = parse(text);
      expect(Object.values(p).join('\n'), `${n} nodes`).not.toContain('${');
      expect(Number(p['broker.heartbeat.interval.ms']) * 4, `${n} nodes`).toBeLessThanOrEqual(Number(p['broker.session.timeout.ms']));
      // A leader that hears from no majority for 1.5 fetch timeouts resigns; followers' fetches wait up to 500 ms at it.
      expect(Number(p['controller.quorum.fetch.timeout.ms']), `${n} nodes`).toBeGreaterThanOrEqual(1000);
      expect(Number(p['controller.quorum.election.timeout.ms']), `${n} nodes`).toBeLessThan(Number(p['controller.quorum.fetch.timeout.ms']));
    }
  });

  it('caps internal replicas at three on five nodes and appends extra settings', () => {
    const five = [1, 2, 3, 4, 5].map((id) => ({ id, controllerPort: 40_000 + id }));
    const text = kafkaNodeProperties(TEMPLATE, { nodeId: 5, kafkaPort: 39999, controllerPort: 40_005, dataDir: '/d', voters: five, extra: { 'broker.session.timeout.ms': '2000' } });
    const p = parse(text);
    expect(p['offsets.topic.replication.factor']).toBe('3');
    expect(p['broker.session.timeout.ms']).toBe('2000');
  });

  it('makes a dedicated controller and a dedicated broker of a cluster whose controllers run apart', () => {
    const controllers = [101, 102, 103].map((id, i) => ({ id, controllerPort: 39003 + i }));
    const c = parse(kafkaNodeProperties(TEMPLATE, { nodeId: 102, role: 'controller', controllerPort: 39004, dataDir: '/c', voters: controllers, brokers: 3 }));
    expect(c['process.roles']).toBe('controller');
    expect(c.listeners).toBe('CONTROLLER://127.0.0.1:39004');
    expect(c['advertised.listeners']).toBe('CONTROLLER://127.0.0.1:39004');
    expect(c['controller.quorum.voters']).toBe('101@127.0.0.1:39003,102@127.0.0.1:39004,103@127.0.0.1:39005');
    const b = parse(kafkaNodeProperties(TEMPLATE, { nodeId: 2, role: 'broker', kafkaPort: 39001, dataDir: '/b', voters: controllers, brokers: 3 }));
    expect(b['process.roles']).toBe('broker');
    expect(b.listeners).toBe('PLAINTEXT://127.0.0.1:39001');
    expect(b['advertised.listeners']).toBe('PLAINTEXT://127.0.0.1:39001');
    expect(b['controller.quorum.voters']).toBe(c['controller.quorum.voters']);
    // Replicas follow the brokers, not the voters.
    expect(b['offsets.topic.replication.factor']).toBe('3');
    // No election can come with a broker's death: its session is the whole detection.
    for (const p of [b, c]) {
      expect(p['broker.session.timeout.ms']).toBe('500');
      expect(p['broker.heartbeat.interval.ms']).toBe('125');
      expect(p['replica.fetch.wait.max.ms']).toBe('100');
      expect(Object.values(p).join('\n')).not.toContain('${');
    }
    const lone = parse(kafkaNodeProperties(TEMPLATE, { nodeId: 1, role: 'broker', kafkaPort: 39001, dataDir: '/b', voters: controllers, brokers: 1 }));
    expect(lone['broker.session.timeout.ms'], 'one broker: nowhere to move its partitions').toBe('3000');
    expect(lone['offsets.topic.replication.factor']).toBe('1');
  });

  it('refuses a dedicated broker listed as a voter, a dedicated node without the brokers count, and an unknown role', () => {
    expect(() => kafkaNodeProperties(TEMPLATE, { nodeId: 1, role: 'broker', kafkaPort: 1, dataDir: '/d', voters: THREE, brokers: 3 })).toThrow(
      /node 1 is a dedicated broker but also one of the quorum's voters/,
    );
    expect(() => kafkaNodeProperties(TEMPLATE, { nodeId: 9, role: 'broker', kafkaPort: 1, dataDir: '/d', voters: THREE })).toThrow(/needs its number of brokers/);
    // @ts-expect-error: not a role
    expect(() => kafkaNodeProperties(TEMPLATE, { nodeId: 1, role: 'both', kafkaPort: 1, controllerPort: 39003, dataDir: '/d', voters: THREE })).toThrow(
      /role "both" is none of combined, broker, controller/,
    );
  });

  it('refuses a node outside the quorum, a controller port its voter entry does not have, repeated ids and unknown placeholders', () => {
    expect(() => kafkaNodeProperties(TEMPLATE, { nodeId: 4, kafkaPort: 1, controllerPort: 2, dataDir: '/d', voters: THREE })).toThrow(/node 4 is not one of the quorum's voters \(1, 2, 3\)/);
    expect(() => kafkaNodeProperties(TEMPLATE, { nodeId: 1, kafkaPort: 1, controllerPort: 2, dataDir: '/d', voters: THREE })).toThrow(/controller port 2 differs from its voter entry's 39003/);
    expect(() => kafkaNodeProperties(TEMPLATE, { nodeId: 1, kafkaPort: 1, controllerPort: 39003, dataDir: '/d', voters: [...THREE, THREE[0]!] })).toThrow(/voter ids repeat/);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a template placeholder
    expect(() => kafkaNodeProperties('x=${NOPE}', { nodeId: 1, kafkaPort: 1, controllerPort: 39003, dataDir: '/d', voters: THREE })).toThrow(/unknown placeholder \$\{NOPE\}/);
  });
});

describe('the stack layout for N Kafka nodes', () => {
  it('puts three nodes on consecutive broker ports, then consecutive controller ports, each with its own folder, logs and pid file', () => {
    const s = stackSettings({ BANSTREAM_STACK_DIR: '/tmp/s', BANSTREAM_KAFKA_PORT: '39000', BANSTREAM_KAFKA_BROKERS: '3' });
    expect(s.kafkaNodes.map((n) => [n.id, n.port, n.controllerPort])).toEqual([
      [1, 39000, 39003],
      [2, 39001, 39004],
      [3, 39002, 39005],
    ]);
    expect(s.kafkaBrokers).toBe('127.0.0.1:39000,127.0.0.1:39001,127.0.0.1:39002');
    expect(s.replicationFactor).toBe(3);
    for (const key of ['dataDir', 'logs', 'pidFile', 'configFile'] as const) expect(new Set(s.kafkaNodes.map((n) => n[key])).size, key).toBe(3);
    expect(s.kafkaNodes[0]!.dataDir).toBe('/tmp/s/kafka-cluster-3/node-1');
  });

  it('keeps the one-node layout of before: :19092, controller :19093, kafka-data, kafka.pid', () => {
    const s = stackSettings({ BANSTREAM_STACK_DIR: '/tmp/s' });
    expect(s.kafkaNodes).toEqual([
      { id: 1, port: 19092, controllerPort: 19093, dataDir: '/tmp/s/kafka-data', logs: '/tmp/s/logs', pidFile: '/tmp/s/kafka.pid', configFile: '/tmp/s/kafka-server.properties' },
    ]);
    expect(s.kafkaBrokers).toBe('127.0.0.1:19092');
    expect(s.replicationFactor).toBe(1);
  });

  it('with dedicated controllers: brokers on the broker ports, controllers 101.. on the controller ports, a folder of their own', () => {
    const s = stackSettings({ BANSTREAM_STACK_DIR: '/tmp/s', BANSTREAM_KAFKA_PORT: '39000', BANSTREAM_KAFKA_BROKERS: '3', BANSTREAM_KAFKA_CONTROLLERS: '3' });
    expect(s.kafkaNodes.map((n) => [n.id, n.role, n.port, n.controllerPort])).toEqual([
      [1, 'broker', 39000, undefined],
      [2, 'broker', 39001, undefined],
      [3, 'broker', 39002, undefined],
    ]);
    expect(s.kafkaControllers.map((n) => [n.id, n.role, n.controllerPort])).toEqual([
      [101, 'controller', 39003],
      [102, 'controller', 39004],
      [103, 'controller', 39005],
    ]);
    expect(s.kafkaBrokers).toBe('127.0.0.1:39000,127.0.0.1:39001,127.0.0.1:39002');
    expect(s.replicationFactor).toBe(3);
    const all = [...s.kafkaNodes, ...s.kafkaControllers];
    for (const key of ['dataDir', 'logs', 'pidFile', 'configFile'] as const) expect(new Set(all.map((n) => n[key])).size, key).toBe(6);
    // Never the combined layout's folders or pid files: switching layouts mixes nothing.
    const combined = stackSettings({ BANSTREAM_STACK_DIR: '/tmp/s', BANSTREAM_KAFKA_PORT: '39000', BANSTREAM_KAFKA_BROKERS: '3' });
    for (const n of combined.kafkaNodes) for (const m of all) expect([m.dataDir, m.pidFile]).not.toContain(n.dataDir);
    expect(all.map((n) => n.pidFile)).not.toContain(combined.kafkaNodes[0]!.pidFile);
    expect(combined.kafkaControllers).toEqual([]);
  });

  it('runs a cluster on C1 alone and one node on the whole JIT, unless BANSTREAM_KAFKA_JIT says otherwise', () => {
    expect(stackSettings({ BANSTREAM_STACK_DIR: '/tmp/s' }).kafkaJit).toBe('full');
    expect(stackSettings({ BANSTREAM_STACK_DIR: '/tmp/s', BANSTREAM_KAFKA_BROKERS: '3' }).kafkaJit).toBe('quick');
    expect(stackSettings({ BANSTREAM_STACK_DIR: '/tmp/s', BANSTREAM_KAFKA_BROKERS: '3', BANSTREAM_KAFKA_CONTROLLERS: '3' }).kafkaJit).toBe('quick');
    expect(stackSettings({ BANSTREAM_STACK_DIR: '/tmp/s', BANSTREAM_KAFKA_BROKERS: '3', BANSTREAM_KAFKA_JIT: 'full' }).kafkaJit).toBe('full');
    expect(stackSettings({ BANSTREAM_STACK_DIR: '/tmp/s', BANSTREAM_KAFKA_JIT: 'quick' }).kafkaJit).toBe('quick');
    for (const bad of ['c1', 'FULL', ' quick'])
      expect(() => stackSettings({ BANSTREAM_KAFKA_JIT: bad })).toThrow(/BANSTREAM_KAFKA_JIT: expected full \(C1 and C2, as in production\) or quick \(C1 alone\)/);
  });

  it('refuses a controller count outside 0..5, naming the setting', () => {
    for (const bad of ['-1', '6', 'three'])
      expect(() => stackSettings({ BANSTREAM_KAFKA_CONTROLLERS: bad })).toThrow(/BANSTREAM_KAFKA_CONTROLLERS \/ --controllers: expected a number of dedicated controller nodes from 0/);
  });

  it('refuses a node count outside 1..5 and controller ports that overlap the brokers, naming the setting', () => {
    for (const bad of ['0', '6', 'three', '2.5']) {
      expect(() => stackSettings({ BANSTREAM_KAFKA_BROKERS: bad })).toThrow(StackError);
      expect(() => stackSettings({ BANSTREAM_KAFKA_BROKERS: bad })).toThrow(/BANSTREAM_KAFKA_BROKERS \/ --brokers: expected a number of Kafka nodes from 1 to 5/);
    }
    expect(() => stackSettings({ BANSTREAM_KAFKA_BROKERS: '3', BANSTREAM_KAFKA_PORT: '39000', BANSTREAM_KAFKA_CONTROLLER_PORT: '39002' })).toThrow(
      /port 39002 would serve both a broker and a controller/,
    );
    expect(() => stackSettings({ BANSTREAM_KAFKA_BROKERS: '3', BANSTREAM_KAFKA_PORT: '65534' })).toThrow(/run past 65535/);
  });
});
