import { useCallback, useEffect, useState } from 'react';
import { api } from '../../api.js';
import type { ImageRecord, LabelClass, QcPendingTaskReview } from '../../types.js';
import { colourOf } from './figures.js';
import { PendingReviews } from './pending-reviews.js';
import { ReviewDecision } from './review-decision.js';
import { VersionsOverlay } from './versions-overlay.js';

/** Task reviews of image tasks (issue 29): the pending list, each opened with the annotator's version over the image. */
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
      view={(entry, onDecided) => <TaskReviewView projectId={projectId} entry={entry} classes={classes} onDecided={onDecided} onError={onError} />}
      onError={onError}
    />
  );
}

/** One submission: the annotator's version over the image, a comment, accept or request changes. */
function TaskReviewView({ projectId, entry, classes, onDecided, onError }: { projectId: number; entry: QcPendingTaskReview; classes: LabelClass[]; onDecided: (text: string) => void; onError: (message: string) => void }) {
  const [image, setImage] = useState<ImageRecord | null>(null);
  const who = entry.display_name || entry.email;
  useEffect(() => {
    api.get('/api/images/{image_id}', { path: { image_id: entry.image_id } }).then(setImage, (e) => onError((e as Error).message));
  }, [entry.image_id]);
  const decide = async (decision: 'accepted' | 'changes_requested', comment: string) => {
    try {
      const r = await api.post('/api/projects/{id}/quality-control/task-reviews', { path: { id: projectId }, body: { image_id: entry.image_id, user_id: entry.user_id, decision, comment } });
      onDecided(`${who}'s task on image ${r.image_id}: ${decision === 'accepted' ? 'accepted' : 'changes requested'} (review ${r.id}, round ${r.round})`);
    } catch (e) {
      onError((e as Error).message);
    }
  };
  return (
    <div className="stack" data-testid="task-review" data-image={entry.image_id}>
      <h4>
        {who}'s version of image {entry.image_id} · {entry.shapes.length} shapes
      </h4>
      {entry.last_comment && <p className="muted">Answers the change request: “{entry.last_comment}”</p>}
      <div className="review-stage">{image && <VersionsOverlay image={image} classes={classes} layers={[{ key: `user-${entry.user_id}`, userId: entry.user_id, name: who, shapes: entry.shapes, colour: colourOf(0) }]} />}</div>
      <ReviewDecision decide={decide} />
    </div>
  );
}
