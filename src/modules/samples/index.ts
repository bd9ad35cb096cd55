import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { ExportsRepository } from '../exports/exports.repository.js';
import type { ModuleDeps } from '../module-deps.js';
import type { ProjectsRepository } from '../projects/projects.repository.js';
import type { WriteBatcher } from '../../db/write-batcher.js';
import { SampleAdapters } from './training-layouts.adapter.js';
import type { VideoFramesPort } from './samples.ports.js';
import { SamplesRepository } from './samples.repository.js';
import { sampleFramesRoutes, samplesRoutes } from './samples.routes.js';
import { SamplesService, type SampleWorkflow } from './samples.service.js';

/** Text, tabular, audio, video and LLM samples: routes, import readers, splits, locks and label history. */
/**
 * What the module offers others: the samples service, and the adapters (the adapters module serves them; the tabular
 * trainer reads their folder).
 */
export interface SamplesModule {
  readonly samples: SamplesService;
  readonly adapters: SampleAdapters;
}

/** The shared services this module takes (its port): src/app.ts builds each once. */
interface SamplesServices {
  readonly projectsRepository: ProjectsRepository;
  readonly writes: WriteBatcher;
  readonly workflow: { readonly samples: SampleWorkflow };
}

export function registerSamplesModule(app: FastifyInstance, deps: ModuleDeps<SamplesServices>, exportRecords: ExportsRepository, frames: VideoFramesPort): SamplesModule {
  const workDir = join(deps.config.dataDir, 'tmp');
  const repository = new SamplesRepository(deps.db, deps.services.projectsRepository);
  // Label edits share the process's one group-commit batcher with annotation writes; the team workflow is the images'.
  const service = new SamplesService(repository, deps.access, deps.blobs, {
    maxMediaBytes: deps.config.maxUploadBytes,
    maxImportBytes: deps.config.maxImportBytes,
    maxImportSamples: 10_000_000,
    maxMediaFiles: 100_000,
  }, deps.services.writes, deps.services.workflow.samples, frames);
  const adapters = new SampleAdapters(repository, exportRecords, deps.access, deps.blobs, workDir);
  samplesRoutes(app, service, deps.services.workflow.samples);
  sampleFramesRoutes(app, service);
  return { samples: service, adapters };
}
