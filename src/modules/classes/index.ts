import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';

export function registerClassesModule(_app: FastifyInstance, _deps: ModuleDeps): void {}
