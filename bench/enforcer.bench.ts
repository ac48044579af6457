/**
 * npm run bench -- enforcer
 *
 * The enforcer on this machine, each part against a ceiling measured in the same run:
 * - local checks/s with a million active bans vs a bare Map lookup loop (enforcer/local.ts);
 * - heap bytes per ban held, bans decoded as the bans feed decodes them (enforcer/ban-bytes.ts);
 * - local checks/s with a blocklist feed's 100,000 entries beside the million bans, and heap per feed ban (enforcer/with-feed.ts);
 * - sidecar HTTP checks/s vs a Fastify hello-world (enforcer/http.ts);
 * - ban feed lag, ban sent to the enforcer denying (enforcer/feed-lag.ts);
 * - Redis hard-limit checks/s vs redis-benchmark -P 16 EVALSHA of the same script (enforcer-redis.ts);
 * - gRPC ext_authz checks/s vs a bare grpc-js unary echo server (enforcer/grpc.ts).
 * Uses the local stack's Kafka and Redis (or KAFKA_BROKERS / REDIS_URL).
 * `npm run bench -- enforcer grpc` runs the gRPC part alone (a minute or so), written to
 * bench/results/enforcer-grpc.json so the full run's results stay as they are.
 */
import { execFileSync } from 'node:child_process';
import { ensureTopics, parseBrokers, topicSpecs } from '@banstream/kafka';
import { report } from './lib.js';
import { benchKafka } from './aggregator/kafka.js';
import { measureBanBytes } from './enforcer/ban-bytes.js';
import { measureFeedLag } from './enforcer/feed-lag.js';
import { measureGrpc } from './enforcer/grpc.js';
import { measureHttp } from './enforcer/http.js';
import { measureLocal } from './enforcer/local.js';
import { measureWithFeed } from './enforcer/with-feed.js';
import { measureEnforcerRedis } from './enforcer-redis.js';

const BROKERS = process.env.KAFKA_BROKERS ?? '127.0.0.1:19092';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:16379';

const GRPC_PARAMS =
  "one grpc-js client, 64 calls in flight on one connection; a CheckRequest as Envoy sends it for a browser GET (9 headers), allowed; the echo server answers a message of the same size; each warmed up with 20,000 calls, then 7 rounds of 2 s taking turns (echo, check); the ratio is the median of the rounds' own ratios; CPU per call from /proc/PID/stat (10 ms ticks) around each round";

async function main(): Promise<void> {
  execFileSync('npx', ['tsc', '-b', 'services/enforcer'], { stdio: 'inherit' });
  if (process.argv[2] === 'grpc') return grpcOnly();
  const local = measureLocal();
  const banBytes = measureBanBytes();
  const withFeed = measureWithFeed();
  const prefix = `bench-enf-${Date.now()}-${process.pid}.`;
  const kafka = benchKafka(parseBrokers(BROKERS), `bench-enforcer-${process.pid}`);
  const admin = kafka.admin();
  await admin.connect();
  try {
    await ensureTopics(admin, topicSpecs({ prefix, partitions: 3, replicationFactor: 1 }));
    const http = await measureHttp({ KAFKA_BROKERS: BROKERS, REDIS_URL, TOPIC_PREFIX: prefix, TOPIC_PARTITIONS: '3' });
    const feed = await measureFeedLag(kafka, prefix);
    const redis = await measureEnforcerRedis();
    const grpc = await measureGrpc({ KAFKA_BROKERS: BROKERS, REDIS_URL, TOPIC_PREFIX: prefix, TOPIC_PARTITIONS: '3' });
    report(
      'enforcer',
      {
        redis_part: redis.params,
        kafka: BROKERS,
        redis: REDIS_URL,
        local: '1,000,000 ip bans, two policies (a ban policy on /login, a throttle on /api/), 45% of checks from banned addresses',
        http: "autocannon, 32 keep-alive connections, POST /v1/check with a JSON request; each server warmed up 2 s, then 9 rounds of 2 s taking turns (hello-world, sidecar, sidecar with ENFORCER_BATCH_ANSWERS=false, a hello-world batching as the sidecar does); a ratio is the median of the rounds' own ratios; latencies are autocannon's at that load, medians over the rounds",
        ban_bytes: '1,000,000 IPv4 address bans, each Avro-encoded and decoded as the bans feed does, into a BanCache; heap and array buffers after a full collection, before and after',
        with_feed:
          "100,000 feed bans (80% addresses, 20% networks over 20 prefix lengths /12-/31, outside the requests' 10.0.0.0/8) beside the million, rounds taking turns without and with them; ban_bytes_per_entry: the feed bans alone, Avro-decoded into an empty BanCache after an untimed first fill",
        feed: 'library enforcer in the bench process; 100 bans 50 ms apart; check() polled every ms',
        grpc: GRPC_PARAMS,
      },
      { ...local, ...banBytes, ...withFeed, ...http, ...feed, ...redis.figures, ...grpc },
    );
  } finally {
    const topics = (await admin.listTopics()).filter((t) => t.startsWith(prefix));
    await admin.deleteTopics({ topics }).catch(() => undefined);
    await admin.disconnect();
  }
}

/** The gRPC part alone, on topics of its own. */
async function grpcOnly(): Promise<void> {
  const prefix = `bench-enf-grpc-${Date.now()}-${process.pid}.`;
  const kafka = benchKafka(parseBrokers(BROKERS), `bench-enforcer-grpc-${process.pid}`);
  const admin = kafka.admin();
  await admin.connect();
  try {
    await ensureTopics(admin, topicSpecs({ prefix, partitions: 3, replicationFactor: 1 }));
    const grpc = await measureGrpc({ KAFKA_BROKERS: BROKERS, REDIS_URL, TOPIC_PREFIX: prefix, TOPIC_PARTITIONS: '3' });
    report('enforcer-grpc', { kafka: BROKERS, redis: REDIS_URL, grpc: GRPC_PARAMS }, { ...grpc });
  } finally {
    const topics = (await admin.listTopics()).filter((t) => t.startsWith(prefix));
    await admin.deleteTopics({ topics }).catch(() => undefined);
    await admin.disconnect();
  }
}

await main();
