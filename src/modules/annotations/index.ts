import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';

export function registerAnnotationsModule(_app: FastifyInstance, _deps: ModuleDeps): void {}
