import { useEffect, useState } from 'react';
import { api } from '../api.js';
import { ImageGrid, isFiltered, listQuery, NO_FILTER, type GridFilter } from '../components/image-grid.js';
import { ErrorBanner, Layout } from '../components/layout.js';
import { useProjectAccess } from '../components/project-access.js';
import { Link } from '../router.js';
import { REVIEW_STATES, type ImageRecord, type LabelClass, type Member, type Project, type ResponseOf, type ReviewState } from '../types.js';

type Progress = ResponseOf<'/api/projects/{id}/assignments/progress', 'get'>[number];

const MAX_IDS = 10_000;

/**
 * Assigning images to annotators: by selection in the grid, by count (the oldest unassigned unlabelled images) or
 * by filter (every image the filter matches), with progress per person. Only roles with `assignments.write` see
 * the controls; others see the progress and why they cannot assign.
 */
export default function AssignPage({ projectId }: { projectId: number }) {
  const { can, why } = useProjectAccess(projectId);
  const [project, setProject] = useState<Project | null>(null);
  const [members, setMembers] = useState<Member[]>([]);
  const [classes, setClasses] = useState<LabelClass[]>([]);
  const [progress, setProgress] = useState<Progress[] | null>(null);
  const [assignee, setAssignee] = useState('');
  const [count, setCount] = useState(50);
  const [filter, setFilter] = useState<GridFilter>(NO_FILTER);
  const [selected, setSelected] = useState<Set<number>>(new Set());
  const [reloadKey, setReloadKey] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const loadProgress = () => api.get('/api/projects/{id}/assignments/progress', { path: { id: projectId } }).then(setProgress, (e) => setError((e as Error).message));
  useEffect(() => {
    api.get('/api/projects/{id}', { path: { id: projectId } }).then(setProject, (e) => setError((e as Error).message));
    api.get('/api/projects/{id}/members', { path: { id: projectId } }).then(setMembers, (e) => setError((e as Error).message));
    api.get('/api/projects/{id}/classes', { path: { id: projectId } }).then(setClasses, () => undefined);
    void loadProgress();
  }, [projectId]);

  const people = members.filter((m) => m.role !== 'viewer');
  const denied = why('assignments.write');
  const noAssignee = assignee === '' ? 'Choose who to assign to' : undefined;

  const assign = async (body: { image_ids?: number[]; count?: number }, what: string) => {
    setBusy(true);
    setError(null);
    setNotice(null);
    try {
      const out = await api.post('/api/projects/{id}/assignments', { path: { id: projectId }, body: { user_id: Number(assignee), ...body } });
      const who = people.find((p) => String(p.user_id) === assignee);
      setNotice(`${out.length} image${out.length === 1 ? '' : 's'} ${what} assigned to ${who?.display_name || who?.email}`);
      setSelected(new Set());
      setReloadKey((k) => k + 1);
      await loadProgress();
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };

  /** Every image id the filter matches (up to the route's limit), paged by cursor. */
  const filteredIds = async (): Promise<number[]> => {
    const ids: number[] = [];
    let after: number | null = null;
    for (;;) {
      const query = { ...listQuery(filter), limit: 1000, after: after ?? undefined };
      const page: ImageRecord[] = await api.get('/api/projects/{id}/images', { path: { id: projectId }, query });
      ids.push(...page.map((i) => i.id));
      if (page.length < 1000 || ids.length >= MAX_IDS) return ids.slice(0, MAX_IDS);
      after = page[page.length - 1].id;
    }
  };

  return (
    <Layout title={<><Link href={`/projects/${projectId}`}>{project?.name ?? `Project ${projectId}`}</Link> › Assign</>}>
      <ErrorBanner message={error} onClose={() => setError(null)} />
      {notice && <p className="muted small" role="status">{notice}</p>}
      <section className="card" aria-label="Progress per person">
        <h3>Progress per person</h3>
        {progress === null ? (
          <p className="muted small">Loading…</p>
        ) : progress.length === 0 ? (
          <p className="muted small">Nothing is assigned yet.</p>
        ) : (
          <table className="list" data-testid="assignment-progress">
            <thead>
              <tr><th>Person</th><th>Assigned</th><th>Annotated</th><th>Waiting for review</th><th>Approved</th><th>Returned</th><th>Done</th></tr>
            </thead>
            <tbody>
              {progress.map((p) => (
                <tr key={p.user_id} data-person={p.email}>
                  <td>{p.display_name || p.email}</td>
                  <td>{p.assigned}</td>
                  <td>{p.annotated}</td>
                  <td>{p.pending}</td>
                  <td>{p.approved}</td>
                  <td>{p.returned}</td>
                  <td>
                    <progress max={Math.max(1, p.assigned)} value={p.annotated} aria-label={`Progress of ${p.email}`} /> {p.assigned ? Math.round((100 * p.annotated) / p.assigned) : 0}%
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <section className="card" aria-label="Assign images">
        <h3>Assign images</h3>
        {denied && <p className="muted small" data-testid="assign-denied">{denied}</p>}
        <div className="inline-form">
          <label>
            Assign to
            <select value={assignee} onChange={(e) => setAssignee(e.target.value)} disabled={!!denied} title={denied} aria-label="Assignee">
              <option value="">Choose a person…</option>
              {people.map((m) => (
                <option key={m.user_id} value={m.user_id}>
                  {m.display_name || m.email} ({m.role})
                </option>
              ))}
            </select>
          </label>
          <label>
            Count
            <input type="number" min={1} max={MAX_IDS} value={count} onChange={(e) => setCount(Number(e.target.value))} disabled={!!denied} aria-label="Image count" />
          </label>
          <button disabled={busy || !!denied || !!noAssignee} title={denied ?? noAssignee} onClick={() => void assign({ count }, 'from the unlabelled queue')}>
            Assign {count} unlabelled
          </button>
          <button
            disabled={busy || !!denied || !!noAssignee || !isFiltered(filter)}
            title={denied ?? noAssignee ?? (isFiltered(filter) ? undefined : 'Set a filter below first')}
            onClick={() => void filteredIds().then((ids) => (ids.length ? assign({ image_ids: ids }, 'matching the filter') : setNotice('No image matches the filter')))}
          >
            Assign all matching the filter
          </button>
          <button
            className="primary"
            disabled={busy || !!denied || !!noAssignee || selected.size === 0}
            title={denied ?? noAssignee ?? (selected.size === 0 ? 'Select images in the grid' : undefined)}
            onClick={() => void assign({ image_ids: [...selected] }, 'selected')}
          >
            Assign {selected.size} selected
          </button>
          {selected.size > 0 && <button className="ghost" onClick={() => setSelected(new Set())}>Clear selection</button>}
        </div>
        <div className="toolbar">
          <select value={filter.split} onChange={(e) => setFilter({ ...filter, split: e.target.value })} aria-label="Split filter">
            <option value="">All splits</option>
            <option value="train">Train</option>
            <option value="valid">Valid</option>
            <option value="test">Test</option>
          </select>
          <select value={filter.annotated} onChange={(e) => setFilter({ ...filter, annotated: e.target.value as GridFilter['annotated'] })} aria-label="Annotated filter">
            <option value="all">Annotated or not</option>
            <option value="yes">Annotated</option>
            <option value="no">Not annotated</option>
          </select>
          <select value={filter.classId} onChange={(e) => setFilter({ ...filter, classId: e.target.value })} aria-label="Class filter">
            <option value="">Any class</option>
            {classes.map((c) => <option key={c.id} value={String(c.id)}>{c.name}</option>)}
          </select>
          <select value={filter.reviewState} onChange={(e) => setFilter({ ...filter, reviewState: e.target.value as ReviewState | '' })} aria-label="Review state filter">
            <option value="">Any review state</option>
            {REVIEW_STATES.map((r) => <option key={r} value={r}>{r}</option>)}
          </select>
        </div>
        <ImageGrid
          projectId={projectId}
          filter={filter}
          reloadKey={reloadKey}
          selection={can('assignments.write') ? { selected, toggle: (id) => setSelected((s) => { const n = new Set(s); if (n.has(id)) n.delete(id); else n.add(id); return n; }) } : undefined}
        />
      </section>
    </Layout>
  );
}
