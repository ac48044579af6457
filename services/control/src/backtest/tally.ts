import type { RequestAttributes } from '@banstream/core';
import { eventPartitionKey } from '@banstream/core';

/** Requests by client, country and network: the traffic a policy would have touched. */
export class Tally {
  requests = 0;
  readonly clients = new Set<string>();
  readonly countries = new Map<string, number>();
  readonly prefixes = new Map<string, number>();

  /** `weight`: 1 for a refused request, the refused share for a throttled one. */
  add(attrs: RequestAttributes, weight: number): void {
    this.requests += weight;
    this.clients.add(attrs.ip);
    const country = attrs.country ?? 'unknown';
    this.countries.set(country, (this.countries.get(country) ?? 0) + weight);
    const prefix = eventPartitionKey(attrs.ip);
    this.prefixes.set(prefix, (this.prefixes.get(prefix) ?? 0) + weight);
  }
}

/** The `n` largest entries of a count map, largest first (ties by name). */
export function top(counts: ReadonlyMap<string, number>, n: number): { name: string; requests: number }[] {
  return [...counts]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, n)
    .map(([name, requests]) => ({ name, requests: Math.round(requests * 100) / 100 }));
}
