import { useEffect, useState } from 'react';
import { api } from '../../api.js';
import type { ImageRecord, LabelClass, QcPendingTaskReview } from '../../types.js';
import { colourOf } from './figures.js';
import { VersionsOverlay } from './versions-overlay.js';

/**
 * Task reviews (issue 29): the submitted quality-control tasks waiting for review. The reviewer opens one (the
 * annotator's version overlaid on the image, read-only) and accepts it or requests changes with a comment; a change
 * request gives the task back to its annotator, whose resubmission comes back here (round 2, …). An annotator's task
 * set on a video is one item, stepped through frame by frame and decided whole.
 */
export function TaskReviewsPanel({ projectId, onError }: { projectId: number; onError: (message: string) => void }) {
  const [pending, setPending] = useState<QcPendingTaskReview[] | null>(null);
  const [open, setOpen] = useState<number | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [classes, setClasses] = useState<LabelClass[]>([]);
  const fail = (e: unknown) => onError((e as Error).message);
  const load = () => void api.get('/api/projects/{id}/quality-control/task-reviews/pending', { path: { id: projectId } }).then(setPending, fail);
  useEffect(() => {
    api.get('/api/projects/{id}/classes', { path: { id: projectId } }).then(setClasses, fail);
    load();
  }, [projectId]);
  const entry = pending?.find((p) => p.task_id === open) ?? null;
  const decided = (text: string) => {
    setDone(text);
    setOpen(null);
    load();
  };
  return (
    <section className="card" aria-label="Task reviews">
      <div className="toolbar">
        <h3>Task reviews</h3>
        <div className="spacer" />
        <button className="ghost" onClick={load} title="Load the pending task submissions again">
          Reload
        </button>
      </div>
      {done && (
        <p className="muted" data-testid="task-review-done">
          {done}
        </p>
      )}
      {pending === null ? (
        <p className="muted">Loading…</p>
      ) : pending.length === 0 ? (
        <p className="muted" data-testid="task-reviews-empty">
          No submitted task waits for review.
        </p>
      ) : (
        <table className="list" data-testid="task-reviews">
          <thead>
            <tr>
              <th>Annotator</th>
              <th>Image</th>
              <th>Round</th>
              <th>Submitted</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {pending.map((p) => (
              <tr key={p.task_id} data-task={p.task_id} data-image={p.image_id}>
                <td>{p.display_name || p.email}</td>
                <td>{p.video_id === null ? p.image_id : `video ${p.video_id} · ${p.frames} frames`}</td>
                <td>{p.round > 1 ? `${p.round} (resubmitted)` : p.round}</td>
                <td>{p.submitted_at?.slice(0, 16).replace('T', ' ') ?? ''}</td>
                <td>
                  <button className="ghost" onClick={() => setOpen(p.task_id)} data-testid="open-task-review">
                    Open
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {entry && <TaskReviewView key={entry.task_id} projectId={projectId} entry={entry} classes={classes} onDecided={decided} onError={onError} />}
    </section>
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
  const [comment, setComment] = useState('');
  const [busy, setBusy] = useState(false);
  const who = entry.display_name || entry.email;
  useEffect(() => {
    setImage(null);
    api.get('/api/images/{image_id}', { path: { image_id: shown.image_id } }).then(setImage, (e) => onError((e as Error).message));
  }, [shown.image_id]);
  const decide = async (decision: 'accepted' | 'changes_requested') => {
    setBusy(true);
    try {
      const r = await api.post('/api/projects/{id}/quality-control/task-reviews', { path: { id: projectId }, body: { image_id: entry.image_id, user_id: entry.user_id, decision, comment } });
      onDecided(`${who}'s task on ${entry.video_id === null ? `image ${r.image_id}` : `video ${entry.video_id} (${entry.frames} frames)`}: ${decision === 'accepted' ? 'accepted' : 'changes requested'} (review ${r.id}, round ${r.round})`);
    } catch (e) {
      onError((e as Error).message);
    } finally {
      setBusy(false);
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
      <textarea value={comment} onChange={(e) => setComment(e.target.value)} aria-label="Review comment" placeholder="Comment (required to request changes)" rows={2} />
      <div className="toolbar">
        <button onClick={() => void decide('accepted')} disabled={busy} data-testid="accept-task">
          Accept
        </button>
        <button className="danger" onClick={() => void decide('changes_requested')} disabled={busy || comment.trim() === ''} data-testid="request-changes" title="Give the task back to its annotator with your comment">
          Request changes
        </button>
      </div>
    </div>
  );
}
