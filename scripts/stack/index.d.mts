// Types for the stack library (plain JavaScript so it runs before any build).
export interface StackSettings {
  dir: string;
  kafkaLibs: string;
  /** infra/kafka/server.properties.template and the brokers' log4j2 configuration. */
  kafkaTemplate: string;
  kafkaLog4j: string;
  kafkaPort: number;
  controllerPort: number;
  redisPort: number;
  logs: string;
  /** One entry per broker, ids from 1: broker+controller nodes, or dedicated brokers when kafkaControllers is not empty. */
  kafkaNodes: KafkaNode[];
  /** Dedicated controller nodes, ids from 101 (BANSTREAM_KAFKA_CONTROLLERS); empty when every node is both. */
  kafkaControllers: KafkaNode[];
  /** Replication factor for topics on this stack: min(3, nodes). */
  replicationFactor: number;
  /** Every node's address, comma-separated. */
  kafkaBrokers: string;
  redisUrl: string;
  /** BANSTREAM_KAFKA_JIT: HotSpot's whole JIT (`full`, one node's default) or C1 alone (`quick`, a cluster's). */
  kafkaJit: 'full' | 'quick';
}
export interface KafkaNode {
  id: number;
  /** Absent: broker and controller. */
  role?: 'broker' | 'controller';
  /** A broker's Kafka port (none on a dedicated controller). */
  port?: number;
  /** A controller's port (none on a dedicated broker). */
  controllerPort?: number;
  dataDir: string;
  logs: string;
  pidFile: string;
  configFile: string;
}
export interface StackConnection {
  KAFKA_BROKERS: string;
  REDIS_URL: string;
  TOPIC_REPLICATION_FACTOR: string;
}
export declare class StackError extends Error {}
/** BANSTREAM_KAFKA_CONTROLLERS read: 0 (every node both) to 5; throws StackError otherwise. */
export declare function controllerCount(raw: string | undefined): number;
export declare function stackSettings(env?: Record<string, string | undefined>): StackSettings;
export declare function stackUp(settings?: StackSettings, log?: (line: string) => void): Promise<StackConnection>;
export declare function stackDown(settings?: StackSettings): Promise<{ kafka: string; redis: string }>;
export declare function stackStatus(settings?: StackSettings): { kafka: string; redis: string };
export declare function fetchKafka(settings: StackSettings, log?: (line: string) => void): void;
export declare function ensureDebianPackage(binary: string, pkg: string, log?: (line: string) => void): void;
/** Stops one node: SIGTERM is a clean shutdown, SIGKILL a crash; resolves once it is gone. */
export declare function stopKafkaNode(settings: StackSettings, id: number, signal?: 'SIGTERM' | 'SIGKILL'): Promise<string>;
/** Starts one node again and waits until it answers. */
export declare function startKafkaNode(settings: StackSettings, id: number, log?: (line: string) => void): Promise<void>;
export declare function kafkaNodePid(settings: StackSettings, id: number): number | undefined;
export declare function kafkaNodeProperties(
  template: string,
  node: {
    nodeId: number;
    role?: 'combined' | 'broker' | 'controller';
    kafkaPort?: number;
    controllerPort?: number;
    dataDir: string;
    voters: { id: number; controllerPort: number }[];
    /** How many brokers: needed with dedicated roles (combined: the voters). */
    brokers?: number;
    extra?: Record<string, string>;
  },
): string;
