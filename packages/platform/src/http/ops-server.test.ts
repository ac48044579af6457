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

  it('answers an unknown route and a failing handler with problem+json, keeping internals out of the body', async () => {
    const app = createHttpServer(createLogger({ service: 'test', level: 'silent' }));
    app.get('/boom', async () => {
      throw new Error('secret internals');
    });
    const missing = await app.inject({ method: 'GET', url: '/nowhere?x=1' });
    expect([missing.statusCode, missing.headers['content-type'], missing.json()]).toEqual([
      404,
      'application/problem+json; charset=utf-8',
      { type: 'about:blank', title: 'Not Found', status: 404, detail: 'no route GET /nowhere', code: 'NOT_FOUND' },
    ]);
    const failed = await app.inject({ method: 'GET', url: '/boom' });
    expect([failed.statusCode, failed.headers['content-type'], failed.json().code]).toEqual([500, 'application/problem+json; charset=utf-8', 'INTERNAL']);
    expect(failed.body).not.toContain('secret internals');
    await app.close();
  });

  it('names each invalid field of a request its route schema refuses', async () => {
    const app = createHttpServer(createLogger({ service: 'test', level: 'silent' }));
    const schema = { querystring: { type: 'object', properties: { limit: { type: 'integer', maximum: 10 } }, additionalProperties: false } };
    app.get('/list', { schema }, async () => ({}));
    const res = await app.inject({ method: 'GET', url: '/list?limit=99' });
    expect([res.statusCode, res.headers['content-type'], res.json()]).toEqual([
      400,
      'application/problem+json; charset=utf-8',
      {
        type: 'about:blank',
        title: 'Bad Request',
        status: 400,
        code: 'INVALID_REQUEST',
        detail: 'querystring.limit: must be <= 10',
        errors: [{ path: 'querystring.limit', message: 'must be <= 10' }],
      },
    ]);
    await app.close();
  });
});
