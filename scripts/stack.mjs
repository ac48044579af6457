#!/usr/bin/env node
// npm run stack:up [-- --brokers N [--controllers M]] | stack:down | stack:status | stack:fetch
// Real Apache Kafka (KRaft, one node or a cluster) and Redis for development and tests, without Docker.
import { fetchKafka, stackDown, stackSettings, stackStatus, stackUp, StackError } from './stack/index.mjs';

const [command, ...options] = process.argv.slice(2);

const USAGE = 'stack:up -- --brokers N [--controllers M]';
const FLAGS = {
  '--brokers': ['BANSTREAM_KAFKA_BROKERS', 'a number of Kafka nodes (1 to 5)'],
  '--controllers': ['BANSTREAM_KAFKA_CONTROLLERS', 'a number of dedicated controller nodes (0 to 5)'],
};

/** `--brokers N` and `--controllers M` (or `--flag=N`) win over their environment variables. */
function environment() {
  const env = { ...process.env };
  for (let i = 0; i < options.length; i++) {
    const [flag, inline] = options[i].split('=', 2);
    if (!(flag in FLAGS)) throw new StackError(`unknown option ${options[i]} (usage: ${USAGE})`);
    const [variable, expected] = FLAGS[flag];
    const value = inline ?? options[++i];
    if (value === undefined) throw new StackError(`${flag} needs ${expected}`);
    env[variable] = value;
  }
  return env;
}

try {
  const settings = stackSettings(environment());
  if (command === 'up') {
    const connection = await stackUp(settings);
    console.log('\nstack is up:');
    for (const [k, v] of Object.entries(connection)) console.log(`  ${k}=${v}`);
    console.log(`state and logs: ${settings.dir}    stop with: npm run stack:down`);
  } else if (command === 'down') {
    const result = await stackDown(settings);
    console.log(`kafka: ${result.kafka}\nredis: ${result.redis}`);
  } else if (command === 'status') {
    const status = stackStatus(settings);
    console.log(`kafka: ${status.kafka}\nredis: ${status.redis}`);
  } else if (command === 'fetch') {
    fetchKafka(settings);
    console.log(`kafka jars in ${settings.kafkaLibs}`);
  } else {
    console.error('usage: node scripts/stack.mjs up [--brokers N] [--controllers M]|down|status|fetch');
    process.exit(64);
  }
} catch (error) {
  console.error(`stack ${command}: ${error instanceof StackError ? error.message : error.stack}`);
  process.exit(1);
}
