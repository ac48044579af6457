import { describe, expect, it } from 'vitest';
import { loadConfig } from '@banstream/platform';
import { enforcerEnv } from './config.js';

const required = { KAFKA_BROKERS: '127.0.0.1:9092', REDIS_URL: 'redis://127.0.0.1:6379' };

describe('enforcer configuration', () => {
  it("is safe by default: loopback only, identity from trusted proxies' own headers, loopback callers, closed warm-up", () => {
    expect(loadConfig(enforcerEnv, required)).toMatchObject({
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: 8082,
      ENFORCER_TRUSTED_PROXIES: '127.0.0.1,::1',
      ENFORCER_CALLERS: '127.0.0.1,::1',
      ENFORCER_CLIENT_IP_HEADER: 'x-forwarded-for',
      ENFORCER_USER_HEADER: 'x-banstream-user',
      ENFORCER_API_KEY_HEADER: 'x-banstream-api-key',
      ENFORCER_WARMUP_MODE: 'closed',
      ENFORCER_WARMUP_WAIT_MS: 3_000,
      ENFORCER_COUNTRY_HEADER: 'none',
      ENFORCER_REGION_HEADER: 'none',
      ENFORCER_ASN_HEADER: 'none',
      ENFORCER_ROUTE_HEADER: 'none',
      ENFORCER_MAX_BANS: 10_000_000,
    });
  });

  it('bounds the ban cache between 1 and 16,000,000 bans (a V8 Map holds at most 16,777,216)', () => {
    expect(loadConfig(enforcerEnv, { ...required, ENFORCER_MAX_BANS: '2500000' })).toMatchObject({ ENFORCER_MAX_BANS: 2_500_000 });
    expect(() => loadConfig(enforcerEnv, { ...required, ENFORCER_MAX_BANS: '0' })).toThrow(/ENFORCER_MAX_BANS/);
    expect(() => loadConfig(enforcerEnv, { ...required, ENFORCER_MAX_BANS: '16000001' })).toThrow(/ENFORCER_MAX_BANS/);
  });

  it('refuses a header name that is not one, and an unknown warm-up mode, naming the variable', () => {
    expect(() => loadConfig(enforcerEnv, { ...required, ENFORCER_USER_HEADER: 'x user' })).toThrow(/ENFORCER_USER_HEADER/);
    expect(() => loadConfig(enforcerEnv, { ...required, ENFORCER_CLIENT_IP_HEADER: 'x-real-ip,x-forwarded-for' })).toThrow(/ENFORCER_CLIENT_IP_HEADER/);
    expect(() => loadConfig(enforcerEnv, { ...required, ENFORCER_COUNTRY_HEADER: 'cf ipcountry' })).toThrow(/ENFORCER_COUNTRY_HEADER/);
    expect(loadConfig(enforcerEnv, { ...required, ENFORCER_ASN_HEADER: 'X-Banstream-Asn' })).toMatchObject({ ENFORCER_ASN_HEADER: 'X-Banstream-Asn' });
    expect(() => loadConfig(enforcerEnv, { ...required, ENFORCER_WARMUP_MODE: 'maybe' })).toThrow(/ENFORCER_WARMUP_MODE: expected closed or open/);
    expect(loadConfig(enforcerEnv, { ...required, ENFORCER_CLIENT_IP_HEADER: 'X-Real-IP', ENFORCER_USER_HEADER: 'none' })).toMatchObject({
      ENFORCER_CLIENT_IP_HEADER: 'X-Real-IP',
      ENFORCER_USER_HEADER: 'none',
    });
  });
});
