import { readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import { BanstreamError } from '@banstream/core';

/**
 * How a client proves who it is to Kafka and checks who Kafka is: the port's own shape
 * (kafkajs's `ssl` and `sasl` are made from it in client.ts), read once from the
 * KAFKA_TLS_* and KAFKA_SASL_* variables by `kafkaSecurityFromConfig`.
 */
export interface KafkaSecurity {
  /** TLS to the brokers; absent: plaintext. */
  tls?: {
    /** PEM CA certificates; absent: Node's (the system's) CAs. */
    ca?: string;
    /** PEM client certificate (mutual TLS), with its key. */
    cert?: string;
    key?: string;
    passphrase?: string;
    /** The name the broker's certificate must carry (and SNI), when not the broker's host. */
    servername?: string;
  };
  sasl?: { mechanism: SaslMechanism; username: string; password: string };
}

export type SaslMechanism = 'plain' | 'scram-sha-256' | 'scram-sha-512';

/** The variables `kafkaSecurityFromConfig` reads, as a loaded config holds them. */
export interface KafkaSecurityConfig {
  KAFKA_TLS: boolean;
  KAFKA_TLS_CA_FILE?: string | undefined;
  KAFKA_TLS_CERT_FILE?: string | undefined;
  KAFKA_TLS_KEY_FILE?: string | undefined;
  KAFKA_TLS_KEY_PASSWORD?: string | undefined;
  KAFKA_TLS_KEY_PASSWORD_FILE?: string | undefined;
  KAFKA_TLS_SERVERNAME?: string | undefined;
  KAFKA_SASL_MECHANISM: 'none' | SaslMechanism;
  KAFKA_SASL_USERNAME?: string | undefined;
  KAFKA_SASL_PASSWORD?: string | undefined;
  KAFKA_SASL_PASSWORD_FILE?: string | undefined;
  KAFKA_SASL_ALLOW_PLAINTEXT: boolean;
}

function invalid(variable: string, message: string, cause?: unknown): BanstreamError {
  return new BanstreamError('CONFIG_INVALID', `${variable}: ${message}`, { details: { variables: [variable] }, ...(cause === undefined ? {} : { cause }) });
}

function readSetting(variable: string, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (cause) {
    throw invalid(variable, `cannot read ${path}: ${(cause as NodeJS.ErrnoException).code ?? (cause as Error).message}`, cause);
  }
}

/** A secret from VAR or VAR_FILE (one trailing newline dropped), never both. */
function secret(config: KafkaSecurityConfig, name: 'KAFKA_SASL_PASSWORD' | 'KAFKA_TLS_KEY_PASSWORD'): string | undefined {
  const direct = config[name];
  const file = config[`${name}_FILE`];
  if (direct !== undefined && file !== undefined) throw invalid(`${name}_FILE`, `set either ${name} or ${name}_FILE, not both`);
  if (file === undefined) return direct;
  const value = readSetting(`${name}_FILE`, file).replace(/\r?\n$/, '');
  if (value === '') throw invalid(`${name}_FILE`, `${file} is empty`);
  return value;
}

function pem(variable: string, path: string, kind: 'CERTIFICATE' | 'PRIVATE KEY'): string {
  const text = readSetting(variable, path);
  if (!new RegExp(`-----BEGIN [A-Z ]*${kind}-----`).test(text)) throw invalid(variable, `${path} holds no PEM ${kind.toLowerCase()}`);
  return text;
}

/**
 * Reads and checks the security settings: files readable and in PEM, a certificate only
 * with its key (and the key opening with its passphrase), TLS files only with TLS on,
 * SASL with a user and exactly one of password or password file, and SASL PLAIN (the
 * password itself on the wire) only over TLS unless KAFKA_SASL_ALLOW_PLAINTEXT.
 * Every refusal is a CONFIG_INVALID naming the variable (exit 78 at start).
 */
export function kafkaSecurityFromConfig(config: KafkaSecurityConfig): KafkaSecurity {
  const security: KafkaSecurity = {};
  const tlsFiles = (['KAFKA_TLS_CA_FILE', 'KAFKA_TLS_CERT_FILE', 'KAFKA_TLS_KEY_FILE', 'KAFKA_TLS_SERVERNAME'] as const).filter((n) => config[n] !== undefined);
  if (!config.KAFKA_TLS && tlsFiles.length > 0) throw invalid(tlsFiles[0]!, 'is set but KAFKA_TLS is false: set KAFKA_TLS=true to connect over TLS');
  if (config.KAFKA_TLS) {
    const tls: NonNullable<KafkaSecurity['tls']> = {};
    if (config.KAFKA_TLS_CA_FILE !== undefined) tls.ca = pem('KAFKA_TLS_CA_FILE', config.KAFKA_TLS_CA_FILE, 'CERTIFICATE');
    if ((config.KAFKA_TLS_CERT_FILE === undefined) !== (config.KAFKA_TLS_KEY_FILE === undefined)) {
      throw config.KAFKA_TLS_CERT_FILE === undefined
        ? invalid('KAFKA_TLS_CERT_FILE', 'missing: KAFKA_TLS_KEY_FILE is set, and a client key needs its certificate')
        : invalid('KAFKA_TLS_KEY_FILE', 'missing: KAFKA_TLS_CERT_FILE is set, and a client certificate needs its key');
    }
    const passphrase = secret(config, 'KAFKA_TLS_KEY_PASSWORD');
    if (config.KAFKA_TLS_CERT_FILE !== undefined && config.KAFKA_TLS_KEY_FILE !== undefined) {
      tls.cert = pem('KAFKA_TLS_CERT_FILE', config.KAFKA_TLS_CERT_FILE, 'CERTIFICATE');
      tls.key = pem('KAFKA_TLS_KEY_FILE', config.KAFKA_TLS_KEY_FILE, 'PRIVATE KEY');
      if (passphrase !== undefined) tls.passphrase = passphrase;
      try {
        // Opens the key and checks it matches the certificate, now rather than at the first connection.
        createSecureContext({ cert: tls.cert, key: tls.key, ...(passphrase === undefined ? {} : { passphrase }) });
      } catch (cause) {
        throw invalid(
          'KAFKA_TLS_KEY_FILE',
          `cannot use ${config.KAFKA_TLS_KEY_FILE} with ${config.KAFKA_TLS_CERT_FILE} (a wrong or missing KAFKA_TLS_KEY_PASSWORD, or a key of another certificate): ${(cause as Error).message}`,
          cause,
        );
      }
    } else if (passphrase !== undefined) {
      throw invalid(config.KAFKA_TLS_KEY_PASSWORD_FILE === undefined ? 'KAFKA_TLS_KEY_PASSWORD' : 'KAFKA_TLS_KEY_PASSWORD_FILE', 'is set but there is no KAFKA_TLS_KEY_FILE');
    }
    if (config.KAFKA_TLS_SERVERNAME !== undefined) tls.servername = config.KAFKA_TLS_SERVERNAME;
    security.tls = tls;
  }
  const mechanism = config.KAFKA_SASL_MECHANISM;
  if (mechanism === 'none') {
    const stray = (['KAFKA_SASL_USERNAME', 'KAFKA_SASL_PASSWORD', 'KAFKA_SASL_PASSWORD_FILE'] as const).find((n) => config[n] !== undefined);
    if (stray) throw invalid(stray, 'is set but KAFKA_SASL_MECHANISM is none: choose plain, scram-sha-256 or scram-sha-512');
    return security;
  }
  if (config.KAFKA_SASL_USERNAME === undefined) throw invalid('KAFKA_SASL_USERNAME', `missing; KAFKA_SASL_MECHANISM=${mechanism} needs a user`);
  if (config.KAFKA_SASL_PASSWORD === undefined && config.KAFKA_SASL_PASSWORD_FILE === undefined) {
    throw invalid('KAFKA_SASL_PASSWORD', `missing; KAFKA_SASL_MECHANISM=${mechanism} needs KAFKA_SASL_PASSWORD or KAFKA_SASL_PASSWORD_FILE`);
  }
  const password = secret(config, 'KAFKA_SASL_PASSWORD')!;
  if (mechanism === 'plain' && !config.KAFKA_TLS && !config.KAFKA_SASL_ALLOW_PLAINTEXT) {
    throw invalid('KAFKA_SASL_MECHANISM', 'plain without KAFKA_TLS=true would send the password in clear: turn TLS on (or, for a test broker only, KAFKA_SASL_ALLOW_PLAINTEXT=true)');
  }
  security.sasl = { mechanism, username: config.KAFKA_SASL_USERNAME, password };
  return security;
}

/**
 * The principal Kafka sees, for messages: `User:<SASL user>`, else the client
 * certificate's subject as Kafka writes it by default (RFC 2253 order), else ANONYMOUS.
 * A broker with its own principal mapping rules may name it otherwise.
 */
export function kafkaPrincipal(security: KafkaSecurity | undefined): string {
  if (security?.sasl) return `User:${security.sasl.username}`;
  if (security?.tls?.cert) {
    try {
      return `User:${new X509Certificate(security.tls.cert).subject.split('\n').reverse().join(',')}`;
    } catch {
      return 'User:<client certificate>';
    }
  }
  return 'User:ANONYMOUS';
}
