import { useEffect, useState } from 'react';
import { api } from '../api.js';
import type { ResponseOf } from '../types.js';
import { ErrorBanner } from './layout.js';

type Action = ResponseOf<'/api/cleaning/actions', 'get'>[number];
type Preview = ResponseOf<'/api/projects/{id}/cleaning/preview', 'post'>;
type Run = ResponseOf<'/api/projects/{id}/cleaning/runs', 'get'>[number];

/** Pick actions (`initial` chosen at the start), preview exactly what changes, apply, and revert earlier runs. */
export function CleaningDialog({ projectId, initial = [], onClose, onChanged }: { projectId: number; initial?: string[]; onClose: () => void; onChanged: () => void }) {
  const [catalog, setCatalog] = useState<Action[]>([]);
  const [chosen, setChosen] = useState<Set<string>>(() => new Set(initial));
  const [preview, setPreview] = useState<Preview | null>(null);
  const [runs, setRuns] = useState<Run[]>([]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [note, setNote] = useState<string | null>(null);

  const loadRuns = () => api.get('/api/projects/{id}/cleaning/runs', { path: { id: projectId } }).then(setRuns, (e) => setError((e as Error).message));
  useEffect(() => {
    // Actions needing the user's own parameters (class merges and renames) are left to the API.
    api.get('/api/cleaning/actions', { query: { modality: 'image' } }).then((a) => setCatalog(a.filter((x) => !['merge_classes', 'rename_class'].includes(x.id))), (e) => setError((e as Error).message));
    void loadRuns();
  }, [projectId]);

  const actions = () => catalog.filter((a) => chosen.has(a.id)).map((a) => ({ id: a.id }));
  const toggle = (id: string) => {
    const next = new Set(chosen);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setChosen(next);
    setPreview(null);
  };
  const run = async (work: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const doPreview = () => run(async () => setPreview(await api.post('/api/projects/{id}/cleaning/preview', { path: { id: projectId }, body: { actions: actions() } })));
  const doApply = () =>
    run(async () => {
      const res = await api.post('/api/projects/{id}/cleaning', { path: { id: projectId }, body: { actions: actions(), preview_token: preview!.preview_token } });
      setNote(`Run ${res.cleaning_run_id} applied: ${describe(res.summary)}`);
      setPreview(null);
      await loadRuns();
      onChanged();
    });
  const doRevert = (id: number) =>
    run(async () => {
      await api.post('/api/cleaning-runs/{id}/revert', { path: { id } });
      setNote(`Run ${id} reverted`);
      await loadRuns();
      onChanged();
    });

  return (
    <div className="modal-backdrop">
      <div className="modal cleaning-dialog" role="dialog" aria-modal="true" aria-label="Clean the dataset">
        <h2>Clean the dataset</h2>
        <ErrorBanner message={error} onClose={() => setError(null)} />
        {note && <p className="notice" role="status">{note}</p>}
        <fieldset>
          <legend>Actions (applied in this order)</legend>
          {catalog.map((a) => (
            <label key={a.id} title={a.description}>
              <input type="checkbox" checked={chosen.has(a.id)} onChange={() => toggle(a.id)} /> {a.title}
            </label>
          ))}
        </fieldset>
        <div className="toolbar">
          <button onClick={doPreview} disabled={busy || chosen.size === 0}>
            Preview
          </button>
          <button className="primary" onClick={doApply} disabled={busy || !preview || preview.changes.length === 0}>
            Apply
          </button>
          <button className="ghost" onClick={onClose}>
            Close
          </button>
        </div>
        {preview && (
          <div className="cleaning-preview" data-testid="cleaning-preview">
            <p>
              <b>{preview.changes.length}</b> change{preview.changes.length === 1 ? '' : 's'}: {describe(preview.summary) || 'nothing to do'}
            </p>
            <ul>
              {preview.changes.slice(0, 200).map((c, i) => (
                <li key={i}>
                  {c.kind.replace(/_/g, ' ')} {c.image_id !== undefined && `image ${c.image_id}`} {c.annotation_id !== undefined && `annotation ${c.annotation_id}`}{' '}
                  {c.class_id !== undefined && `class ${c.class_id}`} — {c.detail}
                </li>
              ))}
              {preview.changes.length > 200 && <li className="muted">… and {preview.changes.length - 200} more</li>}
            </ul>
          </div>
        )}
        <h3>History</h3>
        {runs.length === 0 ? (
          <p className="muted">No cleaning run yet.</p>
        ) : (
          <table className="cleaning-history">
            <tbody>
              {runs.map((r) => (
                <tr key={r.id} data-run={r.id}>
                  <td>Run {r.id}</td>
                  <td>{new Date(r.created_at).toLocaleString()}</td>
                  <td>{r.actions.map((a) => a.id).join(', ')}</td>
                  <td>{describe(r.summary)}</td>
                  <td>{r.status}</td>
                  <td>
                    {r.status === 'applied' && (
                      <button className="ghost" disabled={busy} onClick={() => doRevert(r.id)}>
                        Revert
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
    </div>
  );
}

function describe(summary: Record<string, number>): string {
  return Object.entries(summary)
    .map(([kind, n]) => `${n} ${kind.replace(/_/g, ' ')}`)
    .join(', ');
}
