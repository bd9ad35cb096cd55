import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { callerOf } from '../../http/authenticate.js';
import { errors, IdParams } from '../../http/schemas.js';
import { checkCatalog } from './catalog.js';
import { cleaningCatalog } from './cleaning-actions.js';
import { REVERT_WINDOW_DAYS, type CleaningService } from './cleaning.service.js';
import type { CanonicalService } from './canonical.service.js';
import {
  ActionOut,
  CanonicalQuery,
  CanonicalRecord,
  CheckOut,
  CleaningApplyBody,
  CleaningApplyOut,
  CleaningPreviewBody,
  CleaningPreviewOut,
  CleaningRunOut,
  CleaningRunParams,
  ModalityQuery,
  ProfileOut,
  QualityBody,
  QualityReportOut,
  ReadinessBody,
  ReadinessOut,
} from './quality.schemas.js';
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
  'A project with samples also gets the checks of each sample modality it holds (`GET /api/quality/checks?modality=text`, …), ' +
  'read from its samples in keyset chunks; their items and `sample_ids` name samples. The image checks run when the project ' +
  'has images (or nothing at all). `score` is the share of records (images and samples) no error- or warning-level check ' +
  'flags. Reads only; needs `project.read`. ' +
  'An annotator kept to their assignments (`assigned_only` projects) gets 403: the report covers the whole project.';

const WHOLE_PROJECT = 'an annotator kept to their assignments (`assigned_only` projects) gets 403: it covers the whole project.';

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
        'COCO box sizes and a 10×10 heat map of box centres (bbox annotations). A project with samples also gets `samples`: ' +
        'counts per modality and split, classes per split, text lengths (text and LLM records) and, for tabular samples, each ' +
        'column\'s type, missing and distinct values, numeric range and mean or most frequent values. `modality` is the one most ' +
        'records have. Counts are SQL aggregates; lengths and columns are read in keyset pages. Needs `project.read`; ' +
        `${WHOLE_PROJECT}`,
      params: IdParams,
      response: { 200: ProfileOut, ...errors(401, 403, 404, 422) },
    },
  }, async (request) => services.quality.profile(callerOf(request), request.params.id));

  app.get('/api/projects/:id/quality', {
    schema: { tags, summary: 'Quality report with the default configuration', description: REPORT_DESCRIPTION, params: IdParams, response: { 200: QualityReportOut, ...errors(401, 403, 404, 422) } },
  }, async (request) => services.quality.report(callerOf(request), request.params.id));

  app.post('/api/projects/:id/quality', {
    schema: {
      tags,
      summary: 'Quality report with a supplied configuration',
      description: `${REPORT_DESCRIPTION} Unknown check ids or parameter names, and values out of range, are 422 naming the valid ones.`,
      params: IdParams,
      body: QualityBody,
      response: { 200: QualityReportOut, ...errors(401, 403, 404, 422) },
    },
  }, async (request) => services.quality.report(callerOf(request), request.params.id, request.body ?? {}));

  app.post('/api/projects/:id/readiness', {
    schema: {
      tags,
      summary: 'Training readiness for an adapter',
      description:
        'A score 0–100 made of weighted checks (each passed or failed, with a message) and the blockers: failed checks that ' +
        'make training pointless whatever the score (every adapter: fewer than 50% of images or samples annotated; a detector ' +
        'without boxes or without a valid split, a class with fewer than 5 instances in train (or `min_instances_per_class` ' +
        'when lower) or a trained class missing from valid; a classifier with fewer than `min_images_per_class` images in a ' +
        'class, an empty valid split or a class missing from it; for the sample adapters `tabular` and `text`: no samples of ' +
        'their modality, no target column or labels, one class only or fewer than `min_samples_per_class` samples in one, a ' +
        'regression target without numbers, an empty train or valid split while others are assigned). `ready` is no blockers and score ≥ threshold ' +
        '(`config.min_readiness_score`, default 60). The training gate uses exactly this. Reads only; needs `project.read`; ' +
        `${WHOLE_PROJECT}`,
      params: IdParams,
      body: ReadinessBody,
      response: { 200: ReadinessOut, ...errors(401, 403, 404, 422) },
    },
  }, async (request) => services.readiness.evaluate(callerOf(request), request.params.id, request.body ?? {}));
}

export function cleaningRoutes(server: FastifyInstance, cleaning: CleaningService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['cleaning'];
  const permission = 'Needs the `images.delete` permission (project admins and owners); viewers get 403.';

  app.get('/api/cleaning/actions', {
    schema: {
      tags,
      summary: 'Cleaning action catalog',
      description: 'Every cleaning action with its parameters (type, default, range); `?modality=` keeps one modality.',
      querystring: ModalityQuery,
      response: { 200: Type.Array(ActionOut), ...errors(401, 422) },
    },
  }, async (request) => cleaningCatalog(request.query.modality));

  app.post('/api/projects/:id/cleaning/preview', {
    schema: {
      tags,
      summary: 'Dry-run cleaning actions',
      description:
        'Lists every change the actions would make (in the order given; later actions skip what earlier ones deleted) and ' +
        'a `preview_token`: a hash of the actions, the changes and the state of every row they touch. Changes nothing. ' +
        `Unknown action ids or params, and values out of range, are 422 naming the valid ones. ${permission}`,
      params: IdParams,
      body: CleaningPreviewBody,
      response: { 200: CleaningPreviewOut, ...errors(401, 403, 404, 422) },
    },
  }, async (request) => cleaning.preview(callerOf(request), request.params.id, request.body));

  app.post('/api/projects/:id/cleaning', {
    schema: {
      tags,
      summary: 'Apply cleaning actions',
      description:
        'Makes exactly the changes a preview of the same actions shows, in one transaction: revisions for every annotation it ' +
        'changes, counters kept right, and a cleaning run that records every row before and after so it can be reverted ' +
        `(\`POST /api/cleaning-runs/{id}/revert\`) for ${REVERT_WINDOW_DAYS} days; the files of deleted images are kept until then. ` +
        'A `preview_token` from before a later change to the project → 409; another user\'s lock on a touched image → 409 ' +
        `naming the images and holders in \`locks\`; in both cases, and on any failure, nothing changes. ${permission}`,
      params: IdParams,
      body: CleaningApplyBody,
      response: { 201: CleaningApplyOut, ...errors(401, 403, 404, 409, 422) },
    },
  }, async (request, reply) => reply.code(201).send(await cleaning.apply(callerOf(request), request.params.id, request.body)));

  app.get('/api/projects/:id/cleaning/runs', {
    schema: {
      tags,
      summary: 'Cleaning history',
      description: 'The project\'s last 100 cleaning runs, newest first. Needs `project.read`.',
      params: IdParams,
      response: { 200: Type.Array(CleaningRunOut), ...errors(401, 404, 422) },
    },
  }, async (request) => cleaning.history(callerOf(request), request.params.id));

  app.post('/api/cleaning-runs/:id/revert', {
    schema: {
      tags,
      summary: 'Revert a cleaning run as a whole',
      description:
        'Puts back every image, annotation and class the run deleted (under their old ids) and every change it made, in one ' +
        'transaction, with `revert` revisions. Refused (409) when the run is not `applied`, its window has passed, or any row ' +
        `it touched changed since (nothing changes then). Reviews and assignments of deleted images do not come back. ${permission}`,
      params: CleaningRunParams,
      response: { 200: CleaningRunOut, ...errors(401, 403, 404, 409, 422) },
    },
  }, async (request) => cleaning.revert(callerOf(request), request.params.id));
}

export function canonicalRoutes(server: FastifyInstance, canonical: CanonicalService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/api/projects/:id/canonical', {
    schema: {
      tags: ['quality'],
      summary: 'Canonical export: the universal record schema',
      description:
        'One `CanonicalRecord` per image, then one per sample: `{id, modality, split, media, annotations, label, spans, value, ' +
        'metadata}`, the form other tools and pipelines read without knowing Versa\'s tables. A sample\'s `media` is its file ' +
        '(audio, video: `uri` of `GET /api/samples/{id}/file`) or its content (`{text}`, `{row}`, `{prompt, response, …}`); ' +
        'time segments are `annotations` of type `segment`. `?split=` keeps one split of both. Streams ' +
        'JSON Lines (`application/x-ndjson`, one record per line) straight from the database; `?format=json` streams one ' +
        'JSON array instead. Needs the `export` permission (every role); an annotator kept to their assignments ' +
        '(`assigned_only` projects) gets 403, as for `POST /api/projects/{id}/export`.',
      params: IdParams,
      querystring: CanonicalQuery,
      response: {
        200: {
          description: 'The records: images in id order, then samples in id order',
          content: {
            'application/x-ndjson': { schema: CanonicalRecord },
            'application/json': { schema: Type.Array(CanonicalRecord) },
          },
        },
        ...errors(401, 403, 404, 422),
      },
    },
  }, async (request, reply) => {
    const out = await canonical.stream(callerOf(request), request.params.id, request.query);
    reply.header('content-type', out.contentType).header('cache-control', 'private, no-store');
    // The body is a stream of the documented records; the type provider only knows object bodies.
    return reply.send(out.body as never);
  });
}
