#!/usr/bin/env node
// npm run stack:up [-- --brokers N] | stack:down | stack:status | stack:fetch
// Real Apache Kafka (KRaft, one node or a cluster) and Redis for development and tests, without Docker.
import { fetchKafka, stackDown, stackSettings, stackStatus, stackUp, StackError } from './stack/index.mjs';

const [command, ...options] = process.argv.slice(2);

/** `--brokers N` (or `--brokers=N`) wins over BANSTREAM_KAFKA_BROKERS. */
function environment() {
  const env = { ...process.env };
  for (let i = 0; i < options.length; i++) {
    const [flag, inline] = options[i].split('=', 2);
    if (flag !== '--brokers') throw new StackError(`unknown option ${options[i]} (usage: stack:up -- --brokers N)`);
    const value = inline ?? options[++i];
    if (value === undefined) throw new StackError('--brokers needs a number of Kafka nodes (1 to 5)');
    env.BANSTREAM_KAFKA_BROKERS = value;
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
    console.error('usage: node scripts/stack.mjs up [--brokers N]|down|status|fetch');
    process.exit(64);
  }
} catch (error) {
  console.error(`stack ${command}: ${error instanceof StackError ? error.message : error.stack}`);
  process.exit(1);
}
