import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BanstreamError } from '@banstream/core';
import { buildSchemaCatalog, type SchemaCatalog, type SchemaSource } from './catalog.js';

/**
 * Reads the schema folder: `<dir>/<kebab-name>/v<N>.avsc`. The one place in this
 * package that touches files; it runs once at startup, synchronously, so a service
 * either has its whole catalog or fails to start.
 */

/** `schemas/avro/`, beside both `src/` (tests) and `dist/` (compiled). */
export const DEFAULT_SCHEMA_DIR: URL = new URL('../avro/', import.meta.url);

const VERSION_FILE = /^v([1-9][0-9]*)\.avsc$/;

export function loadSchemaCatalog(dir: URL | string = DEFAULT_SCHEMA_DIR): SchemaCatalog {
  return buildSchemaCatalog(readSchemaSources(dir));
}

export function readSchemaSources(dir: URL | string): SchemaSource[] {
  const root = dir instanceof URL ? fileURLToPath(dir) : dir;
  const sources: SchemaSource[] = [];
  for (const folder of readdirSync(root, { withFileTypes: true })) {
    if (!folder.isDirectory()) continue;
    for (const file of readdirSync(join(root, folder.name))) {
      if (!file.endsWith('.avsc')) continue; // a README beside the versions is fine
      const path = join(root, folder.name, file);
      const match = VERSION_FILE.exec(file);
      if (!match) throw invalid(`${path}: schema files are named v1.avsc, v2.avsc, …`);
      sources.push({ name: folder.name, version: Number(match[1]), schema: parseJson(path), origin: path });
    }
  }
  return sources;
}

function parseJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as unknown;
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new BanstreamError('CONFIG_INVALID', `schema catalog: cannot read ${path}: ${reason}`, { cause });
  }
}

function invalid(message: string): BanstreamError {
  return new BanstreamError('CONFIG_INVALID', `schema catalog: ${message}`);
}
