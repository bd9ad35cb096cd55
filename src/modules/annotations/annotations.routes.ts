import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../http/authenticate.js';
import { PageQuery, sendPage } from '../../http/pagination.js';
import { errors, IdParams } from '../../http/schemas.js';
import type { AnnotationsService } from './annotations.service.js';
import { AnnotationCreate, AnnotationOut, ImageAnnotationOut, ImageParams, PredictionsDecisionOut, PredictionsFilter, trackShapeOut, type FrameShapes } from './annotations.schemas.js';

export function annotationsRoutes(server: FastifyInstance, annotations: AnnotationsService, frameShapes: FrameShapes): void {
  imageAnnotationRoutes(server, annotations, frameShapes);
  oneAnnotationRoutes(server, annotations);
  suggestionDecisionRoutes(server, annotations);
}

/** An image's annotations: list them (a video frame's with its tracks' shapes), add one. */
function imageAnnotationRoutes(server: FastifyInstance, annotations: AnnotationsService, frameShapes: FrameShapes): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['annotations'];

  app.get('/api/images/:image_id/annotations', {
    schema: {
      tags,
      summary: "An image's annotations, oldest first",
      description: 'Paged with `limit` and `offset` or `after`; the total is in `X-Total-Count`, the next page in `Link`. '
        + "On a video's frame, the tracks' shapes on that frame follow the annotations on the page where these end (they "
        + 'carry `track_id` and `interpolated`, and count in the total).',
      params: ImageParams,
      querystring: PageQuery,
      response: { 200: Type.Array(ImageAnnotationOut), ...errors(401, 404, 422) },
    },
  }, async (request, reply) => {
    const imageId = request.params.image_id;
    const page = await annotations.listForImage(callerOf(request), imageId, request.query);
    // Read only once the caller may see the image; the cursor of the next page stays an annotation's id.
    const shapes = (await frameShapes(imageId)).map((shape) => trackShapeOut(imageId, shape));
    const items: ImageAnnotationOut[] = sendPage(request, reply, { ...page, total: page.total + shapes.length }, request.query.limit);
    return page.items.length < request.query.limit ? [...items, ...shapes] : items;
  });

  app.post('/api/images/:image_id/annotations', {
    schema: {
      tags,
      summary: 'Annotate an image',
      description: 'The class must belong to the image\'s project (422 at `body.class_id`). Geometry problems are 422 with `loc` inside `body.geometry`. '
        + 'A single-label classification project holds one classification per image (a suggestion included): a second is 409, '
        + 'with the existing one\'s `annotation_id`; change the class with PUT.',
      params: ImageParams,
      body: AnnotationCreate,
      response: { 201: AnnotationOut, ...errors(401, 403, 404, 409, 422) },
    },
  }, async (request, reply) => reply.status(201).send(await annotations.create(callerOf(request), request.params.image_id, request.body)));
}

/** One annotation: read, replace, delete. */
function oneAnnotationRoutes(server: FastifyInstance, annotations: AnnotationsService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['annotations'];

  app.get('/api/annotations/:id', {
    schema: { tags, summary: 'One annotation', params: IdParams, response: { 200: AnnotationOut, ...errors(401, 404, 422) } },
  }, async (request) => annotations.get(callerOf(request), request.params.id));

  app.put('/api/annotations/:id', {
    schema: {
      tags,
      summary: 'Replace an annotation',
      description: 'Same body as creating; the annotation stays on its image.',
      params: IdParams,
      body: AnnotationCreate,
      response: { 200: AnnotationOut, ...errors(401, 403, 404, 409, 422) },
    },
  }, async (request) => annotations.replace(callerOf(request), request.params.id, request.body));

  app.delete('/api/annotations/:id', {
    schema: { tags, summary: 'Delete an annotation', params: IdParams, response: { 204: Type.Null(), ...errors(401, 403, 404, 422) } },
  }, async (request, reply) => {
    await annotations.delete(callerOf(request), request.params.id);
    return reply.status(204).send(null);
  });
}

/** Deciding on suggestions (model output): accept or reject one, or all of an image's. */
function suggestionDecisionRoutes(server: FastifyInstance, annotations: AnnotationsService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['annotations'];

  app.post('/api/annotations/:id/accept', {
    schema: {
      tags,
      summary: 'Accept a suggested annotation (model prediction)',
      description: 'It becomes `accepted` (exported, versioned); an `update` revision records it. 409 when it is not a suggestion.',
      params: IdParams,
      response: { 200: AnnotationOut, ...errors(401, 403, 404, 409, 422) },
    },
  }, async (request) => annotations.accept(callerOf(request), request.params.id));

  app.post('/api/annotations/:id/reject', {
    schema: {
      tags,
      summary: 'Reject a suggested annotation (model prediction)',
      description: 'Deletes it (a `delete` revision keeps it for revert). 409 when it is not a suggestion: delete accepted annotations with DELETE.',
      params: IdParams,
      response: { 204: Type.Null(), ...errors(401, 403, 404, 409, 422) },
    },
  }, async (request, reply) => {
    await annotations.reject(callerOf(request), request.params.id);
    return reply.status(204).send(null);
  });

  for (const decision of ['accept', 'reject'] as const) {
    app.post(`/api/images/:image_id/predictions/${decision}-all`, {
      schema: {
        tags,
        summary: decision === 'accept' ? "Accept every suggestion on an image" : 'Reject (delete) every suggestion on an image',
        description: 'All suggestions, or those of `source` (e.g. `model:3`), in one transaction.',
        params: ImageParams,
        body: PredictionsFilter,
        response: { 200: PredictionsDecisionOut, ...errors(401, 403, 404, 409, 422) },
      },
    }, async (request) => annotations.decideAll(callerOf(request), request.params.image_id, decision, request.body.source));
  }
}
