import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import type { ImageWorkflow } from './lock-guard.service.js';
import { locksRoutes } from './locks.routes.js';

/** The editing locks of images: the images' team workflow, built once in the composition root (samples share its rules). */
export function registerLocksModule(app: FastifyInstance, deps: ModuleDeps<{ readonly workflow: { readonly images: ImageWorkflow } }>): void {
  locksRoutes(app, deps.services.workflow.images);
}
