import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import type { PlannedChange } from '@banstream/api';
import { MAX_POLICY_TEXT_BYTES, type PolicySpec } from '@banstream/core';
import { ProblemError } from '@banstream/platform';
import { actorOf } from '../auth/guard.js';
import { errorResponses, PolicyBody, PolicyView } from '../http/schemas.js';
import { planApply } from '../policies/plan.js';
import { checkPolicy, describeErrors, nextRecord, policyView } from '../policies/records.js';
import { TextChecker } from '../policies/text-checker.js';
import type { ChangeWriter } from '../state/change-writer.js';
import type { ControlState } from '../state/control-state.js';
import { listRoute } from './list-route.js';

export interface PolicyRoutesOptions {
  state: ControlState;
  writer: ChangeWriter;
  clock: () => number;
}

/** The most policies one set may hold (apply, plan and check alike). */
const MAX_POLICIES_PER_SET = 1000;
const IdParams = Type.Object({ id: Type.String({ pattern: '^[a-z0-9][a-z0-9._-]{0,63}$' }) });
const ApplyBody = Type.Object(
  {
    policies: Type.Array(PolicyBody, { maxItems: MAX_POLICIES_PER_SET }),
    /** Delete the policies the set does not name. */
    prune: Type.Optional(Type.Boolean({ default: false })),
  },
  { additionalProperties: false },
);
const CheckBody = Type.Object(
  { text: Type.String({ maxLength: MAX_POLICY_TEXT_BYTES, description: 'a policy file: YAML or JSON, one policy, a list, or a document with policies' }) },
  { additionalProperties: false },
);
const tags = ['policies'];

/**
 * Policies: list, read, versions, create, replace, delete, and plan/apply a whole
 * set (what `banstream policies apply` sends). Bodies are checked by the core
 * validator, so errors read as in a policy file (`threshold.count: must be > 0`).
 */
export async function policyRoutes(app: FastifyInstance, options: PolicyRoutesOptions): Promise<void> {
  const { state, writer, clock } = options;
  const ctx = (request: FastifyRequest) => ({ actor: actorOf(request).name, requestId: request.id });
  // Any reader may check a text: its parse runs off the event loop, bounded in time and queue.
  const texts = new TextChecker({ deadlineMs: 5_000, maxWaiting: 4 });
  app.addHook('onClose', () => texts.close());

  listRoute(app, {
    path: '/v1/policies',
    tags,
    summary: 'List policies',
    field: 'policies',
    item: PolicyView,
    items: () => [...state.policies.values()].map(policyView),
    key: (p) => p.id,
  });

  app.get<{ Params: Static<typeof IdParams> }>(
    '/v1/policies/:id',
    {
      config: { permission: 'read' },
      schema: { tags, summary: 'Get a policy', params: IdParams, response: { 200: PolicyView, 404: { $ref: 'Problem#' }, ...errorResponses } },
    },
    async (request) => policyView(held(state, request.params.id)),
  );

  app.get<{ Params: Static<typeof IdParams> }>(
    '/v1/policies/:id/versions',
    {
      config: { permission: 'read' },
      schema: {
        tags,
        summary: 'Versions of a policy seen on the policies topic, oldest first',
        params: IdParams,
        response: { 200: Type.Object({ versions: Type.Array(PolicyView) }), ...errorResponses },
      },
    },
    async (request) => {
      const versions = state.policyVersions(request.params.id);
      if (versions.length === 0) throw new ProblemError('NOT_FOUND', `no policy ${request.params.id}`);
      return { versions: versions.map(policyView) };
    },
  );

  app.post<{ Body: Record<string, unknown> }>(
    '/v1/policies',
    {
      config: { permission: 'policies:write' },
      attachValidation: true,
      schema: { tags, summary: 'Create a policy (a preview unless it says mode: enforce)', body: PolicyBody, response: { 201: PolicyView, 409: { $ref: 'Problem#' }, ...errorResponses } },
    },
    async (request, reply) => {
      const spec = validSpec(request.body);
      const view = await writer.serial(async () => {
        if (state.policies.has(spec.id)) throw new ProblemError('CONFLICT', `policy ${spec.id} exists (version ${state.policies.get(spec.id)!.version}): PUT /v1/policies/${spec.id} changes it`);
        const record = nextRecord(spec, undefined, actorOf(request).name, clock());
        await writer.write({ kind: 'policy', key: spec.id, value: record, before: undefined }, ctx(request));
        return policyView(record);
      });
      return reply.code(201).send(view);
    },
  );

  app.put<{ Params: Static<typeof IdParams>; Body: Record<string, unknown> }>(
    '/v1/policies/:id',
    {
      config: { permission: 'policies:write' },
      attachValidation: true,
      schema: { tags, summary: 'Create or replace a policy; an equal one is left as it is', params: IdParams, body: PolicyBody, response: { 200: PolicyView, 201: PolicyView, ...errorResponses } },
    },
    async (request, reply) => {
      if (request.validationError?.validationContext === 'params') throw request.validationError;
      const body = request.body;
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        throw new ProblemError('POLICY_INVALID', 'the body must be one policy, as a JSON object', [{ path: '(body)', message: 'must be an object' }]);
      }
      if (body.id !== undefined && body.id !== request.params.id) {
        throw new ProblemError('INVALID_REQUEST', `id: ${JSON.stringify(body.id)} differs from the id in the path (${request.params.id})`, [
          { path: 'id', message: 'differs from the id in the path' },
        ]);
      }
      const spec = validSpec({ ...body, id: request.params.id });
      const [change] = planApply(state.policies, [spec], false);
      if (change?.action === 'unchanged') return reply.code(200).send(policyView(held(state, spec.id)));
      const { view, created } = await writer.serial(async () => {
        const before = state.policies.get(spec.id);
        const record = nextRecord(spec, before, actorOf(request).name, clock());
        await writer.write({ kind: 'policy', key: spec.id, value: record, before }, ctx(request));
        return { view: policyView(record), created: before === undefined };
      });
      return reply.code(created ? 201 : 200).send(view);
    },
  );

  app.delete<{ Params: Static<typeof IdParams> }>(
    '/v1/policies/:id',
    {
      config: { permission: 'policies:write' },
      schema: {
        tags,
        summary: 'Delete a policy (a tombstone on the policies topic)',
        params: IdParams,
        response: { 200: Type.Object({ deleted: Type.String(), version: Type.Integer() }), 404: { $ref: 'Problem#' }, ...errorResponses },
      },
    },
    async (request) =>
      writer.serial(async () => {
        const before = held(state, request.params.id);
        await writer.write({ kind: 'policy', key: before.id, value: null, before }, ctx(request));
        return { deleted: before.id, version: before.version };
      }),
  );

  const planSchema = (summary: string) => ({
    tags,
    summary,
    body: ApplyBody,
    response: { 200: Type.Object({ applied: Type.Boolean(), changes: Type.Array(Type.Unsafe<PlannedChange>({ type: 'object', additionalProperties: true })) }), ...errorResponses },
  });

  app.post<{ Body: Static<typeof ApplyBody> }>(
    '/v1/policies/plan',
    { config: { permission: 'read' }, attachValidation: true, schema: planSchema('What applying a set of policies would change (nothing is written)') },
    async (request) => ({ applied: false, changes: planApply(state.policies, validSet(request), request.body.prune ?? false) }),
  );

  app.post<{ Body: Static<typeof CheckBody> }>(
    '/v1/policies/check',
    {
      config: { permission: 'read' },
      // The text's JSON string may be larger than the text (escapes): room for the largest text, escaped.
      bodyLimit: 4 * MAX_POLICY_TEXT_BYTES,
      schema: {
        tags,
        summary: 'Validate a policy file as `banstream policies apply` reads it, and plan it (nothing is written)',
        body: CheckBody,
        response: {
          200: Type.Object({
            ok: Type.Boolean(),
            errors: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String(), line: Type.Optional(Type.Integer()), column: Type.Optional(Type.Integer()) }))),
            policies: Type.Optional(Type.Array(Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true }))),
            plan: Type.Optional(Type.Array(Type.Unsafe<PlannedChange>({ type: 'object', additionalProperties: true }))),
          }),
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const checked = await texts.check(request.body.text);
      if (!checked.ok) return checked;
      if (checked.policies.length > MAX_POLICIES_PER_SET) {
        return { ok: false, errors: [{ path: 'policies', message: `holds ${checked.policies.length} policies, at most ${MAX_POLICIES_PER_SET} are applied at once` }] };
      }
      return { ...checked, plan: planApply(state.policies, checked.policies, false) };
    },
  );

  app.post<{ Body: Static<typeof ApplyBody> }>(
    '/v1/policies/apply',
    { config: { permission: 'policies:write' }, attachValidation: true, schema: planSchema('Apply a set of policies: create, update, and with prune delete') },
    async (request) => {
      const wanted = validSet(request);
      return writer.serial(async () => {
        const changes = planApply(state.policies, wanted, request.body.prune ?? false);
        for (const change of changes) {
          if (change.action === 'unchanged') continue;
          const before = state.policies.get(change.id);
          const value = change.action === 'delete' ? null : nextRecord(change.after, before, actorOf(request).name, clock());
          await writer.write({ kind: 'policy', key: change.id, value, before }, ctx(request));
        }
        return { applied: true, changes };
      });
    },
  );
}

function held(state: ControlState, id: string) {
  const record = state.policies.get(id);
  if (!record) throw new ProblemError('NOT_FOUND', `no policy ${id}`);
  return record;
}

function validSpec(body: unknown): PolicySpec {
  const checked = checkPolicy(body);
  if (!checked.ok) throw new ProblemError('POLICY_INVALID', `policy is invalid: ${describeErrors(checked.errors)}`, checked.errors);
  return checked.spec;
}

/** Every policy of the set checked, every problem reported at once with `policies[i].` paths. */
function validSet(request: FastifyRequest<{ Body: Static<typeof ApplyBody> }>): PolicySpec[] {
  const body = request.body as Partial<Static<typeof ApplyBody>> | undefined;
  if (!body || !Array.isArray(body.policies)) throw new ProblemError('INVALID_REQUEST', 'policies: expected a list of policies', [{ path: 'policies', message: 'is required' }]);
  // The schema is attached, not enforced (policies get the core validator's messages): refuse unknown fields here,
  // so a whole policy file's `allowlist` is not dropped in silence while `applied: true` says otherwise.
  const unknown = Object.keys(body)
    .filter((k) => k !== 'policies' && k !== 'prune')
    .map((path) => ({
      path,
      message: path === 'allowlist' ? 'is not applied with policies: add entries with POST /v1/allowlist (banstream allow add)' : 'is not a known field',
    }));
  if (unknown.length > 0) throw new ProblemError('INVALID_REQUEST', unknown.map((e) => `${e.path}: ${e.message}`).join('; '), unknown);
  if (body.prune !== undefined && typeof body.prune !== 'boolean') throw new ProblemError('INVALID_REQUEST', 'prune: must be true or false', [{ path: 'prune', message: 'must be true or false' }]);
  const specs: PolicySpec[] = [];
  const errors = [];
  const ids = new Map<string, number>();
  for (const [i, p] of body.policies.entries()) {
    const checked = checkPolicy(p, `policies[${i}].`);
    if (!checked.ok) {
      errors.push(...checked.errors);
      continue;
    }
    const other = ids.get(checked.spec.id);
    if (other !== undefined) errors.push({ path: `policies[${i}].id`, message: `"${checked.spec.id}" is already used by policies[${other}]` });
    ids.set(checked.spec.id, i);
    specs.push(checked.spec);
  }
  if (errors.length > 0) throw new ProblemError('POLICY_INVALID', `policies are invalid: ${describeErrors(errors)}`, errors);
  return specs;
}
