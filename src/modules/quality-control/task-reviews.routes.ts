import { Type, type Static, type TSchema } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../http/authenticate.js';
import { errors, IdParams } from '../../http/schemas.js';
import type { Caller } from '../../access/caller.js';
import type { ReviewQuery, TaskReviewInput } from './task-reviews.service.js';

/** The schemas of one kind of task under review (images' or samples'). */
export interface TaskReviewSchemas { pending: TSchema; create: TSchema; review: TSchema; query: TSchema }

interface Reviews {
  pending(caller: Caller, projectId: number, query: ReviewQuery): Promise<unknown[]>;
  decide(caller: Caller, projectId: number, input: TaskReviewInput): Promise<unknown>;
  list(caller: Caller, projectId: number, query: ReviewQuery): Promise<unknown[]>;
}

/**
 * Reviews of quality-control task submissions (issue 29) under `base` (images': …/quality-control/task-reviews,
 * samples': …/quality-control/samples/task-reviews): the pending list, a decision, the record of decisions.
 */
export function taskReviewsRoutes(server: FastifyInstance, base: string, noun: 'image' | 'sample', reviews: Reviews, s: TaskReviewSchemas): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['quality control'];

  app.get(`${base}/pending`, {
    schema: {
      tags,
      summary: `Submitted ${noun} tasks waiting for review (reviewers)`,
      description: `Oldest task first, each with its annotator's submitted version; resubmissions (round 2 and up) carry the comment they answer.${noun === 'image' ? ' An annotator\'s task set on a video is one item (`video_id`, `frames`, the frame shown, every pending frame in `video_frames`).' : ''} Your own tasks are left out.`,
      params: IdParams,
      querystring: s.query,
      response: { 200: Type.Array(s.pending), ...errors(401, 403, 404, 422) },
    },
  }, async (request) => reviews.pending(callerOf(request), request.params.id, request.query as ReviewQuery));

  app.post(base, {
    schema: {
      tags,
      summary: `Accept a submitted ${noun} task, or request changes (reviewers)`,
      description: `\`accepted\` ends the review; \`changes_requested\` (a comment is required) gives the task back to its annotator, open, dealt first by tasks/next; their resubmission waits for review again.${noun === 'image' ? ' Any frame of a video\'s task set decides the whole set, every pending frame of it at once, recorded once.' : ''} 409 when the task (or set) is not waiting for review, as for the second of two reviewers deciding at once; 403 on your own task.`,
      params: IdParams,
      body: s.create,
      response: { 201: s.review, ...errors(401, 403, 404, 409, 422) },
    },
  }, async (request, reply) => reply.status(201).send(await reviews.decide(callerOf(request), request.params.id, request.body as Static<TSchema> as TaskReviewInput)));

  app.get(base, {
    schema: {
      tags,
      summary: `${noun === 'image' ? 'Image' : 'Sample'} task review decisions, oldest first (reviewers)`,
      description: 'Every decision with the version it was made on and its round.',
      params: IdParams,
      querystring: s.query,
      response: { 200: Type.Array(s.review), ...errors(401, 403, 404, 422) },
    },
  }, async (request) => reviews.list(callerOf(request), request.params.id, request.query as ReviewQuery));
}
