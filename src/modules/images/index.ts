import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';

export function registerImagesModule(_app: FastifyInstance, _deps: ModuleDeps): void {}
