import { pino, type Logger, type LevelWithSilent } from 'pino';

export type { Logger };

export interface LoggerOptions {
  service: string;
  level: LevelWithSilent;
  /** Defaults to stdout; tests pass a stream to read what was logged. */
  destination?: NodeJS.WritableStream;
}

/**
 * The root logger of a process. Components get `logger.child({ component })`.
 * Secrets are redacted by path as a second line of defence; the first is never
 * putting them in log objects.
 */
export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level,
      base: { service: options.service },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: [
          '*.password',
          '*.passphrase',
          '*.token',
          '*.secret',
          '*.authorization',
          'headers.authorization',
          'config.REDIS_URL',
          'config.KAFKA_SASL_PASSWORD',
          'config.KAFKA_TLS_KEY_PASSWORD',
          'config.REDIS_PASSWORD',
          'config.REDIS_SENTINEL_PASSWORD',
          '*.sasl',
          '*.ssl',
        ],
        censor: '<redacted>',
      },
    },
    options.destination ?? pino.destination({ sync: false }),
  );
}
