import type { FastifyInstance } from 'fastify';
import { Type, type TSchema } from '@sinclair/typebox';
import { errorResponses } from '../http/schemas.js';

export interface ListRouteSpec<T> {
  path: string;
  tags: string[];
  summary: string;
  /** The field of the answer that holds the list: `{ policies: [...] }`. */
  field: string;
  item: TSchema;
  items(): T[];
  /** Sort key: lists come in a stable order. */
  key(item: T): string;
}

/** A readable list of everything held, sorted, under one field. */
export function listRoute<T>(app: FastifyInstance, spec: ListRouteSpec<T>): void {
  app.get(
    spec.path,
    {
      config: { permission: 'read' },
      schema: { tags: spec.tags, summary: spec.summary, response: { 200: Type.Object({ [spec.field]: Type.Array(spec.item) }), ...errorResponses } },
    },
    async () => ({ [spec.field]: spec.items().sort((a, b) => (spec.key(a) < spec.key(b) ? -1 : 1)) }),
  );
}
