export { Allowlist, canonicalAllowEntry, type AllowlistEntry } from './allowlist.js';
