import { describe, expect, it } from 'vitest';
import { MAX_SUBJECT_TEXT_LENGTH } from '@banstream/core';
import { createLogger } from '../logging/logger.js';
import { createHttpServer } from './ops-server.js';

describe('createHttpServer', () => {
  it('routes a path parameter as long as a subject (a long ban lifted by DELETE /v1/bans/:subject), not a bare 414', async () => {
    const app = createHttpServer(createLogger({ service: 'test', level: 'silent' }));
    app.delete<{ Params: { subject: string } }>('/v1/bans/:subject', async (request) => ({ length: request.params.subject.length }));
    const subject = `user:${'%7C'.repeat(40)}`;
    const res = await app.inject({ method: 'DELETE', url: `/v1/bans/${encodeURIComponent(subject)}` });
    expect([res.statusCode, res.json()]).toEqual([200, { length: subject.length }]);
    expect((await app.inject({ method: 'DELETE', url: `/v1/bans/${'a'.repeat(MAX_SUBJECT_TEXT_LENGTH)}` })).statusCode).toBe(200);
    await app.close();
  });
});
