// Each integration test file runs the services in its own process, as their main.ts
// would: with kafkajs patched, installed before anything makes a Kafka client.
import { installKafkaPatches } from '@banstream/kafka';

installKafkaPatches();
