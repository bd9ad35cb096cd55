/**
 * The training benches' shared steps, through the HTTP API as a user drives it: a shared dataset folder imported
 * (the server's IMPORT_ROOT names ../shared/datasets), a version keeping its own splits at full size, a training run
 * under a time budget, and the ground truth as boxes.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { waitFor } from './server.js';

/**
 * The shared datasets (a server's IMPORT_ROOT): `DATASETS` when set, else ../shared/datasets beside the checkout (or
 * ../../shared/datasets from a worktree one folder deeper).
 */
export const DATASETS = process.env.DATASETS ?? [resolve('..', 'shared', 'datasets'), resolve('..', '..', 'shared', 'datasets')].find((p) => existsSync(p)) ?? resolve('..', 'shared', 'datasets');

/** A JSON call to the API as the bench's user; throws on a status ≥ 300. */
export type Api = <T = any>(method: string, path: string, body?: unknown) => Promise<T>;

/** Every other training image by file name: a fine-tune base's half of the training split. */
export const everyOtherByName = (images: any[]): any[] => [...images].sort((a, b) => a.filename.localeCompare(b.filename)).filter((_, i) => i % 2 === 0);

/**
 * Imports a shared dataset folder as a new project and makes a version of it at full size, its own splits kept;
 * `keepTrain` picks the training images to keep (the others are deleted before the version is made).
 */
export async function importAndVersion(api: Api, dataset: string, options: { name?: string; keepTrain?: (images: any[]) => any[] } = {}): Promise<{ projectId: number; versionId: number; train: number }> {
  const project = await api('POST', '/api/projects/import/folder', { path: dataset, name: options.name ?? dataset });
  const train: any[] = [];
  for (let after = 0; ;) {
    const page: any[] = await api('GET', `/api/projects/${project.id}/images?split=train&limit=500&after=${after}`);
    train.push(...page);
    if (page.length < 500) break;
    after = page[page.length - 1].id;
  }
  let kept = train.length;
  if (options.keepTrain) {
    const keptIds = new Set(options.keepTrain(train).map((i) => i.id));
    const dropped = train.filter((i) => !keptIds.has(i.id)).map((i) => i.id);
    for (let i = 0; i < dropped.length; i += 1000) await api('POST', '/api/images/bulk-delete', { ids: dropped.slice(i, i + 1000), project_id: project.id });
    kept = keptIds.size;
  }
  const created = await api('POST', `/api/projects/${project.id}/versions`, { name: 'bench', seed: 1, preprocessing_config: { resize: { enabled: false } } });
  const version = await waitFor(() => api('GET', `/api/versions/${created.id}`), (v) => v.status === 'ready' || v.status === 'failed');
  if (version.status !== 'ready') throw new Error(`${dataset}: version ${version.status}`);
  return { projectId: project.id, versionId: version.id, train: kept };
}

/**
 * Trains from scratch on the CPU for `minutes` (`POST /api/projects/{id}/train` with a time budget; `body` adds the
 * adapter's parameters); resolves once it succeeded with the job, its experiment and the wall time in seconds.
 */
export async function trainWithBudget(api: Api, projectId: number, versionId: number, adapter: string, minutes: number, body: Record<string, unknown>, seed = 0) {
  const started = Date.now();
  const job = await api('POST', `/api/projects/${projectId}/train`, { version_id: versionId, adapter, device: 'cpu', seed, time_budget_s: Math.round(minutes * 60), ...body });
  const done = await waitFor(() => api('GET', `/api/train/jobs/${job.id}`), (j) => ['succeeded', 'failed', 'cancelled'].includes(j.status));
  const wall = (Date.now() - started) / 1000;
  if (done.status !== 'succeeded') throw new Error(`training ${adapter} ${done.status}: ${done.error}`);
  const experiment = await api('GET', `/api/experiments/${done.experiment_id}`);
  return { job: done, experiment, metrics: experiment.metrics as Record<string, number | null>, wall };
}

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** A bbox annotation's box, or a polygon's bounding box (null for a shape without area). */
export function boxOf(annotation: any): Box | null {
  const g = annotation.geometry;
  if (annotation.annotation_type === 'bbox') return { x: g.x, y: g.y, width: g.width, height: g.height };
  const points: number[][] = g.points ?? [];
  if (points.length === 0) return g.bbox ?? null;
  const xs = points.map((p) => p[0]);
  const ys = points.map((p) => p[1]);
  const box = { x: Math.min(...xs), y: Math.min(...ys), width: Math.max(...xs) - Math.min(...xs), height: Math.max(...ys) - Math.min(...ys) };
  return box.width > 0 && box.height > 0 ? box : null;
}

/** Intersection over union of two boxes. */
export function iou(a: Box, b: Box): number {
  const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
  const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
  if (w <= 0 || h <= 0) return 0;
  return (w * h) / (a.width * a.height + b.width * b.height - w * h);
}
