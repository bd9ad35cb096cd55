import type { FastifyInstance } from 'fastify';
import type { AutoAnnotateService } from '../auto-annotate/auto-annotate.service.js';
import type { ModuleDeps } from '../module-deps.js';
import { TrackSuggestionsRepository } from './track-suggestions.repository.js';
import { trackSuggestionsRoutes } from './track-suggestions.routes.js';
import { TRACK_JOB, TrackSuggestionsService, type TrackJobPayload } from './track-suggestions.service.js';

/** Automatic tracking: a detector (through auto-annotate's inference) over a video's frames, tracks as suggestions; registers its job. */
export function registerTrackSuggestionsModule(app: FastifyInstance, deps: ModuleDeps, detector: AutoAnnotateService): void {
  const { models } = deps.services;
  const service = new TrackSuggestionsService(new TrackSuggestionsRepository(deps.db), models.repository, models.runtime, detector, deps.access, deps.queue);
  deps.queue.register<TrackJobPayload>(TRACK_JOB, (ctx) => service.runJob(ctx));
  trackSuggestionsRoutes(app, service);
}
