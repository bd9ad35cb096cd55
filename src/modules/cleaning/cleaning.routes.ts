import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { callerOf } from '../../http/authenticate.js';
import { errors, IdParams } from '../../http/schemas.js';
import { ModalityQuery } from '../quality/quality.schemas.js';
import { cleaningCatalog } from './cleaning-actions.logic.js';
import { ActionOut, CleaningApplyBody, CleaningApplyOut, CleaningPreviewBody, CleaningPreviewOut, CleaningRunOut, CleaningRunParams } from './cleaning.schemas.js';
import { REVERT_WINDOW_DAYS, type CleaningService } from './cleaning.service.js';

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
