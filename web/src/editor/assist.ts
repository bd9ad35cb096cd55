import { api } from '../api.js';
import { asAnnotation, type ResponseOf } from '../types.js';
import type { Point } from './geometry.js';

type SamOut = ResponseOf<'/api/projects/{id}/auto-annotate/sam', 'post'>;

/** A mask answered by POST /api/projects/{id}/auto-annotate/sam with `preview: true` (its points as pairs). */
export type SamMask = Omit<SamOut['mask'], 'polygons'> & { polygons: Point[][] };

export async function samPreview(projectId: number, imageId: number, points: Point[], labels: (0 | 1)[]): Promise<SamMask & { cached: boolean }> {
  const res = await api.post('/api/projects/{id}/auto-annotate/sam', {
    path: { id: projectId },
    body: { image_id: imageId, points, labels, preview: true, annotation_type: 'polygon' },
  });
  return { ...res.mask, polygons: res.mask.polygons as Point[][], cached: res.embedding_cached };
}

/**
 * Runs a detector on one image; the server saves what it finds and answers with it (one image never queues a job).
 * `confidence` null: the model's own cut-off (its per-class thresholds stored at promotion, else the server's default).
 */
export async function runDetector(projectId: number, imageId: number, model: number, confidence: number | null, iou = 0.45) {
  const res = await api.post('/api/projects/{id}/auto-annotate/yolo', {
    path: { id: projectId },
    body: { model, ...(confidence === null ? {} : { confidence }), iou, image_ids: [imageId], only_unannotated: false, create_missing_classes: true },
  });
  // One image is run in the request; only a run over many images answers 202 with a job.
  if ('job_id' in res) throw new Error('the detector was queued as a job instead of answering');
  return { ...res, images: res.images.map((i) => ({ ...i, annotations: i.annotations.map(asAnnotation) })) };
}

/** How many images ahead of the open one the production model predicts in the background. */
export const PREFETCH_AHEAD = 5;

/**
 * Asks the server to predict the images ahead of the open one, so their suggestions wait when they open. Resolves,
 * once the job has finished, with the ids it predicted (their cached annotations are stale); [] when nothing was
 * queued (already predicted or labelled, or the project's prediction job is busy: the next image asks again).
 */
export async function prefetchSuggestions(projectId: number, imageIds: number[]): Promise<number[]> {
  const res = await api.post('/api/projects/{id}/suggestions/prefetch', { path: { id: projectId }, body: { image_ids: imageIds } });
  if (res.job_id === null || res.queued.length === 0) return [];
  for (let polls = 0; polls < 300; polls++) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const job = await api.get('/api/jobs/{id}', { path: { id: res.job_id } });
    if (job.status !== 'queued' && job.status !== 'running') break;
  }
  return res.queued;
}
