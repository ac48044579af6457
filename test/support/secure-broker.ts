import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createKafka, type Admin, type Kafka, type KafkaSecurity } from '@banstream/kafka';
import type { Logger } from '@banstream/platform';
import { freePort, REPO_ROOT } from './processes.js';

/**
 * A Kafka broker of a test's own, secured as a production cluster would be: one KRaft
 * node from the Maven jars (.stack/kafka-libs, `npm run stack:fetch`), a SASL_SSL
 * listener (SCRAM-SHA-512, SCRAM-SHA-256 and PLAIN) with a certificate signed by a CA
 * the set-up makes with openssl, and KRaft's ACL authorizer denying whatever no ACL
 * allows. `admin` is the super user that sets up topics and ACLs; every other user
 * gets only what its ACLs give.
 */
export interface SecureBroker {
  brokers: string;
  /** The same broker's PLAINTEXT listener (no TLS, no login: User:ANONYMOUS, a super user), when asked for. */
  plaintextBrokers: string | undefined;
  dir: string;
  /** PEM files: the CA that signed the broker's certificate, and an unrelated one. */
  caFile: string;
  otherCaFile: string;
  /** The password of every user (SCRAM-SHA-512 and PLAIN): `<name>-secret`. */
  password(user: string): string;
  /** The port's security settings for a user over SASL_SSL. */
  security(user: string, mechanism?: 'scram-sha-512' | 'scram-sha-256' | 'plain'): KafkaSecurity;
  /** A client of the port for a user. */
  client(user: string, logger: Logger, mechanism?: 'scram-sha-512' | 'scram-sha-256' | 'plain'): Kafka;
  /** The service variables for a user (files written under `dir`). */
  env(user: string): Record<string, string>;
  output(): string;
  stop(): Promise<void>;
}

const KAFKA_LIBS = process.env.BANSTREAM_KAFKA_LIBS ?? join(REPO_ROOT, '.stack', 'kafka-libs');

function openssl(dir: string, ...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** A CA, and a broker certificate it signs for 127.0.0.1 and localhost (PKCS#8 key, as Kafka's PEM key store wants). */
export function makeCertificates(dir: string): { caFile: string; otherCaFile: string; brokerPem: string } {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2'];
  openssl(dir, 'req', '-x509', ...ec, '-subj', '/O=banstream test/CN=banstream test CA', '-keyout', 'ca.key', '-out', 'ca.crt');
  openssl(dir, 'req', '-x509', ...ec, '-subj', '/CN=someone else CA', '-keyout', 'other-ca.key', '-out', 'other-ca.crt');
  openssl(dir, 'req', ...ec, '-subj', '/CN=localhost', '-keyout', 'broker.key', '-out', 'broker.csr');
  writeFileSync(join(dir, 'broker.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n');
  openssl(dir, 'x509', '-req', '-in', 'broker.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2', '-extfile', 'broker.ext', '-out', 'broker.crt');
  const brokerPem = join(dir, 'broker.pem');
  writeFileSync(brokerPem, readFileSync(join(dir, 'broker.key'), 'utf8') + readFileSync(join(dir, 'broker.crt'), 'utf8'));
  return { caFile: join(dir, 'ca.crt'), otherCaFile: join(dir, 'other-ca.crt'), brokerPem };
}

function javaArgs(dir: string, mainClass: string, args: string[], heap = '384m', fullJit = false): string[] {
  return [
    `-Xmx${heap}`,
    '-Xms128m',
    '-XX:+UseG1GC',
    ...(fullJit ? [] : ['-XX:TieredStopAtLevel=1']),
    '-Djava.awt.headless=true',
    `-Dlog4j2.configurationFile=${join(REPO_ROOT, 'infra', 'kafka', 'log4j2.properties')}`,
    `-Dkafka.logs.dir=${join(dir, 'logs')}`,
    '-cp',
    `${KAFKA_LIBS}/*`,
    mainClass,
    ...args,
  ];
}

export interface SecureBrokerOptions {
  /** A second listener in clear on the same broker, so a benchmark can compare transports and nothing else. */
  plaintextListener?: boolean;
  /** The broker's heap (-Xmx), default 384m. */
  heap?: string;
  /**
   * The JVM's full JIT (C2), as a production broker runs, for a benchmark. Tests start
   * faster on C1 alone, which has no AES-GCM intrinsics: TLS costs several times more there.
   */
  fullJit?: boolean;
}

/**
 * Its ports: BANSTREAM_SECURE_BROKER_PORTS (SASL_SSL, controller, plaintext; comma-separated)
 * when set, so a machine shared by several runs can give each a range of its own; else free ones.
 */
async function brokerPorts(): Promise<[number, number, number]> {
  const fixed = process.env.BANSTREAM_SECURE_BROKER_PORTS;
  if (fixed === undefined || fixed === '') return [await freePort(), await freePort(), await freePort()];
  const ports = fixed.split(',').map(Number);
  if (ports.length !== 3 || !ports.every((p) => Number.isInteger(p) && p > 0 && p < 65_536)) {
    throw new Error(`BANSTREAM_SECURE_BROKER_PORTS: expected three ports (SASL_SSL, controller, plaintext), got ${fixed}`);
  }
  return ports as [number, number, number];
}

export async function startSecureBroker(users: readonly string[], logger: Logger, options: SecureBrokerOptions = {}): Promise<SecureBroker> {
  if (!existsSync(KAFKA_LIBS)) throw new Error(`no Kafka jars in ${KAFKA_LIBS}: run npm run stack:fetch`);
  const dir = mkdtempSync(join(tmpdir(), 'banstream-secure-kafka-'));
  const [port, controllerPort, plainPort] = await brokerPorts();
  const plain = options.plaintextListener === true;
  const { caFile, otherCaFile, brokerPem } = makeCertificates(dir);
  const password = (user: string) => `${user}-secret`;
  const all = ['admin', ...users];
  const jaasPlain = `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="${password('admin')}" ${all.map((u) => `user_${u}="${password(u)}"`).join(' ')};`;
  const properties = [
    'process.roles=broker,controller',
    'node.id=1',
    `controller.quorum.voters=1@127.0.0.1:${controllerPort}`,
    `listeners=SASL_SSL://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}${plain ? `,PLAINTEXT://127.0.0.1:${plainPort}` : ''}`,
    `advertised.listeners=SASL_SSL://127.0.0.1:${port}${plain ? `,PLAINTEXT://127.0.0.1:${plainPort}` : ''}`,
    'controller.listener.names=CONTROLLER',
    // The controller listener stays on loopback in clear for this one-node test broker;
    // its requests (the broker's own registration) come as User:ANONYMOUS, a super user
    // below. A real cluster puts the controllers on a secured listener of their own.
    // So do a benchmark's PLAINTEXT clients: as super users they skip the ACLs' checks.
    `listener.security.protocol.map=SASL_SSL:SASL_SSL,CONTROLLER:PLAINTEXT${plain ? ',PLAINTEXT:PLAINTEXT' : ''}`,
    'inter.broker.listener.name=SASL_SSL',
    'sasl.enabled.mechanisms=SCRAM-SHA-512,SCRAM-SHA-256,PLAIN',
    'sasl.mechanism.inter.broker.protocol=PLAIN',
    `listener.name.sasl_ssl.plain.sasl.jaas.config=${jaasPlain}`,
    `listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;`,
    `listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;`,
    'ssl.keystore.type=PEM',
    `ssl.keystore.location=${brokerPem}`,
    'ssl.truststore.type=PEM',
    `ssl.truststore.location=${caFile}`,
    'ssl.client.auth=none',
    'authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer',
    'super.users=User:admin;User:ANONYMOUS',
    'allow.everyone.if.no.acl.found=false',
    `log.dirs=${join(dir, 'data')}`,
    'auto.create.topics.enable=false',
    'num.partitions=1',
    'offsets.topic.replication.factor=1',
    'offsets.topic.num.partitions=3',
    'transaction.state.log.replication.factor=1',
    'transaction.state.log.min.isr=1',
    'transaction.state.log.num.partitions=3',
    'share.coordinator.state.topic.replication.factor=1',
    'share.coordinator.state.topic.min.isr=1',
    'group.initial.rebalance.delay.ms=0',
    'delete.topic.enable=true',
  ];
  const config = join(dir, 'server.properties');
  writeFileSync(config, `${properties.join('\n')}\n`);
  mkdirSync(join(dir, 'logs'));
  let clusterId: string;
  do clusterId = Buffer.from(randomUUID().replaceAll('-', ''), 'hex').toString('base64url');
  while (clusterId.startsWith('-'));
  // SCRAM credentials go into the cluster's first metadata, so they exist before anyone connects.
  const scram = all.flatMap((u) => ['--add-scram', `SCRAM-SHA-512=[name=${u},password=${password(u)}]`, '--add-scram', `SCRAM-SHA-256=[name=${u},password=${password(u)}]`]);
  execFileSync('java', javaArgs(dir, 'kafka.tools.StorageTool', ['format', '-t', clusterId, '-c', config, ...scram]), { stdio: ['ignore', 'ignore', 'pipe'] });

  let out = '';
  const child: ChildProcess = spawn('java', javaArgs(dir, 'kafka.Kafka', [config], options.heap, options.fullJit), { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const killOnExit = (): void => void child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const brokers = `127.0.0.1:${port}`;
  const serverLog = () => {
    try {
      return readFileSync(join(dir, 'logs', 'server.log'), 'utf8')
        .split('\n')
        .slice(-40)
        .join('\n');
    } catch {
      return '';
    }
  };

  const security = (user: string, mechanism: 'scram-sha-512' | 'scram-sha-256' | 'plain' = 'scram-sha-512'): KafkaSecurity => ({
    tls: { ca: readFileSync(caFile, 'utf8') },
    sasl: { mechanism, username: user, password: password(user) },
  });
  const client = (user: string, log: Logger, mechanism?: 'scram-sha-512' | 'scram-sha-256' | 'plain') =>
    createKafka({ brokers: [brokers], clientId: `test-${user}`, logger: log, requestTimeoutMs: 5_000, security: security(user, mechanism) });

  const broker: SecureBroker = {
    brokers,
    plaintextBrokers: plain ? `127.0.0.1:${plainPort}` : undefined,
    dir,
    caFile,
    otherCaFile,
    password,
    security,
    client,
    env(user) {
      const file = join(dir, `${user}.password`);
      writeFileSync(file, `${password(user)}\n`, { mode: 0o600 });
      return {
        KAFKA_BROKERS: brokers,
        KAFKA_TLS: 'true',
        KAFKA_TLS_CA_FILE: caFile,
        KAFKA_SASL_MECHANISM: 'scram-sha-512',
        KAFKA_SASL_USERNAME: user,
        KAFKA_SASL_PASSWORD_FILE: file,
      };
    },
    output: () => `${out}\n${serverLog()}`,
    async stop() {
      process.off('exit', killOnExit);
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGKILL');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };

  // Ready when the super user gets an answer to a metadata request over SASL_SSL.
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the secured broker exited during start-up:\n${broker.output()}`);
    const admin = client('admin', logger).admin();
    try {
      await admin.connect();
      await admin.describeCluster();
      break;
    } catch (error) {
      if (Date.now() > deadline) {
        await broker.stop();
        throw new Error(`the secured broker did not answer within 90 s (${(error as Error).message}):\n${broker.output()}`);
      }
      await new Promise((r) => setTimeout(r, 500));
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
  }
  return broker;
}

type Operation = 'READ' | 'WRITE' | 'DELETE' | 'DESCRIBE' | 'IDEMPOTENT_WRITE';
const OPERATION_CODES: Record<Operation, number> = { READ: 3, WRITE: 4, DELETE: 6, DESCRIBE: 8, IDEMPOTENT_WRITE: 12 };

/**
 * The ACLs of each role (docs/operations/kafka-security.md shows the same table):
 * topics by their short name under the prefix, consumer groups by the prefix of
 * their ids. READ and WRITE imply DESCRIBE. Every role that writes gets IDEMPOTENT_WRITE on
 * the cluster: its producers are idempotent (brokers before 3.0 ask for it).
 */
export const ROLE_ACLS: Record<string, { read: string[]; write: string[]; groups: string[] }> = {
  ingest: { read: [], write: ['events'], groups: [] },
  enforcer: { read: ['bans', 'counts', 'policies', 'allowlist'], write: [], groups: ['banstream-enforcer.'] },
  control: {
    read: ['policies', 'bans', 'allowlist', 'alerts', 'events', 'aggregator-subjects', 'feeds', 'audit', 'ban-history', 'counts'],
    write: ['policies', 'allowlist', 'bans', 'audit', 'dlq', 'feeds', 'ban-history'],
    groups: ['banstream-control.'],
  },
  aggregator: {
    read: ['events', 'aggregator-subjects', 'aggregator-baselines', 'policies', 'allowlist', 'bans', 'alerts'],
    write: ['counts', 'bans', 'alerts', 'aggregator-subjects', 'aggregator-baselines', 'dlq', 'ban-history'],
    groups: ['banstream-aggregator'],
  },
};

/** Grants each role its ACLs (as the super user): kafkajs's numeric ACL codes, LITERAL topics and PREFIXED groups. */
export async function grantRoleAcls(admin: Admin, prefix: string, roles: Record<string, string> = {}): Promise<void> {
  const TOPIC = 2;
  const GROUP = 3;
  const LITERAL = 3;
  const PREFIXED = 4;
  const CLUSTER = 4;
  const ALLOW = 3;
  const acl: object[] = [];
  for (const [role, grants] of Object.entries(ROLE_ACLS)) {
    const principal = `User:${roles[role] ?? role}`;
    const entry = (resourceType: number, resourceName: string, resourcePatternType: number, operation: Operation) =>
      acl.push({ resourceType, resourceName, resourcePatternType, principal, host: '*', operation: OPERATION_CODES[operation], permissionType: ALLOW });
    for (const t of grants.read) entry(TOPIC, `${prefix}${t}.v1`, LITERAL, 'READ');
    for (const t of grants.write) entry(TOPIC, `${prefix}${t}.v1`, LITERAL, 'WRITE');
    for (const g of grants.groups) for (const op of ['READ', 'DELETE'] as const) entry(GROUP, g, PREFIXED, op);
    if (grants.write.length > 0) entry(CLUSTER, 'kafka-cluster', LITERAL, 'IDEMPOTENT_WRITE');
  }
  await admin.createAcls({ acl: acl as never });
}

/** One ACL as the ACL calls of kafkajs take it: ALLOW `operation` on a LITERAL topic for `user`. */
function topicAcl(topic: string, user: string, operation: Operation): object {
  return { resourceType: 2, resourceName: topic, resourcePatternType: 3, principal: `User:${user}`, host: '*', operation: OPERATION_CODES[operation], permissionType: 3 };
}

/** Takes back what grantRoleAcls gave: `user`'s `operation` on `topic`. */
export async function revokeTopicAcl(admin: Admin, topic: string, user: string, operation: Operation): Promise<void> {
  const result = await admin.deleteAcls({ filters: [topicAcl(topic, user, operation) as never] });
  const deleted = result.filterResponses.flatMap((r) => r.matchingAcls);
  if (deleted.length === 0) throw new Error(`no ACL to revoke: ${operation} on ${topic} for User:${user}`);
}

/** Gives `user` `operation` on `topic` (again). */
export async function grantTopicAcl(admin: Admin, topic: string, user: string, operation: Operation): Promise<void> {
  await admin.createAcls({ acl: [topicAcl(topic, user, operation) as never] });
}

/**
 * ACLs reach the authorizer through the metadata log a moment after the call: waits
 * until `probe` (a call as the user concerned) gives the expected answer.
 */
export async function untilAcls(probe: () => Promise<unknown>, expect: 'allowed' | 'refused', what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const refused = await probe().then(
      () => false,
      (error: unknown) => (error as { code?: string }).code === 'KAFKA_ACCESS_DENIED',
    );
    if (refused === (expect === 'refused')) return;
    if (Date.now() > deadline) throw new Error(`ACLs not in force after ${timeoutMs} ms: ${what} still ${refused ? 'refused' : 'allowed'}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
