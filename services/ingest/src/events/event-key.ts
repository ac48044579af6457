import { eventPartitionKey, ipv4EventPartitionKey, type IpAddress } from '@banstream/core';

/**
 * The events-topic key of an event (its client's /24 or /48, core's eventPartitionKey),
 * computed here and only here on the ingest path, once per event: by the Avro fast
 * path from the address's 32-bit value, by the slow path from the address it parsed.
 */
export function eventKey(ip: number | IpAddress): string {
  if (typeof ip === 'number') return ipv4Key(ip);
  if (ip.family === 4) return ipv4Key(ip.int32 ?? (ip.bytes[0]! << 24) | (ip.bytes[1]! << 16) | (ip.bytes[2]! << 8) | ip.bytes[3]!);
  return eventPartitionKey(ip);
}

/** Keys of the client /24s seen lately: one string per network, not one per event. */
const ipv4Keys = new Map<number, string>();
const IPV4_KEYS = 65_536;

function ipv4Key(address: number): string {
  const network = address >>> 8;
  let key = ipv4Keys.get(network);
  if (key === undefined) {
    if (ipv4Keys.size >= IPV4_KEYS) ipv4Keys.clear();
    key = ipv4EventPartitionKey(address);
    ipv4Keys.set(network, key);
  }
  return key;
}
