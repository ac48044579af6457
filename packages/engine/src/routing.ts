import {
  EVENT_KEY_PREFIX_BITS,
  eventPartitionKey,
  keyPartition,
  keyParts,
  parseCidr,
  parseKey,
  parseSubject,
  policyIntervals,
  type CompiledPolicy,
  type KeyDimension,
  type RequestAttributes,
} from '@banstream/core';
import { countingPrefix, type CountingRoute } from './decider.js';

/**
 * Where a subject is counted. Events are partitioned by the client's /24 (IPv4) or
 * /48 (IPv6), so a subject that pins the client to one such network (an ip, or a
 * prefix at least that long, alone or in a composite) only ever arrives on one
 * events partition: it is counted there, by that partition's owner. Every other
 * subject (user, API key, country, a /16…) arrives on many partitions and is
 * counted after a repartition by subject.
 */
export function isPartitionLocal(policy: CompiledPolicy): boolean {
  return parseKey(policy.spec.key).some(pinsNetwork);
}

function pinsNetwork(d: KeyDimension): boolean {
  if (d.kind === 'ip') return true;
  return d.kind === 'prefix' && (d.v4 ?? 0) >= EVENT_KEY_PREFIX_BITS.v4 && (d.v6 ?? 0) >= EVENT_KEY_PREFIX_BITS.v6;
}

export interface Route extends CountingRoute {
  /** Counted where it arrives (true), or repartitioned by subject. */
  local: boolean;
  /** Repartitioned events are counted at this time resolution (ms). */
  resolutionMs: number;
  /**
   * A request's subject is `scope + valueOf(request)`, and its counting key
   * `keyPrefix + valueOf(request)`: a one-dimension key's scope (`ip:`) is kept apart
   * so that neither string is made per event (decider.observeKeyed).
   */
  scope: string;
  keyPrefix: string;
  valueOf: (attrs: RequestAttributes) => string | undefined;
}

/**
 * Repartitioned events travel at a thousandth of their window (at most a second):
 * a country seen every millisecond becomes one entry per 60 ms for a one-minute
 * window instead of one per event, and the window's edge moves by at most that much.
 */
export function routeOf(policy: CompiledPolicy): Route {
  const shortest = Math.min(...policyIntervals(policy));
  const parts = keyParts(policy.spec.key) ?? { scope: '', valueOf: policy.subjectOf };
  return {
    policy,
    local: isPartitionLocal(policy),
    resolutionMs: Math.min(1000, Math.max(1, Math.floor(shortest / 1000))),
    scope: parts.scope,
    keyPrefix: `${countingPrefix(policy)}${parts.scope}`,
    valueOf: parts.valueOf,
  };
}

/** The partition Kafka's default partitioner (murmur2, as the Java client and kafkajs) picks for `key`. */
export function partitionFor(key: string, partitions: number): number {
  return keyPartition(key, partitions);
}

/**
 * The events-topic key of a partition-local subject: the network its ip or prefix
 * part lies in. Undefined when the subject pins no network (it is repartitioned).
 */
export function eventKeyOfSubject(subject: string): string | undefined {
  for (const part of parseSubject(subject)) {
    if (part.scope === 'ip') return eventPartitionKey(part.value);
    if (part.scope === 'cidr') {
      const cidr = parseCidr(part.value);
      const needed = cidr.family === 4 ? EVENT_KEY_PREFIX_BITS.v4 : EVENT_KEY_PREFIX_BITS.v6;
      if (cidr.bits >= needed) return eventPartitionKey(cidr.text.slice(0, cidr.text.indexOf('/')));
    }
  }
  return undefined;
}
