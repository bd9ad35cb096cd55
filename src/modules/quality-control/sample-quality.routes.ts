import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../http/authenticate.js';
import { errors, IdParams, TextResponse } from '../../http/schemas.js';
import type { SampleQualityService } from './sample-quality.service.js';
import { SampleGroundTruthMark, SampleGroundTruthOut, SampleNextOut, SampleReportOut, SampleTaskOut, SampleTaskParams, SampleTaskSave } from './sample-quality.schemas.js';

const BASE = '/api/projects/:id/quality-control/samples';

/** Quality control of samples (issue 29), beside the images' routes and under the same settings. */
export function sampleQualityRoutes(server: FastifyInstance, qc: SampleQualityService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['quality control'];

  app.get(`${BASE}/ground-truth`, {
    schema: { tags, summary: 'Ground-truth samples with their frozen class and spans (project admins)', params: IdParams, response: { 200: Type.Array(SampleGroundTruthOut), ...errors(401, 403, 404, 422) } },
  }, async (request) => qc.listGroundTruth(callerOf(request), request.params.id));

  app.post(`${BASE}/ground-truth`, {
    schema: {
      tags,
     
      summary: 'Mark approved samples as ground truth (project admins)',
      description: 'Freezes each sample\'s reviewed class and text spans as the reference. Every sample must be of the project and approved (422, nothing marked).',
      params: IdParams,
      body: SampleGroundTruthMark,
      response: { 201: Type.Array(SampleGroundTruthOut), ...errors(401, 403, 404, 422) },
    },
  }, async (request, reply) => reply.status(201).send(await qc.markGroundTruth(callerOf(request), request.params.id, request.body.sample_ids)));

  app.post(`${BASE}/tasks/next`, {
    schema: {
      tags,
     
      summary: 'Deal me my next sample to label',
      description: 'Your oldest open sample task, else a sample of the overlap pool or (the ground-truth share of the time) a ground-truth sample; they look the same. 409 when the project has no overlap and no ground-truth share.',
      params: IdParams,
      response: { 200: SampleNextOut, ...errors(401, 403, 404, 409, 422) },
    },
  }, async (request) => qc.next(callerOf(request), request.params.id));

  app.get(`${BASE}/tasks/:sample_id`, {
    schema: { tags, summary: 'My task on a sample, with my answer', params: SampleTaskParams, response: { 200: SampleTaskOut, ...errors(401, 403, 404, 422) } },
  }, async (request) => qc.getTask(callerOf(request), request.params.id, request.params.sample_id));

  app.put(`${BASE}/tasks/:sample_id`, {
    schema: { tags, summary: 'Save my class and spans for a sample', description: 'Fields left out keep their value. A submitted task is 409.', params: SampleTaskParams, body: SampleTaskSave, response: { 200: SampleTaskOut, ...errors(401, 403, 404, 409, 422) } },
  }, async (request) => qc.saveTask(callerOf(request), request.params.id, request.params.sample_id, request.body));

  app.post(`${BASE}/tasks/:sample_id/submit`, {
    schema: { tags, summary: 'Submit my answer on a sample', params: SampleTaskParams, response: { 200: SampleTaskOut, ...errors(401, 403, 404, 409, 422) } },
  }, async (request) => qc.submitTask(callerOf(request), request.params.id, request.params.sample_id));

  app.get(`${BASE}/report`, {
    schema: {
      tags,
     
      summary: 'Scores and agreement on samples (project admins)',
      description: 'Per annotator: accuracy of classes and token-level F1 of text spans on ground-truth samples. Agreement: Krippendorff\'s alpha (nominal) of classes over the overlapped samples, of token labels per text and overall.',
      params: IdParams,
      response: { 200: SampleReportOut, ...errors(401, 403, 404, 422) },
    },
  }, async (request) => qc.report(callerOf(request), request.params.id));

  app.get(`${BASE}/report/export`, {
    schema: {
      tags,
      summary: 'Annotators\' scores on samples as CSV (project admins)',
      params: IdParams,
      response: { 200: TextResponse('One row per annotator, the `annotators` of `GET …/samples/report`', 'text/csv'), ...errors(401, 403, 404, 422) },
    },
  }, async (request, reply) => {
    const csv = await qc.reportCsv(callerOf(request), request.params.id);
    return reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="sample-annotators-${request.params.id}.csv"`).send(csv);
  });
}
