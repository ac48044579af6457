import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import type { PolicySpec } from '@banstream/core';
import { ProblemError } from '@banstream/platform';
import { actorOf } from '../auth/guard.js';
import type { BacktestJobs } from '../backtest/jobs.js';
import { parseInstant } from '../http/instant.js';
import { errorResponses, InstantText, PolicyBody } from '../http/schemas.js';
import { checkPolicy, describeErrors, specOfRecord } from '../policies/records.js';
import type { ControlState } from '../state/control-state.js';

export interface BacktestRoutesOptions {
  jobs: BacktestJobs;
  state: ControlState;
  clock: () => number;
}

const StartBody = Type.Object(
  {
    policy: Type.Optional(PolicyBody),
    policyId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'backtest a stored policy instead of one in the body' })),
    from: InstantText,
    to: Type.Optional(InstantText),
  },
  { additionalProperties: false },
);
const IdParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
const Job = Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true, description: 'state, progress, and the report once done' });
const tags = ['backtests'];

/**
 * Backtests: start one (202 with its id), poll it. The report says what the
 * candidate policy would have banned, throttled or alerted on the retained events
 * of the range, and, for a policy that exists, what its current version did.
 */
export async function backtestRoutes(app: FastifyInstance, options: BacktestRoutesOptions): Promise<void> {
  const { jobs, state, clock } = options;

  app.post<{ Body: Static<typeof StartBody> }>(
    '/v1/backtests',
    {
      config: { permission: 'backtests:run' },
      attachValidation: true,
      schema: { tags, summary: 'Replay retained events through a policy', body: StartBody, response: { 202: Job, ...errorResponses } },
    },
    async (request, reply) => {
      const body = request.body as Partial<Static<typeof StartBody>> | undefined;
      if (request.validationError && !request.validationError.validation?.every((v: { instancePath: string }) => v.instancePath.startsWith('/policy'))) throw request.validationError;
      if (!body || typeof body.from !== 'string') throw new ProblemError('INVALID_REQUEST', 'from: is required', [{ path: 'from', message: 'is required' }]);
      const now = clock();
      const from = parseInstant(body.from, now, 'from');
      const to = body.to === undefined ? now : parseInstant(body.to, now, 'to');
      if (to <= from) throw new ProblemError('INVALID_REQUEST', 'to: must be after from', [{ path: 'to', message: 'must be after from' }]);
      let candidate: PolicySpec;
      if ((body.policy !== undefined) === (body.policyId !== undefined)) {
        throw new ProblemError('INVALID_REQUEST', 'give either policy (a candidate) or policyId (a stored policy)', [{ path: 'policy', message: 'give policy or policyId' }]);
      }
      if (body.policyId !== undefined) {
        const record = state.policies.get(body.policyId);
        const spec = record && specOfRecord(record);
        if (!spec) throw new ProblemError('NOT_FOUND', `no valid policy ${body.policyId}`);
        candidate = spec;
      } else {
        const checked = checkPolicy(body.policy, 'policy.');
        if (!checked.ok) throw new ProblemError('POLICY_INVALID', `policy is invalid: ${describeErrors(checked.errors)}`, checked.errors);
        candidate = checked.spec;
      }
      const job = jobs.start({ candidate, compare: body.policyId === undefined, from, to, actor: actorOf(request).name });
      return reply.code(202).header('location', `/v1/backtests/${job.id}`).send(job);
    },
  );

  app.get(
    '/v1/backtests',
    {
      config: { permission: 'read' },
      schema: { tags, summary: 'Recent backtests of this instance', response: { 200: Type.Object({ backtests: Type.Array(Job) }), ...errorResponses } },
    },
    async () => ({ backtests: jobs.list() }),
  );

  app.get<{ Params: Static<typeof IdParams> }>(
    '/v1/backtests/:id',
    {
      config: { permission: 'read' },
      schema: { tags, summary: 'A backtest: progress, then its report', params: IdParams, response: { 200: Job, 404: { $ref: 'Problem#' }, ...errorResponses } },
    },
    async (request) => {
      const job = jobs.get(request.params.id);
      if (!job) throw new ProblemError('NOT_FOUND', `no backtest ${request.params.id} on this instance`);
      return job;
    },
  );
}
