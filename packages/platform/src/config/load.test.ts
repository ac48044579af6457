import { describe, expect, it } from 'vitest';
import { isBanstreamError } from '@banstream/core';
import { env } from './env.js';
import { loadConfig } from './load.js';

const vars = {
  KAFKA_BROKERS: env.KAFKA_BROKERS,
  HTTP_PORT: env.HTTP_PORT,
  LOG_LEVEL: env.LOG_LEVEL,
  TOPIC_AUTO_CREATE: env.TOPIC_AUTO_CREATE,
  REDIS_URL: env.REDIS_URL,
  KAFKA_CLIENT_ID: env.KAFKA_CLIENT_ID,
};

function errorOf(source: Record<string, string>): Error {
  try {
    loadConfig(vars, source);
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected loadConfig to throw');
}

describe('loadConfig', () => {
  it('converts, applies defaults and freezes', () => {
    const config = loadConfig(vars, { KAFKA_BROKERS: '10.0.0.1:9092,broker-2:9093', HTTP_PORT: '8080', REDIS_URL: 'redis://r:6379', TOPIC_AUTO_CREATE: 'false' });
    expect(config).toEqual({ KAFKA_BROKERS: '10.0.0.1:9092,broker-2:9093', HTTP_PORT: 8080, LOG_LEVEL: 'info', TOPIC_AUTO_CREATE: false, REDIS_URL: 'redis://r:6379' });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('names every missing variable with the form it expects', () => {
    const error = errorOf({});
    expect(isBanstreamError(error, 'CONFIG_INVALID')).toBe(true);
    expect(error.message).toBe(
      'invalid configuration:\n' +
        '  KAFKA_BROKERS: missing; expected a comma-separated list of host:port, e.g. 127.0.0.1:9092,127.0.0.1:9093\n' +
        '  HTTP_PORT: missing; expected a TCP port from 0 to 65535',
    );
  });

  it('quotes the bad value and says what was expected', () => {
    const error = errorOf({ KAFKA_BROKERS: 'kafka', HTTP_PORT: '80a', LOG_LEVEL: 'loud', REDIS_URL: 'redis://x:1', TOPIC_AUTO_CREATE: 'maybe' });
    expect(error.message).toContain('KAFKA_BROKERS: expected a comma-separated list of host:port, e.g. 127.0.0.1:9092,127.0.0.1:9093 (got "kafka")');
    expect(error.message).toContain('HTTP_PORT: expected a TCP port from 0 to 65535 (got "80a")');
    expect(error.message).toContain('LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent (got "loud")');
    expect(error.message).toContain('TOPIC_AUTO_CREATE: expected true or false (got "maybe")');
    expect(error.message).not.toContain('REDIS_URL');
  });

  it('rejects out-of-range numbers and never echoes a password', () => {
    const error = errorOf({ KAFKA_BROKERS: 'k:1', HTTP_PORT: '70000', REDIS_URL: 'http://user:hunter2@redis:6379' });
    expect(error.message).toContain('HTTP_PORT: expected a TCP port from 0 to 65535 (got "70000")');
    expect(error.message).toContain('REDIS_URL: expected a redis:// or rediss:// URL');
    expect(error.message).not.toContain('hunter2');
  });

  it('refuses a Kafka request timeout under a second: each timeout closes its connection, and a busy broker would be reconnected to on most requests', () => {
    const withTimeout = { ...vars, KAFKA_REQUEST_TIMEOUT_MS: env.KAFKA_REQUEST_TIMEOUT_MS };
    const base = { KAFKA_BROKERS: 'k:1', HTTP_PORT: '1', REDIS_URL: 'redis://x' };
    expect(() => loadConfig(withTimeout, { ...base, KAFKA_REQUEST_TIMEOUT_MS: '500' })).toThrow('KAFKA_REQUEST_TIMEOUT_MS: expected milliseconds from 1000 to 120000 (got "500")');
    expect(loadConfig(withTimeout, { ...base, KAFKA_REQUEST_TIMEOUT_MS: '1000' }).KAFKA_REQUEST_TIMEOUT_MS).toBe(1000);
  });

  it('treats an empty variable as unset', () => {
    const config = loadConfig(vars, { KAFKA_BROKERS: 'k:1', HTTP_PORT: '1', REDIS_URL: 'redis://x', KAFKA_CLIENT_ID: '', LOG_LEVEL: '' });
    expect(config.KAFKA_CLIENT_ID).toBeUndefined();
    expect(config.LOG_LEVEL).toBe('info');
  });
});
