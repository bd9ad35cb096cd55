import { useState } from 'react';

/** A task review's decision (issue 29): a comment, Accept, and Request changes (which needs the comment). */
export function ReviewDecision({ decide }: { decide: (decision: 'accepted' | 'changes_requested', comment: string) => Promise<void> }) {
  const [comment, setComment] = useState('');
  const [busy, setBusy] = useState(false);
  const run = (decision: 'accepted' | 'changes_requested') => {
    setBusy(true);
    void decide(decision, comment).finally(() => setBusy(false));
  };
  return (
    <>
      <textarea value={comment} onChange={(e) => setComment(e.target.value)} aria-label="Review comment" placeholder="Comment (required to request changes)" rows={2} />
      <div className="toolbar">
        <button onClick={() => run('accepted')} disabled={busy} data-testid="accept-task">
          Accept
        </button>
        <button className="danger" onClick={() => run('changes_requested')} disabled={busy || comment.trim() === ''} data-testid="request-changes" title="Give the task back to its annotator with your comment">
          Request changes
        </button>
      </div>
    </>
  );
}
