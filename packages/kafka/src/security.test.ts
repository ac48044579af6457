import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isBanstreamError } from '@banstream/core';
import { createLogger, loadConfig } from '@banstream/platform';
import { kafkaSecurityEnv } from './from-config.js';
import { kafkaPrincipal, kafkaSecurityFromConfig } from './security.js';

let dir: string;
const path = (name: string) => join(dir, name);

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'kafka-security-'));
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  // A self-signed client certificate and its key, plain and encrypted with a passphrase.
  openssl(
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-subj',
    '/O=banstream/CN=enforcer',
    '-days',
    '1',
    '-keyout',
    path('client.key'),
    '-out',
    path('client.crt'),
  );
  openssl('pkcs8', '-topk8', '-in', path('client.key'), '-out', path('client-enc.key'), '-passout', 'pass:s3cret');
  openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', '/CN=other', '-days', '1', '-keyout', path('other.key'), '-out', path('other.crt'));
  writeFileSync(path('password'), 'hunter2\n');
  writeFileSync(path('key-password'), 's3cret\n');
  writeFileSync(path('not-pem'), 'hello');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The settings as a service loads them: through loadConfig and the variables' schemas. */
function settings(source: Record<string, string>) {
  return kafkaSecurityFromConfig(loadConfig(kafkaSecurityEnv(), source));
}

/** The variable a CONFIG_INVALID names, and its message. */
function refusal(source: Record<string, string>): { variable: unknown; message: string } {
  try {
    settings(source);
  } catch (error) {
    if (!isBanstreamError(error, 'CONFIG_INVALID')) throw error;
    return { variable: (error.details.variables as string[])[0], message: error.message };
  }
  throw new Error('expected a CONFIG_INVALID');
}

describe('kafkaSecurityFromConfig', () => {
  it('is plaintext without a login when nothing is set', () => {
    expect(settings({})).toEqual({});
    expect(kafkaPrincipal(settings({}))).toBe('User:ANONYMOUS');
  });

  it('uses the system CAs when TLS is on without a CA file, and reads a CA bundle when given', () => {
    expect(settings({ KAFKA_TLS: 'true' })).toEqual({ tls: {} });
    expect(settings({ KAFKA_TLS: 'true', KAFKA_TLS_CA_FILE: path('client.crt'), KAFKA_TLS_SERVERNAME: 'kafka.internal' }).tls).toEqual({
      ca: expect.stringContaining('BEGIN CERTIFICATE'),
      servername: 'kafka.internal',
    });
  });

  it('refuses TLS files while TLS is off, rather than connecting in clear', () => {
    expect(refusal({ KAFKA_TLS_CA_FILE: path('client.crt') })).toMatchObject({ variable: 'KAFKA_TLS_CA_FILE', message: expect.stringContaining('KAFKA_TLS is false') });
  });

  it('refuses a file it cannot read or that holds no PEM, naming the variable', () => {
    expect(refusal({ KAFKA_TLS: 'true', KAFKA_TLS_CA_FILE: path('missing.pem') })).toMatchObject({ variable: 'KAFKA_TLS_CA_FILE', message: expect.stringContaining('ENOENT') });
    expect(refusal({ KAFKA_TLS: 'true', KAFKA_TLS_CA_FILE: path('not-pem') })).toMatchObject({ variable: 'KAFKA_TLS_CA_FILE', message: expect.stringContaining('no PEM certificate') });
    expect(refusal({ KAFKA_SASL_MECHANISM: 'scram-sha-512', KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD_FILE: path('nope') })).toMatchObject({ variable: 'KAFKA_SASL_PASSWORD_FILE' });
  });

  it('takes a client certificate only with its key, and the key only with its passphrase', () => {
    expect(refusal({ KAFKA_TLS: 'true', KAFKA_TLS_CERT_FILE: path('client.crt') }).variable).toBe('KAFKA_TLS_KEY_FILE');
    expect(refusal({ KAFKA_TLS: 'true', KAFKA_TLS_KEY_FILE: path('client.key') }).variable).toBe('KAFKA_TLS_CERT_FILE');
    expect(refusal({ KAFKA_TLS: 'true', KAFKA_TLS_CERT_FILE: path('client.crt'), KAFKA_TLS_KEY_FILE: path('other.key') }).variable).toBe('KAFKA_TLS_KEY_FILE');
    expect(refusal({ KAFKA_TLS: 'true', KAFKA_TLS_CERT_FILE: path('client.crt'), KAFKA_TLS_KEY_FILE: path('client-enc.key') }).message).toContain('KAFKA_TLS_KEY_PASSWORD');
    expect(refusal({ KAFKA_TLS: 'true', KAFKA_TLS_CERT_FILE: path('client.crt'), KAFKA_TLS_KEY_FILE: path('client-enc.key'), KAFKA_TLS_KEY_PASSWORD: 'wrong' }).variable).toBe('KAFKA_TLS_KEY_FILE');
    const tls = settings({ KAFKA_TLS: 'true', KAFKA_TLS_CERT_FILE: path('client.crt'), KAFKA_TLS_KEY_FILE: path('client-enc.key'), KAFKA_TLS_KEY_PASSWORD_FILE: path('key-password') });
    expect(tls.tls?.passphrase).toBe('s3cret');
    expect(kafkaPrincipal(tls)).toBe('User:CN=enforcer,O=banstream');
  });

  it('needs a user and exactly one of password and password file with a mechanism', () => {
    expect(refusal({ KAFKA_TLS: 'true', KAFKA_SASL_MECHANISM: 'scram-sha-256', KAFKA_SASL_PASSWORD: 'p' }).variable).toBe('KAFKA_SASL_USERNAME');
    expect(refusal({ KAFKA_TLS: 'true', KAFKA_SASL_MECHANISM: 'scram-sha-256', KAFKA_SASL_USERNAME: 'u' }).variable).toBe('KAFKA_SASL_PASSWORD');
    expect(refusal({ KAFKA_TLS: 'true', KAFKA_SASL_MECHANISM: 'scram-sha-256', KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p', KAFKA_SASL_PASSWORD_FILE: path('password') }).variable).toBe(
      'KAFKA_SASL_PASSWORD_FILE',
    );
    expect(refusal({ KAFKA_SASL_USERNAME: 'u' })).toMatchObject({ variable: 'KAFKA_SASL_USERNAME', message: expect.stringContaining('KAFKA_SASL_MECHANISM is none') });
    const login = settings({ KAFKA_TLS: 'true', KAFKA_SASL_MECHANISM: 'scram-sha-512', KAFKA_SASL_USERNAME: 'enforcer', KAFKA_SASL_PASSWORD_FILE: path('password') });
    expect(login.sasl).toEqual({ mechanism: 'scram-sha-512', username: 'enforcer', password: 'hunter2' });
    expect(kafkaPrincipal(login)).toBe('User:enforcer');
  });

  it('refuses SASL PLAIN without TLS (the password in clear) unless KAFKA_SASL_ALLOW_PLAINTEXT', () => {
    const plain = { KAFKA_SASL_MECHANISM: 'plain', KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p' };
    expect(refusal(plain)).toMatchObject({ variable: 'KAFKA_SASL_MECHANISM', message: expect.stringContaining('in clear') });
    expect(settings({ ...plain, KAFKA_SASL_ALLOW_PLAINTEXT: 'true' }).sasl?.mechanism).toBe('plain');
    expect(settings({ ...plain, KAFKA_TLS: 'true' }).sasl?.mechanism).toBe('plain');
    // SCRAM never sends the password itself.
    expect(settings({ ...plain, KAFKA_SASL_MECHANISM: 'scram-sha-256' }).sasl?.mechanism).toBe('scram-sha-256');
  });

  it('keeps the passwords out of log lines that carry the configuration or the client settings', () => {
    const lines: string[] = [];
    const logger = createLogger({ service: 'unit', level: 'info', destination: { write: (line: string) => lines.push(line) } as never });
    const config = loadConfig(kafkaSecurityEnv(), {
      KAFKA_TLS: 'true',
      KAFKA_SASL_MECHANISM: 'scram-sha-512',
      KAFKA_SASL_USERNAME: 'u',
      KAFKA_SASL_PASSWORD: 'hunter2',
      KAFKA_TLS_KEY_PASSWORD: 's3cret',
    });
    logger.info({ config }, 'config');
    logger.info({ client: { sasl: { username: 'u', password: 'hunter2' }, ssl: { passphrase: 's3cret' } } }, 'client');
    logger.flush();
    expect(lines.join('')).not.toMatch(/hunter2|s3cret/);
    expect(lines.join('')).toContain('<redacted>');
  });
});
