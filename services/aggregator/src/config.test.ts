import { describe, expect, it } from 'vitest';
import { loadConfig } from '@banstream/platform';
import { aggregatorEnv, stateDirOf } from './config.js';

const base = { KAFKA_BROKERS: 'k:1' };
const problem = (source: Record<string, string>) => {
  try {
    loadConfig(aggregatorEnv, { ...base, ...source });
  } catch (error) {
    return (error as Error).message;
  }
  return 'accepted';
};

describe('aggregator configuration: geographic alerting', () => {
  it('has sane defaults and takes per-code overrides and zones', () => {
    const config = loadConfig(aggregatorEnv, { ...base, GEO_ALERT_OVERRIDES: 'US:minRate=50;FR-IDF:ratio=4,z=6', GEO_TIME_ZONES: 'FR=Europe/Paris,US=America/New_York' });
    expect(config).toMatchObject({
      GEO_ALERT_ENABLED: true,
      GEO_ALERT_RATIO: 3,
      GEO_ALERT_Z: 5,
      GEO_ALERT_MIN_RATE: 1,
      GEO_ALERT_WARMUP_SAMPLES: 30,
      GEO_ALERT_RESOLVE_MS: 120_000,
      GEO_ALERT_COOLDOWN_MS: 900_000,
      GEO_BASELINE_ALPHA: 0.01,
      GEO_DEFAULT_TIME_ZONE: 'UTC',
      GEO_ALERT_OVERRIDES: 'US:minRate=50;FR-IDF:ratio=4,z=6',
    });
    expect(config.GEO_ALERT_WEBHOOK_URL).toBeUndefined();
  });

  it('names malformed overrides, zones and thresholds', () => {
    expect(problem({ GEO_ALERT_OVERRIDES: 'US:minrate=50' })).toContain('GEO_ALERT_OVERRIDES: expected CODE:key=value');
    expect(problem({ GEO_TIME_ZONES: 'FR:Europe/Paris' })).toContain('GEO_TIME_ZONES: expected CODE=Area/City');
    expect(problem({ GEO_ALERT_RATIO: '1' })).toContain('GEO_ALERT_RATIO: expected a number above 1');
    expect(problem({ GEO_ALERT_WEBHOOK_SECRET: 'short' })).toContain('GEO_ALERT_WEBHOOK_SECRET: expected at least 16 characters, to sign webhook bodies (got "<redacted>")');
  });

  it('never echoes a webhook URL: Slack puts its token in the path', () => {
    const message = problem({ GEO_ALERT_WEBHOOK_URL: 'ftp://hooks.example/services/T0/B0/sekrit-token' });
    expect(message).toContain('GEO_ALERT_WEBHOOK_URL: expected an http:// or https:// URL');
    expect(message).not.toContain('sekrit-token');
  });
});

describe('aggregator configuration: stalls', () => {
  it('gives every record 5 s by default, keeps traps in a directory of this user, and bounds the budget', () => {
    const config = loadConfig(aggregatorEnv, base);
    expect(config.AGGREGATOR_RECORD_BUDGET_MS).toBe(5_000);
    expect(stateDirOf(config)).toMatch(/banstream-aggregator-[0-9]+$/);
    expect(stateDirOf(loadConfig(aggregatorEnv, { ...base, AGGREGATOR_STATE_DIR: '/var/lib/banstream' }))).toBe('/var/lib/banstream');
    expect(problem({ AGGREGATOR_RECORD_BUDGET_MS: '5' })).toContain('AGGREGATOR_RECORD_BUDGET_MS: expected milliseconds from 10 to 600000');
    expect(stateDirOf(loadConfig(aggregatorEnv, { ...base, AGGREGATOR_STATE_DIR: '' }))).toBe(stateDirOf(config));
  });
});
