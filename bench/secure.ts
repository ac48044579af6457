/**
 * `--secure` for the Kafka benchmarks (ingest, aggregator): a broker of the run's own
 * (the integration tests' SASL_SSL KRaft broker, test/support/secure-broker.ts) with a
 * second, PLAINTEXT listener, so a benchmark measures the same work over both in one
 * run and only the transport differs: TLS (a CA made by the run) and SCRAM-SHA-512
 * with the service's own principal and ACLs, against no TLS and no login. The
 * plaintext side connects as User:ANONYMOUS, a super user (no ACL is looked up);
 * the secured side as the role's user, its ACLs looked up on each request, as in production.
 */
import type { Admin, KafkaSecurity } from '@banstream/kafka';
import { createLogger } from '@banstream/platform';
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
  const broker = await startSecureBroker(users, createLogger({ service: 'bench-broker', level: 'fatal' }), { plaintextListener: true, heap: '1g' });
  const plaintextBrokers = broker.plaintextBrokers!;
  note(`broker: SASL_SSL ${broker.brokers}, PLAINTEXT ${plaintextBrokers}`);
  return {
    broker,
    plaintext: { name: 'plaintext', brokers: plaintextBrokers, security: undefined, env: { KAFKA_BROKERS: plaintextBrokers } },
    secure: (user) => ({ name: 'sasl_ssl', brokers: broker.brokers, security: broker.security(user), env: broker.env(user) }),
    stop: () => broker.stop(),
  };
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
