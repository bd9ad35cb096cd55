import { useEffect, useRef, useState } from 'react';
import { api } from '../api.js';
import { AnnotatedImage, classSummary } from '../components/annotated-image.js';
import { useProjectAccess } from '../components/project-access.js';
import { ErrorBanner, Layout } from '../components/layout.js';
import { Link } from '../router.js';
import { asAnnotation, type Annotation, type Decision, type ImageRecord, type LabelClass, type Member, type Project, type Review } from '../types.js';

const DECISIONS: { decision: Decision; key: string; label: string; className: string }[] = [
  { decision: 'approve', key: 'A', label: 'Approve', className: 'primary' },
  { decision: 'changes', key: 'C', label: 'Request changes', className: '' },
  { decision: 'reject', key: 'R', label: 'Reject', className: 'danger' },
];

const PAST: Record<Decision, string> = { approve: 'Approved', changes: 'Sent back for changes:', reject: 'Rejected' };

interface Shown {
  review: Review;
  image: ImageRecord;
  annotations: Annotation[];
}

/**
 * The reviewer's queue for one project: the oldest pending submission first, shown with its annotations; approve,
 * reject or request changes (with a comment) from the keyboard, and the next one comes up.
 */
export default function ReviewPage({ projectId }: { projectId: number }) {
  const [project, setProject] = useState<Project | null>(null);
  const decideDenied = useProjectAccess(projectId).why('reviews.decide');
  const [classes, setClasses] = useState<LabelClass[]>([]);
  const [members, setMembers] = useState<Member[]>([]);
  const [queue, setQueue] = useState<Review[] | null>(null);
  const [at, setAt] = useState(0);
  const [shown, setShown] = useState<Shown | null>(null);
  const [comment, setComment] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [last, setLast] = useState<string | null>(null);
  const commentBox = useRef<HTMLTextAreaElement>(null);

  const loadQueue = () =>
    api.get('/api/projects/{id}/reviews', { path: { id: projectId }, query: { status: 'pending', limit: 1000 } }).then(setQueue, (e) => setError((e as Error).message));

  useEffect(() => {
    api.get('/api/projects/{id}', { path: { id: projectId } }).then(setProject, (e) => setError((e as Error).message));
    api.get('/api/projects/{id}/classes', { path: { id: projectId } }).then(setClasses, (e) => setError((e as Error).message));
    api.get('/api/projects/{id}/members', { path: { id: projectId } }).then(setMembers, () => undefined);
    void loadQueue();
  }, [projectId]);

  const current = queue && queue.length > 0 ? queue[Math.min(at, queue.length - 1)] : null;

  useEffect(() => {
    if (!current) return setShown(null);
    let live = true;
    Promise.all([api.get('/api/images/{image_id}', { path: { image_id: current.image_id } }), api.get('/api/images/{image_id}/annotations', { path: { image_id: current.image_id } })]).then(
      ([image, annotations]) => live && setShown({ review: current, image, annotations: annotations.map(asAnnotation) }),
      (e) => live && setError((e as Error).message),
    );
    return () => void (live = false);
  }, [current?.id]);

  const move = (delta: number) => {
    if (!queue || queue.length === 0) return;
    setAt((i) => Math.max(0, Math.min(queue.length - 1, Math.min(i, queue.length - 1) + delta)));
    setComment('');
  };

  const decide = async (decision: Decision) => {
    if (decideDenied) return;
    if (!current || busy) return;
    const text = comment.trim();
    if (decision === 'changes' && !text) {
      setError('Say what to change in the comment, then press Enter (or C again).');
      commentBox.current?.focus();
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await api.post('/api/reviews/{id}/decide', { path: { id: current.id }, body: text ? { decision, comment: text } : { decision } });
      setLast(`${PAST[decision]} ${shown?.image.original_name ?? `image ${current.image_id}`}${text && decision !== 'approve' ? ` “${text}”` : ''}`);
      setComment('');
      // The decided review leaves the queue; the one after it takes its place.
      setQueue((q) => (q ? q.filter((r) => r.id !== current.id) : q));
      commentBox.current?.blur();
    } catch (e) {
      setError((e as Error).message);
      // Someone else may have decided it meanwhile: refresh the queue.
      void loadQueue();
    } finally {
      setBusy(false);
    }
  };

  // Keys are read through a ref so the handler, attached once, always sees the current review and comment.
  const keys = useRef({ decide, move });
  keys.current = { decide, move };
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.ctrlKey || e.metaKey || e.altKey) return;
      const inComment = e.target === commentBox.current;
      if (inComment) {
        if (e.key === 'Enter' && !e.shiftKey) {
          e.preventDefault();
          void keys.current.decide('changes');
        } else if (e.key === 'Escape') commentBox.current?.blur();
        return;
      }
      if ((e.target as HTMLElement).closest('input, textarea, select')) return;
      const k = e.key.toLowerCase();
      if (k === 'a') void keys.current.decide('approve');
      else if (k === 'r') void keys.current.decide('reject');
      else if (k === 'c') void keys.current.decide('changes');
      else if (k === 'n' || k === 'j' || e.key === 'ArrowRight') keys.current.move(1);
      else if (k === 'p' || k === 'k' || e.key === 'ArrowLeft') keys.current.move(-1);
      else if (e.key === '/') commentBox.current?.focus();
      else return;
      e.preventDefault();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  const who = (id: number | null) => {
    const m = members.find((x) => x.user_id === id);
    return m ? m.display_name || m.email : id === null ? 'a former member' : `user ${id}`;
  };
  const position = queue && current ? Math.min(at, queue.length - 1) + 1 : 0;

  return (
    <Layout
      title={
        <>
          <Link href={`/projects/${projectId}`}>{project?.name ?? `Project ${projectId}`}</Link> · Review
        </>
      }
    >
      <ErrorBanner message={error} onClose={() => setError(null)} />
      {last && (
        <p className="muted" role="status" data-testid="review-last">
          {last}
        </p>
      )}
      {queue === null ? (
        <p className="muted">Loading reviews…</p>
      ) : !current ? (
        <div className="card empty-review">
          <h3>No reviews waiting</h3>
          <p className="muted">Submissions from annotators show up here. <Link href={`/projects/${projectId}?tab=images`}>Back to the project</Link></p>
        </div>
      ) : (
        <div className="review-layout">
          <div className="review-stage">{shown && shown.review.id === current.id ? <AnnotatedImage image={shown.image} annotations={shown.annotations} classes={classes} /> : <p className="muted">Loading image…</p>}</div>
          <aside className="card review-side" aria-label="Decision">
            <div className="muted small" data-testid="review-position">
              {position} of {queue.length} waiting
            </div>
            <h3>{shown?.image.original_name ?? `Image ${current.image_id}`}</h3>
            <p className="small">
              Submitted by <b>{who(current.submitted_by)}</b> · {new Date(current.created_at).toLocaleString()}
            </p>
            {current.comment && <blockquote className="small">{current.comment}</blockquote>}
            {shown && <p className="small" data-testid="review-summary">{classSummary(shown.annotations, classes)}</p>}
            <label className="small">
              Comment <span className="muted">(needed to request changes)</span>
              <textarea ref={commentBox} value={comment} onChange={(e) => setComment(e.target.value)} rows={3} name="review-comment" placeholder="Press / to write, Enter to send back for changes" />
            </label>
            {decideDenied && <p className="muted small" data-testid="decide-denied">{decideDenied}</p>}
            <div className="decisions">
              {DECISIONS.map((d) => (
                <button key={d.decision} className={d.className} disabled={busy || !!decideDenied} onClick={() => void decide(d.decision)} title={decideDenied ?? `${d.label} (${d.key})`}>
                  {d.label} <kbd>{d.key}</kbd>
                </button>
              ))}
            </div>
            <div className="decisions">
              <button onClick={() => move(-1)} disabled={position <= 1} title="Previous (P, K)">
                ‹ Previous
              </button>
              <button onClick={() => move(1)} disabled={position >= queue.length} title="Next (N, J)">
                Next ›
              </button>
              <Link href={`/projects/${projectId}/annotate?image=${current.image_id}`} className="button ghost">
                Open in editor
              </Link>
            </div>
            <p className="muted small">
              <kbd>A</kbd> approve · <kbd>R</kbd> reject · <kbd>C</kbd> changes · <kbd>N</kbd>/<kbd>J</kbd> next · <kbd>P</kbd>/<kbd>K</kbd> previous · <kbd>/</kbd> comment
            </p>
          </aside>
        </div>
      )}
    </Layout>
  );
}
