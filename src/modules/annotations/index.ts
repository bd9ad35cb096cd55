import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import type { AnnotationsService } from './annotations.service.js';
import { annotationsRoutes } from './annotations.routes.js';
import type { FrameShapes } from './annotations.schemas.js';

/**
 * Annotation routes over the one shared annotation service (built in src/app.ts with the process's only annotation
 * WriteBatcher; auto-annotate writes model output through the same instance).
 */
/** The shared services this module takes (its port): src/app.ts builds each once. */
interface AnnotationsServices {
  readonly annotations: AnnotationsService;
}

/** `frameShapes` adds the tracks' shapes to a video frame's annotation list (the tracks module's). */
export function registerAnnotationsModule(app: FastifyInstance, deps: ModuleDeps<AnnotationsServices>, frameShapes: FrameShapes): void {
  annotationsRoutes(app, deps.services.annotations, frameShapes);
}
