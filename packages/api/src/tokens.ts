import { createHash, randomBytes } from 'node:crypto';
import type { Role } from './roles.js';

/** Tokens are 32 random bytes: a SHA-256 of them cannot be reversed or guessed. */
export function newToken(): string {
  return `bst_${randomBytes(32).toString('base64url')}`;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** One `name:role:sha256hex` entry, as CONTROL_TOKENS and CONTROL_TOKENS_FILE hold them. */
export function tokenEntryLine(name: string, role: Role, token: string): string {
  return `${name}:${role}:${hashToken(token)}`;
}
