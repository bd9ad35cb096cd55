import { useEffect, useState } from 'react';
import { api } from '../api.js';
import { useProjectAccess } from '../components/project-access.js';
import { ErrorBanner, Layout } from '../components/layout.js';
import { DisagreementView, type Choice } from '../components/team-quality/disagreement-view.js';
import { score } from '../components/team-quality/figures.js';
import { Link } from '../router.js';
import type { LabelClass, Member, QcDecision, QcDisagreement } from '../types.js';

const what = (d: QcDecision, nameOf: (userId: number) => string) =>
  d.method === 'pick' ? `${nameOf(d.picked_user_id ?? 0)}'s version` : d.method === 'merge' ? 'the consensus merge' : 'your edit';

/**
 * The disagreement queue (issue 29): images whose annotators agree less than the project's threshold. A reviewer
 * sees every version overlaid on the image, picks one, accepts the consensus merge or the shapes they tick, and the
 * decision is recorded (POST …/quality-control/consensus: the accepted labels replaced through the revision log).
 */
export default function DisagreementsPage({ projectId }: { projectId: number }) {
  const denied = useProjectAccess(projectId).why('reviews.decide');
  const [queue, setQueue] = useState<QcDisagreement[] | null>(null);
  const [selected, setSelected] = useState<number | null>(null);
  const [classes, setClasses] = useState<LabelClass[]>([]);
  const [members, setMembers] = useState<Member[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const fail = (e: unknown) => setError((e as Error).message);
  const loadQueue = () => void api.get('/api/projects/{id}/quality-control/disagreements', { path: { id: projectId } }).then(setQueue, fail);
  useEffect(() => {
    api.get('/api/projects/{id}/classes', { path: { id: projectId } }).then(setClasses, fail);
    api.get('/api/projects/{id}/members', { path: { id: projectId } }).then(setMembers, () => undefined);
    loadQueue();
  }, [projectId]);
  const entry = queue?.find((q) => q.image_id === selected) ?? queue?.[0] ?? null;
  const nameOf = (userId: number) => {
    const m = members.find((x) => x.user_id === userId);
    return m ? m.display_name || m.email : `user ${userId}`;
  };
  const decide = async (choice: Choice) => {
    if (!entry) return;
    try {
      const d = await api.post('/api/projects/{id}/quality-control/consensus', { path: { id: projectId }, body: { image_id: entry.image_id, ...choice } });
      setDone(`Image ${d.image_id}: ${what(d, nameOf)} accepted (${d.after.length} shapes), decision ${d.id} recorded`);
      setSelected(null);
      loadQueue();
    } catch (e) {
      fail(e);
    }
  };
  return (
    <Layout title={<><Link href={`/projects/${projectId}`}>Project {projectId}</Link> · Disagreement queue</>}>
      <ErrorBanner message={error} onClose={() => setError(null)} />
      <ErrorBanner message={done} onClose={() => setDone(null)} kind="info" />
      {denied ? (
        <p className="muted">{denied}</p>
      ) : queue === null ? (
        <p className="muted">Loading…</p>
      ) : (
        <div className="review-layout">
          <div className="card">{entry ? <DisagreementView key={entry.image_id} entry={entry} classes={classes} nameOf={nameOf} onDecide={decide} /> : <p data-testid="queue-empty">No disagreement waits for a decision.</p>}</div>
          <QueueList queue={queue} current={entry?.image_id ?? null} onSelect={setSelected} />
        </div>
      )}
    </Layout>
  );
}

function QueueList({ queue, current, onSelect }: { queue: QcDisagreement[]; current: number | null; onSelect: (imageId: number) => void }) {
  return (
    <aside className="review-side">
      <h3 data-testid="queue-count">
        {queue.length} image{queue.length === 1 ? '' : 's'} to decide
      </h3>
      <ul className="class-list" data-testid="disagreement-list">
        {queue.map((q) => (
          <li key={q.image_id} data-image={q.image_id}>
            <button className={q.image_id === current ? 'active' : 'ghost'} onClick={() => onSelect(q.image_id)}>
              Image {q.image_id} · agreement {score(q.f1)} · {q.versions.length} versions
            </button>
          </li>
        ))}
      </ul>
    </aside>
  );
}
