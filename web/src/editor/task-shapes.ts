import { api } from '../api.js';
import type { Annotation } from '../types.js';
import type { ShapeSource } from './image-loader.js';

/** Ids for a task's shapes, apart from the store's own temporary ids (-1, -2, …): they are never annotations. */
const TASK_ID_BASE = -1_000_000;

/**
 * A quality-control task as the editor's shape source (issue 29): the caller's own version of the image is read
 * from and saved whole to `quality-control/tasks/{image_id}`; the image's annotations are neither read nor written.
 */
export function taskShapes(projectId: number): ShapeSource {
  const path = (imageId: number) => ({ id: projectId, image_id: imageId });
  return {
    async load(imageId) {
      const task = await api.get('/api/projects/{id}/quality-control/tasks/{image_id}', { path: path(imageId) });
      return task.shapes.map((s, i) => ({ ...s, id: TASK_ID_BASE - i, image_id: imageId, confidence: null, source: 'manual' }) as Annotation);
    },
    async save(imageId, shapes) {
      const body = { shapes: shapes.map((s) => ({ class_id: s.class_id, annotation_type: s.annotation_type, geometry: s.geometry })) };
      await api.put('/api/projects/{id}/quality-control/tasks/{image_id}', { path: path(imageId), body });
    },
  };
}

/** Where a task's review stands, as the editor's task mode shows it: a change request with the reviewer's comment. */
export interface TaskReviewNote {
  state: 'changes_requested';
  comment: string;
  round: number;
}

/**
 * The note a task dealt back to its annotator carries (issue 29): when a reviewer requested changes, the task is open
 * again, dealt before new ones, with the comment; null for a task never reviewed.
 */
export function taskReviewNote(task: { review_state: string | null; review_comment: string | null; review_round: number }): TaskReviewNote | null {
  return task.review_state === 'changes_requested' ? { state: 'changes_requested', comment: task.review_comment ?? '', round: task.review_round } : null;
}
