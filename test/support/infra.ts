import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { Writable } from 'node:stream';
import { createLogger, type Logger } from '@banstream/platform';

/** Addresses of the real brokers the global setup found or started. */
export function testInfra(): { kafkaBrokers: string; redisUrl: string } {
  return { kafkaBrokers: inject('kafkaBrokers'), redisUrl: inject('redisUrl') };
}

/** A random suffix so every test's topics, groups and keys are its own. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
}

/** A logger whose lines tests can read; silent on the terminal. */
export function captureLogger(): { logger: Logger; lines: () => Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n')) if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger({ service: 'test', level: 'debug', destination }), lines: () => lines };
}

/**
 * Polls until `check` returns a value that is not undefined/false, or fails naming what
 * it waited for; `what` may be a function, read at the timeout (a process's output then).
 */
export async function waitUntil<T>(check: () => Promise<T | undefined | false> | T | undefined | false, what: string | (() => string), timeoutMs = 20_000, intervalMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
      // The message names the last attempt's failure, not one from before a later attempt answered.
      lastError = undefined;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${typeof what === 'function' ? what() : what}${lastError ? `: ${String(lastError)}` : ''}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
