// Types for the stack library (plain JavaScript so it runs before any build).
export interface StackSettings {
  dir: string;
  kafkaLibs: string;
  kafkaPort: number;
  controllerPort: number;
  redisPort: number;
  logs: string;
  kafkaBrokers: string;
  redisUrl: string;
}
export declare class StackError extends Error {}
export declare function stackSettings(env?: Record<string, string | undefined>): StackSettings;
export declare function stackUp(settings?: StackSettings, log?: (line: string) => void): Promise<{ KAFKA_BROKERS: string; REDIS_URL: string }>;
export declare function stackDown(settings?: StackSettings): Promise<{ kafka: string; redis: string }>;
export declare function stackStatus(settings?: StackSettings): { kafka: string; redis: string };
export declare function fetchKafka(settings: StackSettings, log?: (line: string) => void): void;
export declare function ensureDebianPackage(binary: string, pkg: string, log?: (line: string) => void): void;
