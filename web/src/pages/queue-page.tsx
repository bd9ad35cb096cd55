import { useEffect, useState } from 'react';
import { api } from '../api.js';
import { ErrorBanner, Layout } from '../components/layout.js';
import { Link } from '../router.js';
import type { Project, QueueItem } from '../types.js';

/**
 * "My queue": the images assigned to me that are still to do, and my submissions a reviewer sent back (rejected or
 * changes requested, with the reviewer's comment), across every project, returned work first.
 */
export default function QueuePage() {
  const [items, setItems] = useState<QueueItem[] | null>(null);
  const [projects, setProjects] = useState<Map<number, Project>>(new Map());
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    api.get('/api/assignments/mine').then(
      async (list) => {
        setItems(list);
        const ids = [...new Set(list.map((i) => i.project_id))];
        const found = await Promise.all(ids.map((id) => api.get('/api/projects/{id}', { path: { id } }).catch(() => null)));
        setProjects(new Map(found.filter((p): p is Project => p !== null).map((p) => [p.id, p])));
      },
      (e) => setError((e as Error).message),
    );
  }, []);

  const groups = new Map<number, QueueItem[]>();
  for (const item of items ?? []) groups.set(item.project_id, [...(groups.get(item.project_id) ?? []), item]);
  // Work sent back by review comes before fresh assignments.
  for (const list of groups.values()) list.sort((a, b) => Number(b.reason === 'returned') - Number(a.reason === 'returned'));

  return (
    <Layout title="My queue">
      <ErrorBanner message={error} onClose={() => setError(null)} />
      {items === null ? (
        <p className="muted">Loading your queue…</p>
      ) : items.length === 0 ? (
        <div className="card">
          <h3>Nothing in your queue</h3>
          <p className="muted">Images assigned to you, and submissions a reviewer sends back, appear here.</p>
        </div>
      ) : (
        [...groups].map(([projectId, list]) => {
          const returned = list.filter((i) => i.reason === 'returned').length;
          return (
            <section key={projectId} className="card queue-project" aria-label={`Queue of ${projects.get(projectId)?.name ?? `project ${projectId}`}`}>
              <h3>
                <Link href={`/projects/${projectId}`}>{projects.get(projectId)?.name ?? `Project ${projectId}`}</Link>{' '}
                <span className="muted small">
                  {list.length - returned} assigned · {returned} returned
                </span>
                <Link href={`/projects/${projectId}/annotate?image=${list[0].image_id}`} className="button primary small-button">
                  Start
                </Link>
              </h3>
              <ul className="queue-list">
                {list.map((item) => (
                  <li key={`${item.reason}-${item.image_id}`} data-queue-image={item.image_id} className={item.reason}>
                    <Link href={`/projects/${projectId}/annotate?image=${item.image_id}`} className="queue-thumb">
                      <img src={`/api/images/${item.image_id}/thumbnail`} alt={`Image ${item.image_id}`} loading="lazy" />
                    </Link>
                    <div>
                      <b className={`review-badge ${item.reason === 'returned' ? item.review_state : 'assigned'}`}>
                        {item.reason === 'returned' ? (item.review_state === 'changes' ? 'changes requested' : item.review_state) : 'assigned'}
                      </b>{' '}
                      <span className="muted small">
                        image {item.image_id} · {item.annotation_count} annotation{item.annotation_count === 1 ? '' : 's'}
                      </span>
                      {item.review_comment && <blockquote className="small">{item.review_comment}</blockquote>}
                    </div>
                  </li>
                ))}
              </ul>
            </section>
          );
        })
      )}
    </Layout>
  );
}
