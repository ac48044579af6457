#!/usr/bin/env node
// npm run stack:up | stack:down | stack:status | stack:fetch
// Real Apache Kafka (KRaft) and Redis for development and tests, without Docker.
import { fetchKafka, stackDown, stackSettings, stackStatus, stackUp, StackError } from './stack/index.mjs';

const command = process.argv[2];
try {
  const settings = stackSettings();
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
    console.error('usage: node scripts/stack.mjs up|down|status|fetch');
    process.exit(64);
  }
} catch (error) {
  console.error(`stack ${command}: ${error instanceof StackError ? error.message : error.stack}`);
  process.exit(1);
}
