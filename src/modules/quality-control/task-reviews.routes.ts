import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../http/authenticate.js';
import { errors, IdParams } from '../../http/schemas.js';
import { PendingTaskReviewOut, TaskReviewCreate, TaskReviewOut, TaskReviewQuery } from './quality-control.schemas.js';
import type { TaskReviewsService } from './task-reviews.service.js';

const BASE = '/api/projects/:id/quality-control/task-reviews';

/** Reviews of quality-control task submissions (issue 29): the pending list, a decision, the record of decisions. */
export function taskReviewsRoutes(server: FastifyInstance, reviews: TaskReviewsService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['quality control'];

  app.get(`${BASE}/pending`, {
    schema: {
      tags,
      summary: 'Submitted tasks waiting for review (reviewers)',
      description: 'Oldest task first, each with its annotator\'s submitted version; resubmissions (round 2 and up) carry the comment they answer. An annotator\'s task set on a video is one item (`video_id`, `frames`, the frame shown, every pending frame in `video_frames`). Your own tasks are left out.',
      params: IdParams,
      querystring: TaskReviewQuery,
      response: { 200: Type.Array(PendingTaskReviewOut), ...errors(401, 403, 404, 422) },
    },
  }, async (request) => reviews.pending(callerOf(request), request.params.id, request.query));

  app.post(BASE, {
    schema: {
      tags,
      summary: 'Accept a submitted task, or request changes (reviewers)',
      description: '`accepted` ends the review; `changes_requested` (a comment is required) gives the task back to its annotator, open, dealt first by tasks/next; their resubmission waits for review again. Any frame of a video\'s task set decides the whole set, every pending frame of it at once, recorded once. 409 when the task (or set) is not waiting for review, as for the second of two reviewers deciding at once; 403 on your own task.',
      params: IdParams,
      body: TaskReviewCreate,
      response: { 201: TaskReviewOut, ...errors(401, 403, 404, 409, 422) },
    },
  }, async (request, reply) => reply.status(201).send(await reviews.decide(callerOf(request), request.params.id, request.body)));

  app.get(BASE, {
    schema: {
      tags,
      summary: 'Task review decisions, oldest first (reviewers)',
      description: 'Every decision with the version it was made on and its round.',
      params: IdParams,
      querystring: TaskReviewQuery,
      response: { 200: Type.Array(TaskReviewOut), ...errors(401, 403, 404, 422) },
    },
  }, async (request) => reviews.list(callerOf(request), request.params.id, request.query));
}
