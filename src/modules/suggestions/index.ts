import type { FastifyInstance } from 'fastify';
import type { AutoAnnotateService } from '../auto-annotate/auto-annotate.service.js';
import type { ModuleDeps } from '../module-deps.js';
import type { AssignmentScope } from '../assignments/assignment-scope.service.js';
import type { ModelsRepository } from '../models/models.repository.js';
import { SuggestionsRepository } from './suggestions.repository.js';
import { suggestionsRoutes } from './suggestions.routes.js';
import { PREFETCH_JOB, SuggestionsService, type PrefetchPayload } from './suggestions.service.js';

/** The shared services this module takes (its port): src/app.ts builds each once. */
interface SuggestionsServices {
  readonly models: { readonly repository: ModelsRepository };
  readonly scope: AssignmentScope;
}

/** Suggestions predicted ahead of the annotator, with auto-annotate's inference and writes; registers its job. */
export function registerSuggestionsModule(app: FastifyInstance, deps: ModuleDeps<SuggestionsServices>, detector: AutoAnnotateService): void {
  const { services } = deps;
  const service = new SuggestionsService(new SuggestionsRepository(deps.db), services.models.repository, detector, deps.access, services.scope, deps.queue);
  deps.queue.register<PrefetchPayload>(PREFETCH_JOB, (ctx) => service.runPrefetchJob(ctx));
  suggestionsRoutes(app, service);
}
