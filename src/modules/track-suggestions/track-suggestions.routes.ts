import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../http/authenticate.js';
import { errors, IdParams } from '../../http/schemas.js';
import { UnprocessableOut } from '../models/models.schemas.js';
import { TrackOut } from '../tracks/tracks.schemas.js';
import type { TrackSuggestionsService } from './track-suggestions.service.js';
import { AcceptRequest, TrackRunOut, TrackRunRequest, TrackSuggestionOut } from './track-suggestions.schemas.js';

export function trackSuggestionsRoutes(server: FastifyInstance, service: TrackSuggestionsService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['tracks'];

  app.post('/api/videos/:id/track-suggestions', {
    schema: {
      tags,
      summary: "Track objects automatically: run a detector over the video's frames and link its boxes into suggested tracks",
      description: 'A background job (202; follow `url`) runs the model on each decoded frame from `first_frame` to `last_frame` '
        + 'and links the boxes ByteTrack-style: confident detections (≥ `high_score`) are matched first to every track by '
        + 'IoU with its box predicted by a constant-velocity Kalman filter (an optimal, Hungarian match, within a class), '
        + 'then weak ones (≥ `low_score`) to the tracks left; a track is confirmed after two matches and ends after '
        + '`max_lost_frames` unseen. Each track becomes a suggestion (GET this path) of the project class named as the '
        + "model's class (others are skipped); a re-run of the model replaces its open suggestions overlapping the range. "
        + '409 while the video is not ready.',
      params: IdParams,
      body: TrackRunRequest,
      response: { 202: TrackRunOut, ...errors(401, 403, 404, 409, 503), 422: UnprocessableOut },
    },
  }, async (request, reply) => reply.status(202).send(await service.run(callerOf(request), request.params.id, request.body)));

  app.get('/api/videos/:id/track-suggestions', {
    schema: {
      tags,
      summary: "A video's suggested tracks, oldest first",
      params: IdParams,
      response: { 200: Type.Array(TrackSuggestionOut), ...errors(401, 403, 404, 422) },
    },
  }, async (request) => service.list(callerOf(request), request.params.id));

  app.post('/api/track-suggestions/:id/accept', {
    schema: {
      tags,
      summary: 'Accept a suggested track: it becomes a track with keyframes',
      description: 'Keyframes only where the motion departs from linear interpolation, unless `every_frame`; an `outside` keyframe '
        + 'follows its last box when the video goes on. The suggestion is gone after (404 for a second accept).',
      params: IdParams,
      body: Type.Optional(AcceptRequest),
      response: { 201: TrackOut, ...errors(401, 403, 404, 422) },
    },
  }, async (request, reply) => reply.status(201).send(await service.accept(callerOf(request), request.params.id, request.body ?? {})));

  app.delete('/api/track-suggestions/:id', {
    schema: {
      tags,
      summary: 'Reject a suggested track',
      params: IdParams,
      response: { 204: Type.Null(), ...errors(401, 403, 404, 422) },
    },
  }, async (request, reply) => {
    await service.reject(callerOf(request), request.params.id);
    return reply.status(204).send(null);
  });
}
