import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../http/authenticate.js';
import { errors, IdParams } from '../../http/schemas.js';
import type { ReviewsService } from './reviews.service.js';
import { ReviewBatchCreate, ReviewCreate, ReviewDecide, ReviewListQuery, ReviewOut } from './reviews.schemas.js';

export function reviewsRoutes(server: FastifyInstance, reviews: ReviewsService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['reviews'];

  app.get('/api/projects/:id/reviews', {
    schema: {
      tags,
      summary: "A project's reviews, oldest first (the queue: status=pending)",
      description: 'Paged with `limit` and `after` (the last id of the previous page).',
      params: IdParams,
      querystring: ReviewListQuery,
      response: { 200: Type.Array(ReviewOut), ...errors(401, 404, 422) },
    },
  }, async (request) => reviews.list(callerOf(request), request.params.id, request.query));

  app.post('/api/projects/:id/reviews', {
    schema: {
      tags,
      summary: 'Submit an image for review',
      description: 'The image turns `pending`. An image of another project is 422; one already waiting is 409.',
      params: IdParams,
      body: ReviewCreate,
      response: { 201: ReviewOut, ...errors(401, 403, 404, 409, 422) },
    },
  }, async (request, reply) => {
    const [review] = await reviews.submit(callerOf(request), request.params.id, [request.body.image_id], request.body.comment);
    return reply.status(201).send(review);
  });

  app.post('/api/projects/:id/reviews/batch', {
    schema: {
      tags,
      summary: 'Submit several images for review at once',
      description: 'All or nothing: if any image is not in the project (422) or already waiting (409), none is submitted.',
      params: IdParams,
      body: ReviewBatchCreate,
      response: { 201: Type.Array(ReviewOut), ...errors(401, 403, 404, 409, 422) },
    },
  }, async (request, reply) => reply.status(201).send(await reviews.submit(callerOf(request), request.params.id, request.body.image_ids, request.body.comment)));

  app.get('/api/reviews/:id', {
    schema: { tags, summary: 'One review', params: IdParams, response: { 200: ReviewOut, ...errors(401, 404, 422) } },
  }, async (request) => reviews.get(callerOf(request), request.params.id));

  app.post('/api/reviews/:id/decide', {
    schema: {
      tags,
      summary: 'Approve, reject or request changes',
      description: '`changes` needs a comment (422). `reject` and `changes` send the image back to the submitter\'s queue. A review already decided is 409.',
      params: IdParams,
      body: ReviewDecide,
      response: { 200: ReviewOut, ...errors(401, 403, 404, 409, 422) },
    },
  }, async (request) => reviews.decide(callerOf(request), request.params.id, request.body));
}
