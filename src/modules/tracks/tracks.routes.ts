import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../http/authenticate.js';
import { errors, IdParams } from '../../http/schemas.js';
import type { TracksService } from './tracks.service.js';
import { TrackCreate, TrackOut, TrackUpdate } from './tracks.schemas.js';

export function tracksRoutes(server: FastifyInstance, tracks: TracksService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['tracks'];

  app.get('/api/videos/:id/tracks', {
    schema: { tags, summary: "A video's tracks with their keyframes, oldest first", params: IdParams, response: { 200: Type.Array(TrackOut), ...errors(401, 404, 422) } },
  }, async (request) => tracks.list(callerOf(request), request.params.id));

  app.post('/api/videos/:id/tracks', {
    schema: {
      tags,
      summary: 'Create a track: one object across frames, made of keyframes',
      description: 'Between keyframes of the same type the shape is interpolated linearly (boxes with rotation the short way, '
        + 'ellipses, and points, polylines, one-part polygons and keypoints with equal point counts; otherwise the earlier '
        + 'keyframe holds); an `outside` keyframe hides the track until its next keyframe. Each frame\'s annotation list '
        + '(`GET /api/images/{id}/annotations`) shows the shapes with `track_id` and `interpolated`.',
      params: IdParams,
      body: TrackCreate,
      response: { 201: TrackOut, ...errors(401, 403, 404, 422) },
    },
  }, async (request, reply) => reply.status(201).send(await tracks.create(callerOf(request), request.params.id, request.body)));

  app.get('/api/tracks/:id', {
    schema: { tags, summary: 'One track with its keyframes', params: IdParams, response: { 200: TrackOut, ...errors(401, 404, 422) } },
  }, async (request) => tracks.get(callerOf(request), request.params.id));

  app.patch('/api/tracks/:id', {
    schema: {
      tags,
      summary: "Change a track's class or attributes, add, replace or remove keyframes",
      description: '`keyframes` are upserted by frame, `delete_frames` removed (both in one transaction); a track keeps at least one keyframe (422).',
      params: IdParams,
      body: TrackUpdate,
      response: { 200: TrackOut, ...errors(401, 403, 404, 422) },
    },
  }, async (request) => tracks.update(callerOf(request), request.params.id, request.body));

  app.delete('/api/tracks/:id', {
    schema: { tags, summary: 'Delete a track with its keyframes', params: IdParams, response: { 204: Type.Null(), ...errors(401, 403, 404, 422) } },
  }, async (request, reply) => {
    await tracks.delete(callerOf(request), request.params.id);
    return reply.status(204).send(null);
  });
}
