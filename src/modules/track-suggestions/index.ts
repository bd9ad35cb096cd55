import type { FastifyInstance } from 'fastify';
import type { AutoAnnotateService } from '../auto-annotate/auto-annotate.service.js';
import type { ModuleDeps } from '../module-deps.js';
import type { ModelRuntime } from '../models/model-runtime.adapter.js';
import type { ModelsRepository } from '../models/models.repository.js';
import { TrackSuggestionsRepository } from './track-suggestions.repository.js';
import { trackSuggestionsRoutes } from './track-suggestions.routes.js';
import { TRACK_JOB, TrackSuggestionsService, type TrackJobPayload } from './track-suggestions.service.js';

/** The shared services this module takes (its port): src/app.ts builds each once. */
interface TrackSuggestionsServices {
  readonly models: { readonly runtime: ModelRuntime; readonly repository: ModelsRepository };
}

/** Automatic tracking: a detector (through auto-annotate's inference) over a video's frames, tracks as suggestions; registers its job. */
export function registerTrackSuggestionsModule(app: FastifyInstance, deps: ModuleDeps<TrackSuggestionsServices>, detector: AutoAnnotateService): void {
  const { models } = deps.services;
  const service = new TrackSuggestionsService(new TrackSuggestionsRepository(deps.db), models.repository, models.runtime, detector, deps.access, deps.queue);
  deps.queue.register<TrackJobPayload>(TRACK_JOB, (ctx) => service.runJob(ctx));
  trackSuggestionsRoutes(app, service);
}
