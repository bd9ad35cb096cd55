import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../http/authenticate.js';
import { errors, IdParams } from '../../http/schemas.js';
import { UnprocessableOut } from '../models/models.schemas.js';
import type { AutoAnnotateService } from './auto-annotate.service.js';
import { INLINE_IMAGE_LIMIT, JobStartedOut, PrecomputeRequest, SamOut, SamRequest, YoloRequest, YoloResultOut } from './auto-annotate.schemas.js';

export function autoAnnotateRoutes(server: FastifyInstance, service: AutoAnnotateService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['auto-annotate'];

  app.post('/api/projects/:id/auto-annotate/yolo', {
    schema: {
      tags,
      summary: 'Annotate images with a registered detector or segmentation model',
      description: `Runs the model on \`image_ids\` (default: every image, or only unannotated ones). Boxes (detect) or `
        + `polygons (segment) are in original pixels, EXIF orientation applied; annotations are suggestions (\`status: "suggested"\`; re-runs replace the same model's open suggestions) with source \`model:<id>\` and `
        + `the detection's confidence. Predicted class names map to project classes by name (case-insensitive). Up to `
        + `${INLINE_IMAGE_LIMIT} images answer 200 with what was created; more answer 202 with a job to follow at `
        + `\`/api/jobs/{id}\`. \`.pt\` weights answer 422 (export them to ONNX); a busy inference queue 503 with Retry-After.`,
      params: IdParams,
      body: YoloRequest,
      response: { 200: YoloResultOut, 202: JobStartedOut, ...errors(401, 403, 404, 409, 503), 422: UnprocessableOut },
    },
  }, async (request, reply) => {
    const outcome = await service.yolo(callerOf(request), request.params.id, request.body);
    return reply.status(outcome.status).send(outcome.body);
  });

  app.post('/api/projects/:id/auto-annotate/sam', {
    schema: {
      tags,
      summary: 'Segment an object from clicks with SAM',
      description: 'Points are image pixels; labels 1 include, 0 exclude. The image embedding is computed once per image and '
        + 'model and cached (memory and disk), so later clicks only run the decoder. Uses `encoder_model`/`decoder_model`, else '
        + "the project's production (or newest) sam-encoder and sam-decoder. Saves a polygon (default) or mask annotation "
        + 'with source `sam`; `preview: true` saves nothing.',
      params: IdParams,
      body: SamRequest,
      response: { 200: SamOut, 201: SamOut, ...errors(401, 403, 404, 409, 503), 422: UnprocessableOut },
    },
  }, async (request, reply) => {
    const out = await service.sam(callerOf(request), request.params.id, request.body);
    return reply.status(out.annotation ? 201 : 200).send(out);
  });

  app.post('/api/projects/:id/auto-annotate/sam/precompute', {
    schema: {
      tags,
      summary: 'Compute the SAM embeddings of every image in the background',
      params: IdParams,
      body: PrecomputeRequest,
      response: { 202: JobStartedOut, ...errors(401, 403, 404), 422: UnprocessableOut },
    },
  }, async (request, reply) => reply.status(202).send(await service.precompute(callerOf(request), request.params.id, request.body ?? {})));
}
