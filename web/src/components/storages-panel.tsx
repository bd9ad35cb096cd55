import { useEffect, useState } from 'react';
import { api, isMissingRoute } from '../api.js';
import type { ResponseOf } from '../types.js';
import { ErrorBanner } from './layout.js';

type Storage = ResponseOf<'/api/projects/{id}/storages/{storage_id}', 'get'>;
type ConnectionTest = ResponseOf<'/api/projects/{id}/storages/{storage_id}/test', 'post'>;

const EMPTY = { name: '', endpoint: '', bucket: '', prefix: '', access_key_id: '', secret_access_key: '', purpose: 'source' as 'source' | 'target', import_mode: 'reference' as 'reference' | 'copy', sync_interval_minutes: '' };

/**
 * The project's storages (S3-compatible buckets): each with its connection test, last sync and counts, and a sync
 * button for sources; a form attaches another. The secret is sent once and never shown again (only the key's hint).
 */
export function StoragesPanel({ projectId }: { projectId: number }) {
  const [storages, setStorages] = useState<Storage[] | null>(null);
  const [missing, setMissing] = useState(false);
  const [tests, setTests] = useState<Record<number, ConnectionTest>>({});
  const [form, setForm] = useState(EMPTY);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const load = () =>
    api.get('/api/projects/{id}/storages', { path: { id: projectId } }).then(setStorages, (e) => (isMissingRoute(e) ? setMissing(true) : setError((e as Error).message)));
  useEffect(() => void load(), [projectId]);
  // While a sync is queued or running, its state and counts are read again every couple of seconds.
  const syncing = storages?.some((s) => s.sync.state === 'queued' || s.sync.state === 'running') ?? false;
  useEffect(() => {
    if (!syncing) return;
    const timer = setInterval(() => void load(), 2000);
    return () => clearInterval(timer);
  }, [syncing, projectId]);

  const act = async (work: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
      await load();
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const path = (s: Storage) => ({ id: projectId, storage_id: s.id });
  const test = (s: Storage) => act(async () => setTests({ ...tests, [s.id]: await api.post('/api/projects/{id}/storages/{storage_id}/test', { path: path(s) }) }));
  const sync = (s: Storage) => act(() => api.post('/api/projects/{id}/storages/{storage_id}/sync', { path: path(s) }));
  const detach = (s: Storage) => act(() => api.delete('/api/projects/{id}/storages/{storage_id}', { path: path(s) }));
  const attach = () =>
    act(async () => {
      await api.post('/api/projects/{id}/storages', {
        path: { id: projectId },
        body: {
          ...form,
          region: 'us-east-1',
          force_path_style: true,
          sync_interval_minutes: form.sync_interval_minutes === '' ? null : Number(form.sync_interval_minutes),
        },
      });
      setForm(EMPTY);
    });

  if (missing) return <p className="muted">Storages are not available on this server yet.</p>;
  const field = (key: keyof typeof EMPTY, label: string, type = 'text') => (
    <label className="small">
      {label}
      <input type={type} aria-label={label} value={form[key]} onChange={(e) => setForm({ ...form, [key]: e.target.value })} />
    </label>
  );
  return (
    <section className="card" aria-label="Storage">
      <h3>Storage</h3>
      <ErrorBanner message={error} onClose={() => setError(null)} />
      {storages?.length === 0 && <p className="muted">No bucket is attached to this project.</p>}
      {storages && storages.length > 0 && (
        <table className="table" data-testid="storages">
          <thead>
            <tr>
              <th>Name</th>
              <th>Bucket</th>
              <th>Use</th>
              <th>Last sync</th>
              <th>Imported</th>
              <th>New</th>
              <th>Deleted</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {storages.map((s) => (
              <tr key={s.id} data-testid={`storage-${s.name}`}>
                <td>
                  {s.name}
                  <div className="muted small">key {s.access_key_hint}</div>
                </td>
                <td>
                  s3://{s.bucket}/{s.prefix}
                  <div className="muted small">{s.endpoint}</div>
                </td>
                <td>{s.purpose === 'source' ? `source (${s.import_mode})` : 'target'}</td>
                <td data-testid="sync-state">
                  {s.sync.state}
                  {s.sync.last_at && <div className="muted small">{new Date(s.sync.last_at).toLocaleString()}</div>}
                  {s.sync.error && <div className="error small">{s.sync.error}</div>}
                </td>
                <td data-testid="count-imported">{s.counts.imported}</td>
                <td data-testid="count-new">{s.sync.counts?.new ?? 0}</td>
                <td data-testid="count-missing">{s.counts.missing}</td>
                <td>
                  <button disabled={busy} onClick={() => void test(s)}>Test connection</button>{' '}
                  {s.purpose === 'source' && (
                    <button className="primary" disabled={busy || syncing} onClick={() => void sync(s)}>Sync now</button>
                  )}{' '}
                  <button disabled={busy} onClick={() => void detach(s)}>Detach</button>
                  {tests[s.id] && <div className={tests[s.id].ok ? 'small' : 'error small'} data-testid="connection-test">{tests[s.id].ok ? '✓ ' : '✗ '}{tests[s.id].detail}</div>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h4>Attach a bucket</h4>
      <form className="inline-form" onSubmit={(e) => (e.preventDefault(), void attach())}>
        {field('name', 'Name')}
        {field('endpoint', 'Endpoint')}
        {field('bucket', 'Bucket')}
        {field('prefix', 'Prefix')}
        {field('access_key_id', 'Access key id')}
        {field('secret_access_key', 'Secret access key', 'password')}
        <label className="small">
          Use
          <select aria-label="Use" value={form.purpose} onChange={(e) => setForm({ ...form, purpose: e.target.value as 'source' | 'target' })}>
            <option value="source">Source of images</option>
            <option value="target">Target of exports</option>
          </select>
        </label>
        <label className="small">
          Import
          <select aria-label="Import" value={form.import_mode} onChange={(e) => setForm({ ...form, import_mode: e.target.value as 'reference' | 'copy' })}>
            <option value="reference">By reference</option>
            <option value="copy">By copy</option>
          </select>
        </label>
        {field('sync_interval_minutes', 'Sync every (minutes)', 'number')}
        <button className="primary" disabled={busy}>Attach</button>
      </form>
    </section>
  );
}
