import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../http/authenticate.js';
import { errors, IdParams, TextResponse } from '../../http/schemas.js';
import type { QualityControlService } from './quality-control.service.js';
import {
  AgreementQuery,
  AnnotatorOut,
  ConsensusCreate,
  DecisionOut,
  DisagreementOut,
  GroundTruthMark,
  GroundTruthOut,
  ImageAgreementOut,
  ImageTaskParams,
  MyScoresOut,
  NextOut,
  SettingsOut,
  SettingsUpdate,
  TaskListQuery,
  TaskOut,
  TaskSave,
  TaskTrackOut,
} from './quality-control.schemas.js';

const BASE = '/api/projects/:id/quality-control';

export function qualityControlRoutes(server: FastifyInstance, qc: QualityControlService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['quality control'];

  app.get(`${BASE}/settings`, {
    schema: { tags, summary: 'Quality control settings (project admins)', params: IdParams, response: { 200: SettingsOut, ...errors(401, 403, 404, 422) } },
  }, async (request) => qc.getSettings(callerOf(request), request.params.id));

  app.put(`${BASE}/settings`, {
    schema: { tags, summary: 'Change quality control settings (project admins)', description: 'Overlap 1–5 annotators per image, ground-truth share 0–0.5 of dealt tasks, agreement threshold 0–1.', params: IdParams, body: SettingsUpdate, response: { 200: SettingsOut, ...errors(401, 403, 404, 422) } },
  }, async (request) => qc.updateSettings(callerOf(request), request.params.id, request.body));

  app.get(`${BASE}/ground-truth`, {
    schema: { tags, summary: 'Ground-truth images with their frozen labels (project admins)', params: IdParams, response: { 200: Type.Array(GroundTruthOut), ...errors(401, 403, 404, 422) } },
  }, async (request) => qc.listGroundTruth(callerOf(request), request.params.id));

  app.post(`${BASE}/ground-truth`, {
    schema: {
      tags,
      summary: 'Mark approved images as ground truth (project admins)',
      description: 'Freezes each image\'s accepted labels as the reference. Every image must be of the project and approved (422, nothing marked). Marking again refreshes the labels.',
      params: IdParams,
      body: GroundTruthMark,
      response: { 201: Type.Array(GroundTruthOut), ...errors(401, 403, 404, 422) },
    },
  }, async (request, reply) => reply.status(201).send(await qc.markGroundTruth(callerOf(request), request.params.id, request.body.image_ids)));

  app.delete(`${BASE}/ground-truth/:image_id`, {
    schema: { tags, summary: 'Stop using an image as ground truth (project admins)', params: ImageTaskParams, response: { 204: Type.Null(), ...errors(401, 403, 404, 422) } },
  }, async (request, reply) => {
    await qc.unmarkGroundTruth(callerOf(request), request.params.id, request.params.image_id);
    return reply.status(204).send(null);
  });

  app.post(`${BASE}/tasks/next`, {
    schema: {
      tags,
      summary: 'Deal me my next labelling task',
      description: 'A task given back to you with changes requested first, then your oldest open task, else a new one: an image of the overlap pool, or (a share of the time) a ground-truth image; a video\'s frame comes with the video\'s other frames you may have (one task set). Tasks look the same whatever they are. 409 when the project has no overlap and no ground-truth share.',
      params: IdParams,
      response: { 200: NextOut, ...errors(401, 403, 404, 409, 422) },
    },
  }, async (request) => qc.next(callerOf(request), request.params.id));

  app.get(`${BASE}/tasks`, {
    schema: { tags, summary: 'My tasks in dealing order (project admins: anyone\'s with user_id)', params: IdParams, querystring: TaskListQuery, response: { 200: Type.Array(TaskOut), ...errors(401, 403, 404, 422) } },
  }, async (request) => qc.listTasks(callerOf(request), request.params.id, request.query));

  app.get(`${BASE}/tasks/:image_id`, {
    schema: { tags, summary: 'My task on an image, with my version', params: ImageTaskParams, response: { 200: TaskOut, ...errors(401, 403, 404, 422) } },
  }, async (request) => qc.getTask(callerOf(request), request.params.id, request.params.image_id));

  app.get(`${BASE}/tasks/:image_id/tracks`, {
    schema: {
      tags,
      summary: 'My task tracks over the video of a task\'s frame',
      description: 'The tracks of your own version of the video (shapes with `track_id` on your tasks of its frames), keyframes by frame; never the video\'s tracks. Empty for an image that is no frame.',
      params: ImageTaskParams,
      response: { 200: Type.Array(TaskTrackOut), ...errors(401, 403, 404, 422) },
    },
  }, async (request) => qc.taskTracks(callerOf(request), request.params.id, request.params.image_id));

  app.put(`${BASE}/tasks/:image_id`, {
    schema: { tags, summary: 'Save my version of an image', description: 'Replaces your shapes. On a video\'s frame, shapes with `track_id` are your task tracks\' keyframes there (`keyframe: false`: interpolated, left as computed), and a track the frame showed but the save leaves out is hidden from this frame on. A submitted task is 409 (a task given back with changes requested is open again).', params: ImageTaskParams, body: TaskSave, response: { 200: TaskOut, ...errors(401, 403, 404, 409, 422) } },
  }, async (request) => qc.saveTask(callerOf(request), request.params.id, request.params.image_id, request.body.shapes));

  app.post(`${BASE}/tasks/:image_id/submit`, {
    schema: { tags, summary: 'Submit my version of an image', description: 'The submission waits for a reviewer (`review_state: pending`, see …/task-reviews); a resubmission after a change request waits again. On a video\'s frame, your open tasks on all of that video\'s frames are submitted together.', params: ImageTaskParams, response: { 200: TaskOut, ...errors(401, 403, 404, 409, 422) } },
  }, async (request) => qc.submitTask(callerOf(request), request.params.id, request.params.image_id));

  app.get(`${BASE}/agreement`, {
    schema: { tags, summary: 'Agreement per image and class (project admins)', description: 'Images (not ground truth) with two or more submitted versions: mean pairwise F1 (IoU ≥ 0.5, Hungarian matching), mean IoU, F1 per class.', params: IdParams, querystring: AgreementQuery, response: { 200: Type.Array(ImageAgreementOut), ...errors(401, 403, 404, 422) } },
  }, async (request) => qc.agreement(callerOf(request), request.params.id, request.query));

  app.get(`${BASE}/disagreements`, {
    schema: { tags, summary: 'The disagreement queue (reviewers)', description: 'Images below the agreement threshold without a decision, with every version to overlay and what a merge would accept.', params: IdParams, querystring: AgreementQuery, response: { 200: Type.Array(DisagreementOut), ...errors(401, 403, 404, 422) } },
  }, async (request) => qc.disagreements(callerOf(request), request.params.id, request.query));

  app.post(`${BASE}/consensus`, {
    schema: {
      tags,
      summary: 'Decide an image\'s accepted labels from its versions (reviewers)',
      description: '`merge` (weighted by each annotator\'s ground-truth F1), `pick` one version, or `edit`. Replaces the image\'s accepted annotations (each change in its revision log) and records the decision.',
      params: IdParams,
      body: ConsensusCreate,
      response: { 201: DecisionOut, ...errors(401, 403, 404, 409, 422) },
    },
  }, async (request, reply) => reply.status(201).send(await qc.decide(callerOf(request), request.params.id, request.body)));

  app.get(`${BASE}/decisions`, {
    schema: { tags, summary: 'Consensus decisions, oldest first (reviewers)', params: IdParams, querystring: Type.Object({ image_id: Type.Optional(Type.Integer({ minimum: 1 })) }), response: { 200: Type.Array(DecisionOut), ...errors(401, 403, 404, 422) } },
  }, async (request) => qc.listDecisions(callerOf(request), request.params.id, request.query.image_id));

  app.get(`${BASE}/annotators`, {
    schema: {
      tags,
      summary: 'Annotator analytics (project admins and owners)',
      description: 'Per annotator: active time (the gaps between saves of their tasks, each up to 120 s), objects per hour, rejection and rework rates, ground-truth scores (overall, per class, by day) and agreement with others.',
      params: IdParams,
      response: { 200: Type.Array(AnnotatorOut), ...errors(401, 403, 404, 422) },
    },
  }, async (request) => qc.annotators(callerOf(request), request.params.id));

  app.get(`${BASE}/annotators/export`, {
    schema: {
      tags,
      summary: 'Annotator analytics as CSV (project admins and owners)',
      params: IdParams,
      response: { 200: TextResponse('One row per annotator, the figures of `GET …/annotators` without the per-class and daily series', 'text/csv'), ...errors(401, 403, 404, 422) },
    },
  }, async (request, reply) => {
    const csv = await qc.annotatorsCsv(callerOf(request), request.params.id);
    return reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="annotators-${request.params.id}.csv"`).send(csv);
  });

  app.get(`${BASE}/my-scores`, {
    schema: { tags, summary: 'My own scores, when the project shows them', params: IdParams, response: { 200: MyScoresOut, ...errors(401, 404, 422) } },
  }, async (request) => qc.myScores(callerOf(request), request.params.id));
}
