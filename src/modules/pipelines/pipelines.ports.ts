import type { Caller } from '../../access/caller.js';
import type { PlannedAnnotation } from '../auto-annotate/auto-annotate.service.js';
import type { ExportOut, ExportRequest } from '../exports/exports.schemas.js';
import type { ModelRow } from '../models/models.schemas.js';
import type { VersionCreate } from '../versions/versions.schemas.js';
import type { PipelineImage } from './pipelines.repository.js';

/**
 * What pipeline steps call in other modules. app.ts wires each port to that module's service (so steps never build
 * a second inference or write path); a port left out makes its step types report themselves unavailable.
 */
export interface PipelinePorts {
  /** The auto-annotate service: its batch inference pool, SAM and annotation writes with revisions. */
  readonly detector: DetectorPort;
  readonly models: {
    find(id: number): Promise<ModelRow | undefined>;
    findByName(projectId: number, name: string): Promise<ModelRow | undefined>;
    list(filter: { projectId?: number; viewerId: number | null }): Promise<ModelRow[]>;
  };
  readonly reviews: { submit(caller: Caller, projectId: number, imageIds: number[], comment?: string): Promise<{ id: number }[]> };
  readonly versions: { create(caller: Caller, projectId: number, input: VersionCreate): Promise<{ id: number; number: number; status: string; job_id: number | null }> };
  /** `scope.imageIds`: the images an earlier step selected (the export holds only those). */
  readonly exports: { export(caller: Caller, projectId: number, input: ExportRequest, scope?: { imageIds?: readonly number[] }): Promise<ExportOut> };
  /** The quality branch's checks (wired at merge). */
  readonly quality?: QualityPort;
  /** The quality branch's cleaning actions (wired at merge). */
  readonly cleaning?: CleaningPort;
  /** The training branch's job starter (wired at merge). */
  readonly training?: TrainingPort;
  readonly webhook: WebhookPort;
}

export interface DetectorPort {
  readonly batchInFlight: number;
  detectForPipeline(model: ModelRow, image: PipelineImage, options: { confidence: number; iou: number }): Promise<PlannedAnnotation[]>;
  segmentBoxesForPipeline(projectId: number, image: PipelineImage, boxes: { x: number; y: number; width: number; height: number }[]): Promise<({ polygon: [number, number][]; score: number } | null)[]>;
  saveForPipeline(
    projectId: number,
    userId: number | null,
    items: { image_id: number; planned: PlannedAnnotation[] }[],
    options: { source: string; createMissingClasses: boolean },
  ): Promise<{ ids: number[]; skipped: number; locked: number[]; classes_created: string[] }>;
}

export interface QualityPort {
  /** Runs the named checks (all when none) over the images an earlier step selected (the project when none) and answers their results. */
  run(caller: Caller, projectId: number, params: { checks?: string[]; config?: Record<string, unknown>; image_ids?: readonly number[] }, signal: AbortSignal): Promise<Record<string, unknown>>;
}

export interface CleaningPort {
  /** Applies one cleaning action; answers what it changed (ids of touched records under `ids` when it has them). */
  apply(caller: Caller, projectId: number, params: { action: string; params?: Record<string, unknown> }, signal: AbortSignal): Promise<Record<string, unknown>>;
}

export interface TrainingPort {
  /** Starts a training job on a version; answers the job (or experiment) record. */
  start(caller: Caller, projectId: number, params: { adapter: string; version_id: number | null; params?: Record<string, unknown> }, signal: AbortSignal): Promise<Record<string, unknown>>;
}

export interface WebhookPort {
  post(url: string, body: unknown, signal: AbortSignal): Promise<{ status: number }>;
}
