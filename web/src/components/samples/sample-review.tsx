import { useEffect, useRef, useState } from 'react';
import { api } from '../../api.js';
import type { Sample } from '../../types.js';
import { isTyping } from './sample-view.js';
import type { ReviewState } from '../../vocabulary.js';

const STATE_NAMES: Record<Sample['review_state'], string> = {
  unreviewed: 'Not reviewed',
  pending: 'Waiting for review',
  approved: 'Approved',
  rejected: 'Rejected',
  changes: 'Changes requested',
};

interface Props {
  sample: Sample;
  me: number | null;
  /** The assignee's name, when the caller may see the members. */
  nameOf(userId: number): string | undefined;
  /** Why a permission is missing (shown on the disabled control), or undefined when the caller holds it. */
  why(permission: string): string | undefined;
  /** LLM samples use a/b/t for preferences: there the review keys need Shift. */
  shiftKeys: boolean;
  onChange(updated: Sample): void;
  onError(message: string): void;
}

/**
 * The open sample's review state and assignee, "Submit for review" for annotators, and Approve / Reject / Request
 * changes (A / R / C, as on the image review page) for reviewers while the sample is waiting for review.
 */
export function SampleReview({ sample, me, nameOf, why, shiftKeys, onChange, onError }: Props) {
  const [comment, setComment] = useState('');
  const [busy, setBusy] = useState(false);
  const commentBox = useRef<HTMLInputElement>(null);
  const state = sample.review_state ?? 'unreviewed';
  const pending = state === 'pending';
  const decideDenied = why('reviews.decide');
  const submitDenied = why('reviews.submit');

  useEffect(() => setComment(''), [sample.id]);

  const send = (answer: Promise<Sample>) => {
    setBusy(true);
    answer.then(
      (updated) => {
        setBusy(false);
        setComment('');
        onChange(updated);
      },
      (e) => {
        setBusy(false);
        onError((e as Error).message);
      },
    );
  };
  const decide = (decision: 'approve' | 'reject' | 'changes') => {
    if (busy || !pending || decideDenied) return;
    if (decision === 'changes' && !comment.trim()) {
      commentBox.current?.focus();
      return onError('Say what should change in the comment first');
    }
    send(api.post('/api/samples/{sample_id}/review', { path: { sample_id: sample.id }, body: { decision, ...(comment.trim() ? { comment: comment.trim() } : {}) } }));
  };

  // Read through a ref so the handler, attached once, sees the current sample and comment.
  const keys = useRef(decide);
  keys.current = decide;
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (isTyping(e) || e.ctrlKey || e.metaKey || e.altKey || (shiftKeys && !e.shiftKey)) return;
      const k = e.key.toLowerCase();
      if (k === 'a') keys.current('approve');
      else if (k === 'r') keys.current('reject');
      else if (k === 'c') keys.current('changes');
      else return;
      e.preventDefault();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [shiftKeys]);

  const assignee = sample.assignee_id == null ? 'nobody' : sample.assignee_id === me ? 'you' : nameOf(sample.assignee_id) ?? `user ${sample.assignee_id}`;
  const mod = shiftKeys ? 'Shift+' : '';
  return (
    <section className="toolbar" aria-label="Review">
      <span data-testid="review-state" className={`badge review-${state}`}>{STATE_NAMES[state]}</span>
      <span className="muted" data-testid="assignee">Assigned to {assignee}</span>
      {sample.review_comment && <span className="muted" data-testid="review-comment">“{sample.review_comment}”</span>}
      <button onClick={() => send(api.post('/api/samples/{sample_id}/submit', { path: { sample_id: sample.id } }))} disabled={busy || pending || !!submitDenied} title={submitDenied ?? (pending ? 'Already waiting for review' : undefined)}>
        Submit for review
      </button>
      {!decideDenied && (
        <>
          <input ref={commentBox} value={comment} onChange={(e) => setComment(e.target.value)} placeholder="Review comment" aria-label="Review comment" disabled={!pending} />
          <button onClick={() => decide('approve')} disabled={busy || !pending} title={`${mod}A`}>Approve</button>
          <button onClick={() => decide('reject')} disabled={busy || !pending} title={`${mod}R`}>Reject</button>
          <button onClick={() => decide('changes')} disabled={busy || !pending} title={`${mod}C (needs a comment)`}>Request changes</button>
        </>
      )}
    </section>
  );
}
