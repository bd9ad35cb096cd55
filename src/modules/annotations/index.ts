import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import { annotationsRoutes } from './annotations.routes.js';

/**
 * Annotation routes over the one shared annotation service (built in src/app.ts with the process's only annotation
 * WriteBatcher; auto-annotate writes model output through the same instance).
 */
export function registerAnnotationsModule(app: FastifyInstance, deps: ModuleDeps): void {
  annotationsRoutes(app, deps.services.annotations);
}
