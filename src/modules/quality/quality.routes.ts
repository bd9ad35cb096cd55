import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { callerOf } from '../../http/authenticate.js';
import { errors, IdParams } from '../../http/schemas.js';
import { checkCatalog } from './catalog.js';
import { CheckOut, ModalityQuery, ProfileOut, QualityBody, QualityReportOut, ReadinessBody, ReadinessOut } from './quality.schemas.js';
import type { QualityService } from './quality.service.js';
import type { ReadinessEvaluator } from './readiness.js';

export interface QualityServices {
  readonly readiness: ReadinessEvaluator;
  readonly quality: QualityService;
}

const REPORT_DESCRIPTION =
  'Runs the checks of the catalog (`GET /api/quality/checks`) over the project. Per-image features (blur, brightness, ' +
  'entropy, grayscale, pixel hash, dHash) are read from a cache filled at upload; images without a current entry are ' +
  'measured once from their thumbnail and cached (`features.computed` says how many). Each check reports its total ' +
  '`count`, the first (or worst, where ranked) 100 `items` and up to 10,000 distinct `image_ids` for the image grid. ' +
  '`score` is the share of images no error- or warning-level check flags. Reads only; needs `project.read`.';

export function qualityRoutes(server: FastifyInstance, services: QualityServices): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['quality'];

  app.get('/api/quality/checks', {
    schema: {
      tags,
      summary: 'Quality check catalog',
      description: 'Every check with its severity and parameters (type, default, range); `?modality=` keeps one modality.',
      querystring: ModalityQuery,
      response: { 200: Type.Array(CheckOut), ...errors(401, 422) },
    },
  }, async (request) => checkCatalog(request.query.modality));

  app.get('/api/projects/:id/profile', {
    schema: {
      tags,
      summary: 'Dataset profile',
      description:
        'Counts per split and class, instances per class and split, annotations per image, image sizes and aspect ratios, ' +
        'COCO box sizes and a 10×10 heat map of box centres (bbox annotations). SQL aggregates only. Needs `project.read`.',
      params: IdParams,
      response: { 200: ProfileOut, ...errors(401, 404, 422) },
    },
  }, async (request) => services.quality.profile(callerOf(request), request.params.id));

  app.get('/api/projects/:id/quality', {
    schema: { tags, summary: 'Quality report with the default configuration', description: REPORT_DESCRIPTION, params: IdParams, response: { 200: QualityReportOut, ...errors(401, 404, 422) } },
  }, async (request) => services.quality.report(callerOf(request), request.params.id));

  app.post('/api/projects/:id/quality', {
    schema: {
      tags,
      summary: 'Quality report with a supplied configuration',
      description: `${REPORT_DESCRIPTION} Unknown check ids or parameter names, and values out of range, are 422 naming the valid ones.`,
      params: IdParams,
      body: QualityBody,
      response: { 200: QualityReportOut, ...errors(401, 404, 422) },
    },
  }, async (request) => services.quality.report(callerOf(request), request.params.id, request.body ?? {}));

  app.post('/api/projects/:id/readiness', {
    schema: {
      tags,
      summary: 'Training readiness for an adapter',
      description:
        'A score 0–100 made of weighted checks (each passed or failed, with a message) and the blockers: failed checks that ' +
        'make training pointless whatever the score (a detector without boxes or without a valid split, a classifier with ' +
        'fewer than `min_images_per_class` images in a class). `ready` is no blockers and score ≥ threshold ' +
        '(`config.min_readiness_score`, default 60). The training gate uses exactly this. Reads only; needs `project.read`.',
      params: IdParams,
      body: ReadinessBody,
      response: { 200: ReadinessOut, ...errors(401, 404, 422) },
    },
  }, async (request) => services.readiness.evaluate(callerOf(request), request.params.id, request.body ?? {}));
}
