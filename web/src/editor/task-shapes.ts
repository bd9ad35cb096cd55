import { api } from '../api.js';
import type { Annotation, ImageRecord, ResponseOf } from '../types.js';
import type { ShapeSource } from './image-loader.js';
import type { TaskDraft } from './annotation-store.js';

/** Ids for a task's shapes, apart from the store's own temporary ids (-1, -2, …): they are never annotations. */
const TASK_ID_BASE = -1_000_000;

/** A shape as a task save sends it: a track's shape is its keyframe there unless interpolated. */
const taskShape = (s: TaskDraft) => ({
  class_id: s.class_id,
  annotation_type: s.annotation_type,
  geometry: s.geometry,
  ...(s.track_id != null ? { track_id: s.track_id, keyframe: !s.interpolated } : {}),
});

const path = (projectId: number, imageId: number) => ({ id: projectId, image_id: imageId });

/** Saves a frame's (or an image's) whole version of the task: what it shows, track shapes included. */
export async function saveTaskShapes(projectId: number, imageId: number, shapes: readonly TaskDraft[]): Promise<void> {
  await api.put('/api/projects/{id}/quality-control/tasks/{image_id}', { path: path(projectId, imageId), body: { shapes: shapes.map(taskShape) } });
}

/** Makes `shape` its track's keyframe on another frame of the task set, the frame's other shapes as they are. */
export async function putTaskKeyframe(projectId: number, imageId: number, shape: TaskDraft & { track_id: number }): Promise<void> {
  const task = await api.get('/api/projects/{id}/quality-control/tasks/{image_id}', { path: path(projectId, imageId) });
  const others = task.shapes.filter((s) => s.track_id !== shape.track_id).map((s) => ({ ...s, interpolated: s.keyframe === false }) as TaskDraft);
  await saveTaskShapes(projectId, imageId, [...others, { ...shape, interpolated: false }]);
}

/**
 * A quality-control task as the editor's shape source (issue 29): the caller's own version of the image is read
 * from and saved whole to `quality-control/tasks/{image_id}`; the image's annotations are neither read nor written.
 * On a video's frame the version holds the caller's task tracks (issue 26): their shapes come with `track_id`, an
 * interpolated one marked as such, and an edited one is saved as the track's keyframe there.
 */
export function taskShapes(projectId: number): ShapeSource {
  return {
    async load(imageId) {
      const task = await api.get('/api/projects/{id}/quality-control/tasks/{image_id}', { path: path(projectId, imageId) });
      return task.shapes.map(({ keyframe, ...s }, i) => ({ ...s, ...(s.track_id != null ? { interpolated: keyframe === false } : {}), id: TASK_ID_BASE - i, image_id: imageId, confidence: null, source: 'manual' }) as Annotation);
    },
    save: (imageId, shapes) => saveTaskShapes(projectId, imageId, shapes),
  };
}

type Task = NonNullable<ResponseOf<'/api/projects/{id}/quality-control/tasks/next', 'post'>['task']>;

/**
 * The images the editor works through for a dealt task: its image; for a video's frame, the frames of the caller's
 * task set on that video, by frame (the timeline moves over them).
 */
export async function taskImages(projectId: number, task: Task): Promise<ImageRecord[]> {
  if (task.video_id === null) return [await api.get('/api/images/{image_id}', { path: { image_id: task.image_id } })];
  const videoId = task.video_id;
  const frames = await api.get('/api/projects/{id}/images', { path: { id: projectId }, query: { video_id: videoId, limit: 10000 } });
  const mine = new Set<number>();
  for (let after: number | undefined; ;) {
    const page = await api.get('/api/projects/{id}/quality-control/tasks', { path: { id: projectId }, query: { video_id: videoId, limit: 1000, after } });
    for (const t of page) mine.add(t.image_id);
    if (page.length < 1000) break;
    after = page[page.length - 1].id;
  }
  return frames.filter((f) => mine.has(f.id)).sort((a, b) => (a.frame ?? 0) - (b.frame ?? 0));
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
