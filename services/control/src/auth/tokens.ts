import { createHash, timingSafeEqual } from 'node:crypto';
import { isRole, ROLES_TEXT, type Role } from '@banstream/api';
import { BanstreamError } from '@banstream/core';

/** Who a token belongs to; the token itself is never kept, only its SHA-256. */
export interface Principal {
  name: string;
  role: Role;
}

interface Entry extends Principal {
  hash: Buffer;
}

/**
 * The tokens the control API accepts, read from `name:role:sha256hex` entries
 * (comma- or newline-separated, `#` comments). A presented token is hashed and
 * compared with every entry in constant time, without stopping at a match, so the
 * time taken says nothing about which entry, or how much of one, matched.
 */
export class TokenBook {
  private readonly entries: Entry[];

  constructor(text: string, source = 'tokens') {
    this.entries = parseEntries(text, source);
  }

  get size(): number {
    return this.entries.length;
  }

  identify(token: string): Principal | undefined {
    const presented = createHash('sha256').update(token, 'utf8').digest();
    let found: Entry | undefined;
    for (const entry of this.entries) {
      if (timingSafeEqual(presented, entry.hash) && found === undefined) found = entry;
    }
    return found && { name: found.name, role: found.role };
  }
}

function parseEntries(text: string, source: string): Entry[] {
  const entries: Entry[] = [];
  const names = new Set<string>();
  const items = text
    .split(/[\n,]/)
    .map((l) => l.replace(/#.*$/, '').trim())
    .filter((l) => l.length > 0);
  for (const [i, item] of items.entries()) {
    const [name, role, hash, extra] = item.split(':');
    const where = `${source}: entry ${i + 1}`;
    if (extra !== undefined || !name || !/^[A-Za-z0-9._@-]+$/.test(name)) throw invalid(`${where}: expected name:role:sha256hex`);
    if (!role || !isRole(role)) throw invalid(`${where} (${name}): role must be ${ROLES_TEXT}`);
    // Only the hash may be given: a clear token here would be a secret in configuration.
    if (!hash || !/^[0-9a-f]{64}$/.test(hash)) throw invalid(`${where} (${name}): expected the token's SHA-256 as 64 lower-case hex digits`);
    if (names.has(name)) throw invalid(`${where}: the name ${name} is given twice`);
    names.add(name);
    entries.push({ name, role, hash: Buffer.from(hash, 'hex') });
  }
  return entries;
}

function invalid(message: string): BanstreamError {
  return new BanstreamError('CONFIG_INVALID', message);
}
