/**
 * `--secure` for the Kafka benchmarks (ingest, aggregator): a broker of the run's own
 * (the integration tests' SASL_SSL KRaft broker, test/support/secure-broker.ts) with a
 * second, PLAINTEXT listener, so a benchmark measures the same work over both in one
 * run and only the transport differs: TLS (a CA made by the run) and SCRAM-SHA-512
 * with the service's own principal and ACLs, against no TLS and no login. The
 * plaintext side connects as User:ANONYMOUS, a super user (no ACL is looked up);
 * the secured side as the role's user, its ACLs looked up on each request, as in production.
 */
import { createKafka, waitForTopicLeaders, type Admin, type KafkaSecurity } from '@banstream/kafka';
import { createLogger, type Logger } from '@banstream/platform';
import { grantRoleAcls, startSecureBroker, type SecureBroker } from '../test/support/secure-broker.js';
import { note } from './lib.js';

/** `npm run bench -- ingest --secure`: the flag anywhere among the benchmark's arguments. */
export const SECURE = process.argv.slice(2).includes('--secure');

/** How a client reaches the broker: its address, its security, and the variables a service is given for it. */
export interface Transport {
  name: 'plaintext' | 'sasl_ssl';
  brokers: string;
  security: KafkaSecurity | undefined;
  /** KAFKA_BROKERS and, secured, KAFKA_TLS*, KAFKA_SASL_* (the password in a file). */
  env: Record<string, string>;
}

export interface BenchBroker {
  broker: SecureBroker;
  plaintext: Transport;
  /** The SASL_SSL listener as `user` (SCRAM-SHA-512). */
  secure(user: string): Transport;
  stop(): Promise<void>;
}

/** The run's broker, two listeners; stop() when done (it is killed with the process anyway). */
export async function startBenchBroker(users: readonly string[]): Promise<BenchBroker> {
  note('--secure: starting a SASL_SSL + PLAINTEXT broker of this run (Kafka jars from .stack/kafka-libs)');
  const logger = createLogger({ service: 'bench-broker', level: 'fatal' });
  // The full JIT, as a production broker: on C1 alone (the tests' quick start) TLS costs several times more.
  const broker = await startSecureBroker(users, logger, { plaintextListener: true, heap: '1g', fullJit: true });
  const plaintextBrokers = broker.plaintextBrokers!;
  note(`broker: SASL_SSL ${broker.brokers}, PLAINTEXT ${plaintextBrokers}`);
  await warmUp(broker, plaintextBrokers, logger);
  return {
    broker,
    plaintext: { name: 'plaintext', brokers: plaintextBrokers, security: undefined, env: { KAFKA_BROKERS: plaintextBrokers } },
    secure: (user) => ({ name: 'sasl_ssl', brokers: broker.brokers, security: broker.security(user), env: broker.env(user) }),
    stop: () => broker.stop(),
  };
}

const WARM_UP_SENDS = 300;

/**
 * The broker's JIT compiles its produce, fetch and TLS paths only once they run hot: a
 * first measurement would otherwise pay for the compilation of whichever listener it
 * uses first. ~90 MB produced and fetched back over each listener (as the super user), untimed.
 */
async function warmUp(broker: SecureBroker, plaintextBrokers: string, logger: Logger): Promise<void> {
  const started = performance.now();
  const topic = `bench-warm-up-${process.pid}`;
  const clients = [
    createKafka({ brokers: [plaintextBrokers], clientId: 'bench-warm-up', logger }),
    createKafka({ brokers: [broker.brokers], clientId: 'bench-warm-up', logger, security: broker.security('admin') }),
  ];
  const admin = clients[0]!.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 6, replicationFactor: 1 }], waitForLeaders: false });
  await waitForTopicLeaders(admin, [topic]);
  const messages = Array.from({ length: 10 }, (_, i) => ({ key: `k${i}`, value: Buffer.alloc(30_000, i) }));
  for (const [i, kafka] of clients.entries()) {
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    for (let n = 0; n < WARM_UP_SENDS; n++) await producer.send({ topic, acks: -1, messages });
    await producer.disconnect();
    const consumer = kafka.consumer({ groupId: `${topic}-${i}`, maxBytes: 10_485_760 });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    // Everything produced so far, over both listeners.
    const total = (i + 1) * WARM_UP_SENDS * messages.length;
    let seen = 0;
    await new Promise<void>((resolve) => {
      void consumer.run({
        eachBatch: async ({ batch }) => {
          seen += batch.messages.length;
          if (seen >= total) resolve();
        },
      });
    });
    await consumer.disconnect();
  }
  await admin.deleteTopics({ topics: [topic] });
  await admin.disconnect();
  note(`broker warmed up over both listeners in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

/**
 * Each role's ACLs on the run's topics (as the super user), and for `groupsOf` users
 * the consumer groups under the run's prefix too (READ and DELETE, PREFIXED); in force
 * once `probe` passes as a role.
 */
export async function grantBenchAcls(admin: Admin, prefix: string, probe: () => Promise<unknown>, groupsOf: readonly string[] = []): Promise<void> {
  await grantRoleAcls(admin, prefix);
  // kafkajs's codes: GROUP 3, PREFIXED 4, READ 3, DELETE 6, ALLOW 3.
  const acl = groupsOf.flatMap((user) =>
    [3, 6].map((operation) => ({ resourceType: 3, resourceName: prefix, resourcePatternType: 4, principal: `User:${user}`, host: '*', operation, permissionType: 3 })),
  );
  if (acl.length > 0) await admin.createAcls({ acl: acl as never });
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      await probe();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`the ACLs were not in force within 20 s: ${(error as Error).message}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/** `secure / plaintext`, rounded: the secured transport's share of the plaintext figure. */
export function secureRatio(secure: number, plaintext: number): number {
  return Number((secure / plaintext).toPrecision(3));
}
