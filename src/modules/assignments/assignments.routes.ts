import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../http/authenticate.js';
import { errors, IdParams } from '../../http/schemas.js';
import type { AssignmentsService } from './assignments.service.js';
import { AssignmentCreate, AssignmentListQuery, AssignmentOut, ProgressOut, QueueItemOut } from './assignments.schemas.js';

export function assignmentsRoutes(server: FastifyInstance, assignments: AssignmentsService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['assignments'];

  app.get('/api/projects/:id/assignments', {
    schema: { tags, summary: "A project's image assignments", description: 'An annotator kept to their assignments (`assigned_only` projects) gets only their own.', params: IdParams, querystring: AssignmentListQuery, response: { 200: Type.Array(AssignmentOut), ...errors(401, 404, 422) } },
  }, async (request) => assignments.list(callerOf(request), request.params.id, request.query.user_id));

  app.post('/api/projects/:id/assignments', {
    schema: {
      tags,
      summary: 'Assign images to an annotator',
      description: 'The assignee must be a member who can annotate (422 otherwise). Answers the assignments made (an empty array when the unlabelled queue is empty).',
      params: IdParams,
      body: AssignmentCreate,
      response: { 201: Type.Array(AssignmentOut), ...errors(401, 403, 404, 422) },
    },
  }, async (request, reply) => reply.status(201).send(await assignments.assign(callerOf(request), request.params.id, request.body)));

  app.get('/api/projects/:id/assignments/progress', {
    schema: { tags, summary: 'Progress per assignee', params: IdParams, response: { 200: Type.Array(ProgressOut), ...errors(401, 404, 422) } },
  }, async (request) => assignments.progress(callerOf(request), request.params.id));

  app.delete('/api/assignments/:id', {
    schema: { tags, summary: 'Withdraw an assignment', params: IdParams, response: { 204: Type.Null(), ...errors(401, 403, 404, 422) } },
  }, async (request, reply) => {
    await assignments.remove(callerOf(request), request.params.id);
    return reply.status(204).send(null);
  });

  app.get('/api/assignments/mine', {
    schema: {
      tags,
      summary: 'My queue: assigned images still to do, and my submissions sent back by review',
      response: { 200: Type.Array(QueueItemOut), ...errors(401) },
    },
  }, async (request) => assignments.mine(callerOf(request)));
}
