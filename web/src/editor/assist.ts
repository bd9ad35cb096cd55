import { api } from '../api.js';
import type { Annotation } from '../types.js';
import type { Point } from './geometry.js';

/** A mask answered by POST /api/projects/{id}/auto-annotate/sam with `preview: true`. */
export interface SamMask {
  polygons: Point[][];
  bbox: { x: number; y: number; width: number; height: number };
  area: number;
  score: number;
}

interface SamOut {
  mask: SamMask;
  embedding_cached: boolean;
}

export async function samPreview(projectId: number, imageId: number, points: Point[], labels: (0 | 1)[]): Promise<SamMask & { cached: boolean }> {
  const res = await api.post<SamOut>(`/api/projects/${projectId}/auto-annotate/sam`, { image_id: imageId, points, labels, preview: true });
  return { ...res.mask, cached: res.embedding_cached };
}

export interface DetectorResult {
  created: number;
  skipped: number;
  classes_created: string[];
  images: { image_id: number; annotations: Annotation[] }[];
}

/** Runs a detector on one image; the server saves what it finds and answers with it (one image never queues a job). */
export function runDetector(projectId: number, imageId: number, model: number, confidence: number, iou = 0.45): Promise<DetectorResult> {
  return api.post<DetectorResult>(`/api/projects/${projectId}/auto-annotate/yolo`, { model, confidence, iou, image_ids: [imageId] });
}

/** How many images ahead of the open one the production model predicts in the background. */
export const PREFETCH_AHEAD = 5;

interface PrefetchOut {
  model_id: number;
  queued: number[];
  job_id: number | null;
}

/**
 * Asks the server to predict the images ahead of the open one, so their suggestions wait when they open. Resolves,
 * once the job has finished, with the ids it predicted (their cached annotations are stale); [] when nothing was
 * queued (already predicted or labelled, or the project's prediction job is busy: the next image asks again).
 */
export async function prefetchSuggestions(projectId: number, imageIds: number[]): Promise<number[]> {
  const res = await api.post<PrefetchOut>(`/api/projects/${projectId}/suggestions/prefetch`, { image_ids: imageIds });
  if (res.job_id === null || res.queued.length === 0) return [];
  for (let polls = 0; polls < 300; polls++) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const job = await api.get<{ status: string }>(`/api/jobs/${res.job_id}`);
    if (job.status !== 'queued' && job.status !== 'running') break;
  }
  return res.queued;
}
