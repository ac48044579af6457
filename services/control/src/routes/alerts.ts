import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { AlertView, errorResponses } from '../http/schemas.js';
import type { ControlState } from '../state/control-state.js';

const Query = Type.Object(
  {
    since: Type.Optional(Type.Integer({ minimum: 0, description: 'only alerts after this time (ms since the epoch)' })),
    state: Type.Optional(Type.Union([Type.Literal('fired'), Type.Literal('resolved')])),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
  },
  { additionalProperties: false },
);

/** Recent geographic alerts from the alerts topic, most recent first. */
export async function alertRoutes(app: FastifyInstance, options: { state: ControlState }): Promise<void> {
  app.get<{ Querystring: Static<typeof Query> }>(
    '/v1/alerts',
    {
      config: { permission: 'read' },
      schema: { tags: ['alerts'], summary: 'Recent alerts', querystring: Query, response: { 200: Type.Object({ alerts: Type.Array(AlertView) }), ...errorResponses } },
    },
    async (request) => ({ alerts: options.state.alerts({ ...request.query, limit: request.query.limit ?? 100 }) }),
  );
}
