import { useCallback, useEffect, useState } from 'react';
import { api } from '../../api.js';
import type { LabelClass, QcPendingSampleTaskReview, Sample } from '../../types.js';
import { SampleAnswer } from '../samples/sample-answer.js';
import { PendingReviews } from './pending-reviews.js';
import { ReviewDecision } from './review-decision.js';

/**
 * Task reviews of sample tasks (issue 29): the pending list, each opened with the annotator's answer on the sample —
 * a text with their spans highlighted, their classes, their value — beside accept and request changes.
 */
export function SampleTaskReviewsPanel({ projectId, onError }: { projectId: number; onError: (message: string) => void }) {
  const [classes, setClasses] = useState<LabelClass[]>([]);
  const [multiLabel, setMultiLabel] = useState(false);
  useEffect(() => {
    api.get('/api/projects/{id}/classes', { path: { id: projectId } }).then(setClasses, (e) => onError((e as Error).message));
    api.get('/api/projects/{id}', { path: { id: projectId } }).then((p) => setMultiLabel(p.multi_label), (e) => onError((e as Error).message));
  }, [projectId]);
  const load = useCallback(() => api.get('/api/projects/{id}/quality-control/samples/task-reviews/pending', { path: { id: projectId } }), [projectId]);
  return (
    <PendingReviews<QcPendingSampleTaskReview>
      label="Sample task reviews"
      noun="sample"
      load={load}
      itemOf={(p) => p.sample_id}
      view={(entry, onDecided) => <SampleTaskReviewView projectId={projectId} entry={entry} classes={classes} multiLabel={multiLabel} onDecided={onDecided} onError={onError} />}
      onError={onError}
    />
  );
}

/** One answer: the sample with the annotator's classes, spans and value (read-only), a comment, the decision. */
function SampleTaskReviewView({ projectId, entry, classes, multiLabel, onDecided, onError }: { projectId: number; entry: QcPendingSampleTaskReview; classes: LabelClass[]; multiLabel: boolean; onDecided: (text: string) => void; onError: (message: string) => void }) {
  const [sample, setSample] = useState<Sample | null>(null);
  const who = entry.display_name || entry.email;
  useEffect(() => {
    api.get('/api/samples/{sample_id}', { path: { sample_id: entry.sample_id } }).then(setSample, (e) => onError((e as Error).message));
  }, [entry.sample_id]);
  const decide = async (decision: 'accepted' | 'changes_requested', comment: string) => {
    try {
      const r = await api.post('/api/projects/{id}/quality-control/samples/task-reviews', { path: { id: projectId }, body: { sample_id: entry.sample_id, user_id: entry.user_id, decision, comment } });
      onDecided(`${who}'s task on sample ${r.sample_id}: ${decision === 'accepted' ? 'accepted' : 'changes requested'} (review ${r.id}, round ${r.round})`);
    } catch (e) {
      onError((e as Error).message);
    }
  };
  const answered = sample && ({ ...sample, label: entry.label, spans: entry.spans, value: entry.value } as Sample);
  return (
    <div className="stack" data-testid="task-review" data-sample={entry.sample_id}>
      <h4>
        {who}'s answer on sample {entry.sample_id}
      </h4>
      {entry.last_comment && <p className="muted">Answers the change request: “{entry.last_comment}”</p>}
      {answered && <SampleAnswer projectId={projectId} sample={answered} classes={classes} multiLabel={multiLabel} onError={onError} />}
      <ReviewDecision decide={decide} />
    </div>
  );
}
