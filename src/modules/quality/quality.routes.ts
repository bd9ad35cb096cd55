import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { callerOf } from '../../http/authenticate.js';
import { errors, IdParams } from '../../http/schemas.js';
import { checkCatalog } from './catalog.logic.js';
import { CheckOut, ModalityQuery, QualityBody, QualityReportOut } from './quality.schemas.js';
import type { QualityService } from './quality.service.js';

const REPORT_DESCRIPTION =
  'Runs the checks of the catalog (`GET /api/quality/checks`) over the project. Per-image features (blur, brightness, ' +
  'entropy, grayscale, pixel hash, dHash) are read from a cache filled at upload; images without a current entry are ' +
  'measured once from their thumbnail and cached (`features.computed` says how many). Each check reports its total ' +
  '`count`, the first (or worst, where ranked) 100 `items` and up to 10,000 distinct `image_ids` for the image grid. ' +
  'A project with samples also gets the checks of each sample modality it holds (`GET /api/quality/checks?modality=text`, …), ' +
  'read from its samples in keyset chunks; their items and `sample_ids` name samples. The image checks run when the project ' +
  'has images (or nothing at all). `score` is the share of records (images and samples) no error- or warning-level check ' +
  'flags. Reads only; needs `project.read`. ' +
  'An annotator kept to their assignments (`assigned_only` projects) gets 403: the report covers the whole project.';

export function qualityRoutes(server: FastifyInstance, quality: QualityService): void {
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

  app.get('/api/projects/:id/quality', {
    schema: { tags, summary: 'Quality report with the default configuration', description: REPORT_DESCRIPTION, params: IdParams, response: { 200: QualityReportOut, ...errors(401, 403, 404, 422) } },
  }, async (request) => quality.report(callerOf(request), request.params.id));

  app.post('/api/projects/:id/quality', {
    schema: {
      tags,
      summary: 'Quality report with a supplied configuration',
      description: `${REPORT_DESCRIPTION} Unknown check ids or parameter names, and values out of range, are 422 naming the valid ones.`,
      params: IdParams,
      body: QualityBody,
      response: { 200: QualityReportOut, ...errors(401, 403, 404, 422) },
    },
  }, async (request) => quality.report(callerOf(request), request.params.id, request.body ?? {}));
}
