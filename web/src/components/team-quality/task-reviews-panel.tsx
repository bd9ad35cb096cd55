import { useCallback, useEffect, useState } from 'react';
import { api } from '../../api.js';
import type { ImageRecord, LabelClass, QcPendingTaskReview } from '../../types.js';
import { colourOf } from './figures.js';
import { PendingReviews } from './pending-reviews.js';
import { ReviewDecision } from './review-decision.js';
import { VersionsOverlay } from './versions-overlay.js';

/**
 * Task reviews of image tasks (issue 29): the pending list, each opened with the annotator's version over the image. An
 * annotator's task set on a video is one item, stepped through frame by frame and decided whole.
 */
export function TaskReviewsPanel({ projectId, onError }: { projectId: number; onError: (message: string) => void }) {
  const [classes, setClasses] = useState<LabelClass[]>([]);
  useEffect(() => void api.get('/api/projects/{id}/classes', { path: { id: projectId } }).then(setClasses, (e) => onError((e as Error).message)), [projectId]);
  const load = useCallback(() => api.get('/api/projects/{id}/quality-control/task-reviews/pending', { path: { id: projectId } }), [projectId]);
  return (
    <PendingReviews<QcPendingTaskReview>
      label="Task reviews"
      noun="image"
      load={load}
      itemOf={(p) => p.image_id}
      itemLabel={(p) => (p.video_id === null ? p.image_id : `video ${p.video_id} · ${p.frames} frames`)}
      view={(entry, onDecided) => <TaskReviewView projectId={projectId} entry={entry} classes={classes} onDecided={onDecided} onError={onError} />}
      onError={onError}
    />
  );
}

/**
 * One submission: the annotator's version over the image (a video set's frame by frame, from the one shown first), a
 * comment, accept or request changes (for the whole set).
 */
function TaskReviewView({ projectId, entry, classes, onDecided, onError }: { projectId: number; entry: QcPendingTaskReview; classes: LabelClass[]; onDecided: (text: string) => void; onError: (message: string) => void }) {
  const frames = entry.video_frames.length > 0 ? entry.video_frames : [{ task_id: entry.task_id, image_id: entry.image_id, frame: 0, shapes: entry.shapes }];
  const [at, setAt] = useState(Math.max(0, frames.findIndex((f) => f.image_id === entry.image_id)));
  const shown = frames[at];
  const [image, setImage] = useState<ImageRecord | null>(null);
  const who = entry.display_name || entry.email;
  useEffect(() => {
    setImage(null);
    api.get('/api/images/{image_id}', { path: { image_id: shown.image_id } }).then(setImage, (e) => onError((e as Error).message));
  }, [shown.image_id]);
  const decide = async (decision: 'accepted' | 'changes_requested', comment: string) => {
    try {
      const r = await api.post('/api/projects/{id}/quality-control/task-reviews', { path: { id: projectId }, body: { image_id: entry.image_id, user_id: entry.user_id, decision, comment } });
      onDecided(`${who}'s task on ${entry.video_id === null ? `image ${r.image_id}` : `video ${entry.video_id} (${entry.frames} frames)`}: ${decision === 'accepted' ? 'accepted' : 'changes requested'} (review ${r.id}, round ${r.round})`);
    } catch (e) {
      onError((e as Error).message);
    }
  };
  return (
    <div className="stack" data-testid="task-review" data-image={shown.image_id}>
      <h4>
        {who}'s version of {entry.video_id === null ? `image ${entry.image_id}` : `video ${entry.video_id}, frame ${shown.frame} (${at + 1} of ${frames.length})`} · {shown.shapes.length} shapes
      </h4>
      {entry.video_id !== null && (
        <div className="toolbar">
          <button className="ghost" onClick={() => setAt(at - 1)} disabled={at === 0} data-testid="previous-frame">
            Previous frame
          </button>
          <button className="ghost" onClick={() => setAt(at + 1)} disabled={at === frames.length - 1} data-testid="next-frame">
            Next frame
          </button>
          <span className="muted">The decision is for all {entry.frames} frames of the set.</span>
        </div>
      )}
      {entry.last_comment && <p className="muted">Answers the change request: “{entry.last_comment}”</p>}
      <div className="review-stage">{image && <VersionsOverlay image={image} classes={classes} layers={[{ key: `user-${entry.user_id}`, userId: entry.user_id, name: who, shapes: shown.shapes, colour: colourOf(0) }]} />}</div>
      <ReviewDecision decide={decide} />
    </div>
  );
}
