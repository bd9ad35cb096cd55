import { Type } from 'typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../http/authenticate.js';
import { errors, IdParams } from '../../http/schemas.js';
import type { VideosService, VideoUpload } from './videos.service.js';
import { VideoOut, VideoUploadBody } from './videos.schemas.js';

export function videosRoutes(server: FastifyInstance, videos: VideosService, readUpload: (request: FastifyRequest) => Promise<VideoUpload>): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['videos'];

  app.post('/api/projects/:id/videos', {
    schema: {
      tags,
      summary: 'Upload a video; its frames become images',
      description: 'Multipart: the video in a part named `file` (MP4, WebM or MOV, told by its bytes and read by ffprobe), '
        + 'optionally `step` (decode every Nth frame, default 1). Answers 202 with the video `decoding`; a job (`job_id`) '
        + 'decodes the frames into images with `video_id`, `frame` and `timestamp_s`, then the video is `ready` (or `failed` '
        + 'with `error`). 413 when its frames would be too large or too many, 415 when it is not a video, 422 when FFmpeg '
        + 'cannot read it, 503 when FFmpeg is not installed on the server (the detail says what to install).',
      consumes: ['multipart/form-data'],
      params: IdParams,
      body: VideoUploadBody,
      response: { 202: VideoOut, ...errors(400, 401, 403, 404, 413, 415, 422, 503) },
    },
    // The handler reads the parts as a stream, so the body schema only documents them; this placeholder satisfies it.
    preValidation: async (request) => {
      request.body = { file: '' };
    },
  }, async (request, reply) => reply.status(202).send(await videos.upload(callerOf(request), request.params.id, () => readUpload(request))));

  app.get('/api/projects/:id/videos', {
    schema: { tags, summary: "A project's videos, oldest first", params: IdParams, response: { 200: Type.Array(VideoOut), ...errors(401, 404, 422) } },
  }, async (request) => videos.list(callerOf(request), request.params.id));

  app.get('/api/videos/:id', {
    schema: { tags, summary: 'One video', params: IdParams, response: { 200: VideoOut, ...errors(401, 404, 422) } },
  }, async (request) => videos.get(callerOf(request), request.params.id));

  app.delete('/api/videos/:id', {
    schema: {
      tags,
      summary: 'Delete a video with its frames, their annotations, its tracks and its file',
      description: 'The `X-Deleted-Images` and `X-Deleted-Annotations` headers say how many frames and annotations went with it.',
      params: IdParams,
      response: { 204: Type.Null(), ...errors(401, 403, 404, 422) },
    },
  }, async (request, reply) => {
    const deleted = await videos.delete(callerOf(request), request.params.id);
    return reply.status(204).header('X-Deleted-Images', String(deleted.frames)).header('X-Deleted-Annotations', String(deleted.annotations)).send(null);
  });
}
