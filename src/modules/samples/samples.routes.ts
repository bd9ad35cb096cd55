import { opened } from '../../http/opened-stream.js';
import { Type } from 'typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../http/authenticate.js';
import { sendPage } from '../../http/pagination.js';
import { errors, IdParams } from '../../http/schemas.js';
import { ReviewDecide } from '../reviews/reviews.schemas.js';
import type { SampleFile, SamplesService, SampleWorkflow } from './samples.service.js';
import {
  SampleAssignBody,
  SampleAssignOut,
  SampleCreateBody,
  SampleCreateManyOut,
  SampleFramesBody,
  SampleFramesOut,
  SampleListQuery,
  SampleLockOut,
  SampleOut,
  SampleParams,
  SampleRevisionOut,
  SampleSplitsBody,
  SampleSplitsOut,
  SampleTargetOut,
  SampleUpdate,
} from './samples.schemas.js';

export function samplesRoutes(server: FastifyInstance, samples: SamplesService, workflow: SampleWorkflow): void {
  projectSampleRoutes(server, samples);
  oneSampleRoutes(server, samples);
  sampleLockRoutes(server, workflow);
  sampleReviewRoutes(server, samples);
}

/** A project's samples: list, create, split into train/valid/test. */
function projectSampleRoutes(server: FastifyInstance, samples: SamplesService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['samples'];

  app.get('/api/projects/:id/samples', {
    schema: {
      tags,
      summary: "A project's samples in id order",
      description: 'Paged with `limit` and `offset` or `after` (the last id of the previous page, fast at any depth); total in '
        + '`X-Total-Count`, next page in `Link`. Filters `modality`, `split`, `label` (a class name), `assignee` (a user id, '
        + '`me` or `none`) and `review_state` combine. In a project that keeps annotators to their assignments, an annotator '
        + 'sees only the samples assigned to them.',
      params: IdParams,
      querystring: SampleListQuery,
      response: { 200: Type.Array(SampleOut), ...errors(401, 404, 422) },
    },
  }, async (request, reply) => sendPage(request, reply, await samples.list(callerOf(request), request.params.id, request.query), request.query.limit));

  app.get('/api/projects/:id/samples/target', {
    schema: {
      tags,
      summary: "The tabular samples' target: its column and kind",
      description: 'As the tabular import declared it (a class, or a number for regression). Samples created without an import: '
        + 'regression when any of the project\'s tabular samples holds a number, else classification; `task: null` with no tabular samples.',
      params: IdParams,
      response: { 200: SampleTargetOut, ...errors(401, 404, 422) },
    },
  }, async (request) => samples.target(callerOf(request), request.params.id));

  app.post('/api/projects/:id/samples', {
    schema: {
      tags,
      summary: 'Create a sample, or several with {items}',
      description: 'Text, tabular and LLM samples (media come through `import/jsonl`). Spans must lie inside the text and '
        + 'not cut a surrogate pair; new class names become classes. `{items}` answers `{created, items}`; all or nothing.',
      params: IdParams,
      body: SampleCreateBody,
      response: { 201: Type.Union([SampleOut, SampleCreateManyOut]), ...errors(401, 403, 404, 422) },
    },
  }, async (request, reply) => {
    const result = await samples.create(callerOf(request), request.params.id, request.body);
    return reply.status(201).send(result.one ? result.item : { created: result.created, items: result.items });
  });

  app.post('/api/projects/:id/samples/splits', {
    schema: {
      tags,
      summary: 'Assign train/valid/test splits to the samples',
      description: '`stratified` (default) keeps each class\'s proportions (multi-label: iterative stratification); regression '
        + 'targets are stratified by their quintiles. The same samples, percentages and seed always give the same splits.',
      params: IdParams,
      body: SampleSplitsBody,
      response: { 200: SampleSplitsOut, ...errors(401, 403, 404, 422) },
    },
  }, async (request) => samples.split(callerOf(request), request.params.id, request.body));
}

/** One sample: read it, change it, its media file. */
function oneSampleRoutes(server: FastifyInstance, samples: SamplesService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['samples'];

  app.get('/api/samples/:sample_id', {
    schema: { tags, summary: 'One sample', params: SampleParams, response: { 200: SampleOut, ...errors(401, 404, 422) } },
  }, async (request) => samples.get(callerOf(request), request.params.sample_id));

  app.patch('/api/samples/:sample_id', {
    schema: {
      tags,
      summary: "Change a sample's label, spans, value or split",
      description: 'Class names must be classes of the project. Another user\'s lock on the sample: 409 with `lock`. Each change '
        + 'is recorded in the sample\'s revisions.',
      params: SampleParams,
      body: SampleUpdate,
      response: { 200: SampleOut, ...errors(401, 403, 404, 409, 422) },
    },
  }, async (request) => samples.update(callerOf(request), request.params.sample_id, request.body));

  app.get('/api/samples/:sample_id/file', {
    schema: {
      tags,
      summary: 'The media file of an audio or video sample (HTTP Range supported)',
      params: SampleParams,
      response: {
        200: { description: 'The file as imported', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } },
        206: { description: 'The requested byte range', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } },
        304: Type.Null(),
        416: Type.Object({ detail: Type.String() }),
        ...errors(401, 404, 422),
      },
    },
  }, async (request, reply) => sendMedia(request, reply, await samples.file(callerOf(request), request.params.sample_id)));
}

/** A sample's editing lock (the team workflow's, as images have theirs). */
function sampleLockRoutes(server: FastifyInstance, workflow: SampleWorkflow): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['samples'];

  app.get('/api/samples/:sample_id/lock', {
    schema: { tags, summary: "A sample's editing lock, or null", params: SampleParams, response: { 200: Type.Union([SampleLockOut, Type.Null()]), ...errors(401, 404, 422) } },
  }, async (request) => workflow.getLock(callerOf(request), request.params.sample_id));

  app.post('/api/samples/:sample_id/lock', {
    schema: {
      tags,
      summary: 'Take or renew the editing lock of a sample (60 s)',
      description: 'While it holds, other users\' PATCHes of the sample answer 409. Held by someone else: 409 with `lock`.',
      params: SampleParams,
      response: { 200: SampleLockOut, ...errors(401, 403, 404, 409, 422) },
    },
  }, async (request) => workflow.acquireLock(callerOf(request), request.params.sample_id));

  app.delete('/api/samples/:sample_id/lock', {
    schema: {
      tags,
      summary: "Release your lock, or break anyone's with force=true (project admins)",
      params: SampleParams,
      querystring: Type.Object({ force: Type.Optional(Type.Boolean({ default: false })) }),
      response: { 204: Type.Null(), ...errors(401, 403, 404, 409, 422) },
    },
  }, async (request, reply) => {
    await workflow.releaseLock(callerOf(request), request.params.sample_id, request.query.force ?? false);
    return reply.status(204).send(null);
  });
}

/** Assignment, submission and review of samples, and the history they leave. */
function sampleReviewRoutes(server: FastifyInstance, samples: SamplesService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['samples'];

  app.post('/api/projects/:id/samples/assign', {
    schema: {
      tags,
      summary: 'Assign samples to an annotator, or withdraw their assignment',
      description: 'Exactly one of `sample_ids` and `count` (the next unassigned samples, oldest first, of `modality` when '
        + 'given). The assignee must be a member who can annotate (422 otherwise); `user_id: null` withdraws the assignment of '
        + '`sample_ids`. A sample of another project is 422 and nothing changes. Answers the samples whose assignee changed; '
        + 'each gets an `assign` revision. A sample another request reassigned meanwhile is 409 and nothing changes.',
      params: IdParams,
      body: SampleAssignBody,
      response: { 200: SampleAssignOut, ...errors(401, 403, 404, 409, 422) },
    },
  }, async (request) => samples.assign(callerOf(request), request.params.id, request.body));

  app.post('/api/samples/:sample_id/submit', {
    schema: {
      tags,
      summary: 'Submit a sample for review',
      description: 'The sample turns `pending`; one already waiting is 409. Recorded as a `submit` revision.',
      params: SampleParams,
      response: { 200: SampleOut, ...errors(401, 403, 404, 409, 422) },
    },
  }, async (request) => samples.submit(callerOf(request), request.params.sample_id));

  app.post('/api/samples/:sample_id/review', {
    schema: {
      tags,
      summary: 'Approve, reject or request changes on a submitted sample',
      description: 'Reviewers and above. The sample must be `pending` (409 otherwise); `changes` needs a comment (422). '
        + 'The state becomes `approved`, `rejected` or `changes`; the comment, who and when stay on the sample and in a '
        + '`review` revision.',
      params: SampleParams,
      body: ReviewDecide,
      response: { 200: SampleOut, ...errors(401, 403, 404, 409, 422) },
    },
  }, async (request) => samples.review(callerOf(request), request.params.sample_id, request.body));

  app.get('/api/samples/:sample_id/revisions', {
    schema: { tags, summary: "A sample's history (label edits, assignments, submissions, review decisions), oldest first", params: SampleParams, response: { 200: Type.Array(SampleRevisionOut), ...errors(401, 404, 422) } },
  }, async (request) => samples.revisions(callerOf(request), request.params.sample_id));
}

/** A video sample sent to an image project as frames (the videos module decodes them through its frames port). */
export function sampleFramesRoutes(server: FastifyInstance, samples: SamplesService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['samples'];

  app.post('/api/samples/:sample_id/frames', {
    schema: {
      tags,
      summary: 'Send a video sample to an image project as frames',
      description: 'The sample (a video you may read) is copied into a video of `project_id` (an image project you may add '
        + 'images to: the whole project, so an annotator kept to assignments gets 403) and decoded like an uploaded video: '
        + 'every `step`-th frame of the clip `start_s` to `end_s` (seconds, end excluded; default the whole video; '
        + '0 ≤ start_s < end_s ≤ duration, else 422) becomes an image. Each of the sample\'s time segments classifies the '
        + 'frames it covers with the class of its label\'s name in the target project; `segment_classes` says which labels '
        + 'matched a class and which are `missing` there (left out). Answers 202 with the `job_id` and `video_id`; the job\'s '
        + 'result counts `frames` and `classified` frames. 422 for a sample that is not a video, 503 without FFmpeg.',
      params: SampleParams,
      body: SampleFramesBody,
      response: { 202: SampleFramesOut, ...errors(400, 401, 403, 404, 413, 415, 422, 503) },
    },
  }, async (request, reply) => reply.status(202).send(await samples.sendToFrames(callerOf(request), request.params.sample_id, request.body)));
}

/** Sends a media file whole, or the one byte range asked for (206), so players can seek; 416 for a range outside it. */
async function sendMedia(request: FastifyRequest, reply: FastifyReply, file: SampleFile) {
  const etag = `"${file.etag}"`;
  reply
    .header('ETag', etag)
    .header('Accept-Ranges', 'bytes')
    .header('Cache-Control', 'private, no-cache')
    .header('X-Content-Type-Options', 'nosniff')
    .header('Content-Disposition', `inline; filename="${file.filename}"`);
  const ifNoneMatch = request.headers['if-none-match'];
  if (ifNoneMatch && ifNoneMatch.split(',').some((tag) => tag.trim() === etag)) return reply.status(304).send();
  reply.type(file.mimeType);
  const range = request.headers.range;
  const ifRange = request.headers['if-range'];
  if (range && (!ifRange || ifRange === etag)) {
    const match = /^bytes=(\d*)-(\d*)$/.exec(range.trim());
    let start = NaN;
    let end = NaN;
    if (match && (match[1] !== '' || match[2] !== '')) {
      if (match[1] === '') {
        start = Math.max(0, file.size - Number(match[2]));
        end = file.size - 1;
      } else {
        start = Number(match[1]);
        end = match[2] === '' ? file.size - 1 : Math.min(Number(match[2]), file.size - 1);
      }
    }
    if (!(start <= end) || start >= file.size) {
      return reply.status(416).type('application/json').header('Content-Range', `bytes */${file.size}`).send({ detail: `Range "${range}" is not satisfiable (size ${file.size})` });
    }
    reply.status(206).header('Content-Range', `bytes ${start}-${end}/${file.size}`).header('Content-Length', String(end - start + 1));
    return reply.send(await opened(file.open({ start, end })));
  }
  const stream = await opened(file.open());
  reply.header('Content-Length', String(file.size));
  return reply.send(stream);
}
