import { useEffect, useMemo, useRef, useState } from 'react';
import { Chart, registerables, type ChartConfiguration } from 'chart.js';
import { api } from '../api.js';
import { ProgressBar } from '../jobs.js';
import { Link } from '../router.js';
import type { Version } from './versions-panel.js';
import type { RequestOf, ResponseOf } from '../types.js';

Chart.register(...registerables);

type Adapter = ResponseOf<'/api/training/adapters', 'get'>[number];
type Readiness = ResponseOf<'/api/projects/{id}/readiness', 'post'>;
export type TrainJob = ResponseOf<'/api/train/jobs/{job_id}', 'get'>;
type ExperimentRow = ResponseOf<'/api/projects/{id}/experiments', 'get'>[number];
type Compare = ResponseOf<'/api/experiments/compare', 'post'>;
/** One epoch's figures in an experiment's history (the document says only "an object"). */
type Epoch = Record<string, number>;

const FINISHED = ['succeeded', 'failed', 'cancelled'];
const LOSSES = ['train_loss', 'val_loss'];
const QUALITY = ['map50', 'map50_95', 'accuracy', 'top5', 'f1', 'r2'];

/** Line chart of per-epoch values (Chart.js), one line per series. */
export function Curves({ title, series }: { title: string; series: { label: string; points: { x: number; y: number }[] }[] }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const chart = useRef<Chart | null>(null);
  useEffect(() => {
    if (!canvas.current) return;
    const config: ChartConfiguration<'line', { x: number; y: number }[]> = {
      type: 'line',
      data: { datasets: series.map((s) => ({ label: s.label, data: s.points, pointRadius: 2, borderWidth: 2 })) },
      options: {
        animation: false,
        responsive: true,
        parsing: false,
        plugins: { title: { display: true, text: title } },
        scales: { x: { type: 'linear', title: { display: true, text: 'epoch' } } },
      },
    };
    chart.current?.destroy();
    chart.current = new Chart(canvas.current, config);
    return () => chart.current?.destroy();
  }, [JSON.stringify(series)]);
  return <canvas ref={canvas} aria-label={title} />;
}

function curves(history: Epoch[], names: string[], prefix = ''): { label: string; points: { x: number; y: number }[] }[] {
  return names
    .filter((n) => history.some((h) => typeof h[n] === 'number'))
    .map((n) => ({ label: `${prefix}${n}`, points: history.filter((h) => typeof h[n] === 'number').map((h) => ({ x: h.epoch, y: h[n] })) }));
}

/** A metric or parameter as read: integers as they are (16, not 16.000), others to three decimals (none from 100). */
export const fmt = (v: unknown) =>
  typeof v === 'number' ? (Number.isInteger(v) ? String(v) : Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(3)) : v === null || v === undefined ? '—' : String(v);

/** `batch_size` → `Batch size`: a parameter's name as a label. */
const labelOf = (name: string) => name.charAt(0).toUpperCase() + name.slice(1).replace(/_/g, ' ');

/**
 * The job's epoch line: the trainer's message already says "epoch 3/30" while it runs an epoch (the job's `epoch`
 * counts finished ones), so the message is shown alone then, not beside a second count.
 */
export function epochLine(job: { epoch: number; epochs: number | null; message: string | null }): string {
  const own = job.message && /^epoch \d+/i.test(job.message) ? job.message.charAt(0).toUpperCase() + job.message.slice(1) : null;
  return own ?? [`Epoch ${job.epoch}/${job.epochs ?? '?'}`, job.message].filter(Boolean).join(' · ');
}

/** The Train dialog: adapter, model, epochs, image size, batch, device, and the readiness score before Train. */
export function TrainDialog({ projectId, versions, initialVersion, onStarted }: { projectId: number; versions: Version[]; initialVersion?: number; onStarted: (job: TrainJob) => void }) {
  const [adapters, setAdapters] = useState<Adapter[]>([]);
  const [readiness, setReadiness] = useState<Readiness | null>(null);
  const ready = versions.filter((v) => v.status === 'ready');
  const [versionId, setVersionId] = useState<number | null>(initialVersion ?? null);
  const [adapterName, setAdapterName] = useState('');
  const [form, setForm] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    api.get('/api/training/adapters').then((list) => {
      setAdapters(list);
      const first = list.find((a) => a.available && a.name !== 'tabular');
      if (first) setAdapterName(first.name);
    }, (e) => setError((e as Error).message));
  }, []);
  useEffect(() => {
    if (versionId === null && ready.length > 0) setVersionId(ready[0].id);
  }, [versions]);
  const adapter = adapters.find((a) => a.name === adapterName);
  useEffect(() => {
    if (!adapter) return;
    setForm({ model: adapter.default_model, device: 'auto', ...Object.fromEntries(Object.entries(adapter.params).map(([k, p]) => [k, p.default === null ? '' : String(p.default)])) });
    // The readiness score and its blockers, before the user presses Train (the data-quality module answers this at merge).
    api.post('/api/projects/{id}/readiness', { path: { id: projectId }, body: { adapter: adapter.name } }).then(setReadiness, () => setReadiness(null));
  }, [adapterName, adapters.length]);

  const train = async () => {
    if (!adapter || versionId === null) return;
    setBusy(true);
    setError(null);
    try {
      const body: Record<string, unknown> = { version_id: versionId, adapter: adapter.name, model: form.model, device: form.device || 'auto' };
      for (const [name, spec] of Object.entries(adapter.params)) if (form[name] !== '' && form[name] !== undefined) body[name] = spec.type === 'integer' || spec.type === 'number' ? Number(form[name]) : form[name];
      // The form is generated from the adapter's parameter list, so the body is assembled by name; the server validates it.
      onStarted(await api.post('/api/projects/{id}/train', { path: { id: projectId }, body: body as RequestOf<'/api/projects/{id}/train', 'post'> }));
    } catch (e) {
      const detail = (e as { body?: { readiness?: Readiness } }).body?.readiness;
      if (detail) setReadiness(detail);
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="panel train-dialog" aria-label="Train a model">
      <h3>Train a model</h3>
      {error && <p className="error">{error}</p>}
      <div className="form-grid">
        <label>
          Version
          <select value={versionId ?? ''} onChange={(e) => setVersionId(Number(e.target.value))}>
            {ready.map((v) => <option key={v.id} value={v.id}>v{v.number} {v.name}</option>)}
          </select>
        </label>
        <label>
          Adapter
          <select value={adapterName} onChange={(e) => setAdapterName(e.target.value)}>
            {adapters.map((a) => <option key={a.name} value={a.name} disabled={!a.available}>{a.title}{a.available ? '' : ' (not available)'}</option>)}
          </select>
        </label>
        {adapter && adapter.models.length > 0 && (
          <label>
            Model
            <select value={form.model ?? ''} onChange={(e) => setForm({ ...form, model: e.target.value })}>
              {adapter.models.map((m) => <option key={m}>{m}</option>)}
            </select>
          </label>
        )}
        {adapter && adapter.models.length === 0 && (
          <label>
            Model
            <input value={form.model ?? ''} onChange={(e) => setForm({ ...form, model: e.target.value })} />
          </label>
        )}
        {adapter && Object.entries(adapter.params).map(([name, spec]) => (
          <label key={name} data-param={name}>
            <span title={name}>{labelOf(name)}</span>
            <input type="number" min={spec.min} max={spec.max} value={form[name] ?? ''} onChange={(e) => setForm({ ...form, [name]: e.target.value })} />
            {spec.description && <span className="muted small param-help">{spec.description}</span>}
          </label>
        ))}
        {adapter && (
          <label>
            Device
            <select value={form.device ?? 'auto'} onChange={(e) => setForm({ ...form, device: e.target.value })}>
              {adapter.devices.map((d) => <option key={d}>{d}</option>)}
            </select>
          </label>
        )}
      </div>
      {adapters.filter((a) => !a.available).map((a) => <p key={a.name} className="muted small">{a.title}: {a.reason}</p>)}
      {readiness && (
        <div className={readiness.ready ? 'readiness ok' : 'readiness blocked'}>
          <b>Readiness {readiness.score}</b> / threshold {readiness.threshold}
          {!readiness.ready && <p className="small" data-testid="readiness-summary">{readiness.summary}</p>}
          {readiness.blockers.length > 0 && <ul>{readiness.blockers.map((b) => <li key={b}>{b}</li>)}</ul>}
        </div>
      )}
      <button className="primary" disabled={busy || !adapter?.available || versionId === null} onClick={() => void train()}>
        {busy ? 'Starting…' : 'Train'}
      </button>
    </section>
  );
}

/** The live job view: progress, ETA, epoch, latest metrics, loss and mAP curves as epochs come in; Cancel. */
export function TrainJobView({ jobId, onFinished }: { jobId: number; onFinished?: () => void }) {
  const [job, setJob] = useState<TrainJob | null>(null);
  const [history, setHistory] = useState<Epoch[]>([]);
  useEffect(() => {
    let stopped = false;
    let timer = 0;
    const poll = async () => {
      const next = await api.get('/api/train/jobs/{job_id}', { path: { job_id: jobId } }).catch(() => null);
      if (stopped || !next) return;
      setJob(next);
      const experiment = await api.get('/api/experiments/{id}', { path: { id: next.experiment_id } }).catch(() => null);
      if (experiment?.history) setHistory(experiment.history as Epoch[]);
      if (FINISHED.includes(next.status)) return onFinished?.();
      timer = window.setTimeout(() => void poll(), 2000);
    };
    void poll();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [jobId]);
  if (!job) return <p className="muted">Loading training job…</p>;
  return (
    <section className="panel" aria-label="Training job">
      <h3>Training job {job.id} · {job.adapter} · {job.status}</h3>
      <ProgressBar value={job.progress} label="Training progress" />
      <p className="small">
        <span data-testid="epoch-line">{epochLine(job)}</span> {job.eta_seconds !== null ? `· about ${Math.ceil(job.eta_seconds / 60)} min left` : ''}
      </p>
      {job.error && <p className="error">{job.error}</p>}
      <p className="small">{Object.entries(job.metrics).map(([k, v]) => `${k} ${fmt(v)}`).join(' · ')}</p>
      {!FINISHED.includes(job.status) && <button onClick={() => void api.post('/api/jobs/{id}/cancel', { path: { id: job.id } })}>Cancel</button>}
      <div className="charts">
        <Curves title="Losses" series={curves(history, LOSSES)} />
        <Curves title="Validation" series={curves(history, QUALITY)} />
      </div>
    </section>
  );
}

type SortKey = 'id' | 'name' | 'status' | 'adapter' | string;

/** The Experiments tab: sortable, filterable table; compare view; confusion matrix and per-class table; promote. */
export function ExperimentsPanel({ projectId }: { projectId: number }) {
  const [rows, setRows] = useState<ExperimentRow[]>([]);
  const [filter, setFilter] = useState({ status: '', adapter: '', text: '' });
  const [sort, setSort] = useState<{ key: SortKey; desc: boolean }>({ key: 'id', desc: true });
  const [selected, setSelected] = useState<number[]>([]);
  const [compare, setCompare] = useState<Compare | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = () => api.get('/api/projects/{id}/experiments', { path: { id: projectId }, query: { limit: 1000 } }).then(setRows, (e) => setError((e as Error).message));
  useEffect(() => void load(), [projectId]);
  const metricNames = useMemo(() => [...new Set(rows.flatMap((r) => Object.keys(r.metrics)))].filter((m) => !m.startsWith('test_')).sort(), [rows]);
  const shown = rows
    .filter((r) => (!filter.status || r.status === filter.status) && (!filter.adapter || r.adapter === filter.adapter))
    .filter((r) => !filter.text || `${r.name} ${r.tags.join(' ')}`.toLowerCase().includes(filter.text.toLowerCase()))
    .sort((a, b) => {
      const va = (a as unknown as Record<string, unknown>)[sort.key] ?? a.metrics[sort.key] ?? -Infinity;
      const vb = (b as unknown as Record<string, unknown>)[sort.key] ?? b.metrics[sort.key] ?? -Infinity;
      const order = va! < vb! ? -1 : va! > vb! ? 1 : 0;
      return sort.desc ? -order : order;
    });
  const header = (key: SortKey, label = key) => (
    <th onClick={() => setSort({ key, desc: sort.key === key ? !sort.desc : true })} style={{ cursor: 'pointer' }}>
      {label}{sort.key === key ? (sort.desc ? ' ▼' : ' ▲') : ''}
    </th>
  );
  const promote = async (modelId: number) => {
    try {
      await api.patch('/api/models/{model_id}/lifecycle', { path: { model_id: modelId }, body: { lifecycle: 'production' } });
      setError(null);
      await load();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  return (
    <section aria-label="Experiments">
      {error && <p className="error">{error}</p>}
      <div className="toolbar">
        <input placeholder="Filter by name or tag" value={filter.text} onChange={(e) => setFilter({ ...filter, text: e.target.value })} />
        <select value={filter.status} onChange={(e) => setFilter({ ...filter, status: e.target.value })} aria-label="Status filter">
          <option value="">Any status</option>
          {['queued', 'running', 'succeeded', 'failed', 'cancelled'].map((s) => <option key={s}>{s}</option>)}
        </select>
        <select value={filter.adapter} onChange={(e) => setFilter({ ...filter, adapter: e.target.value })} aria-label="Adapter filter">
          <option value="">Any adapter</option>
          {[...new Set(rows.map((r) => r.adapter))].map((a) => <option key={a}>{a}</option>)}
        </select>
        <button disabled={selected.length === 0} onClick={() => void api.post('/api/experiments/compare', { body: { ids: selected } }).then(setCompare, (e) => setError((e as Error).message))}>
          Compare {selected.length || ''}
        </button>
        <button className="ghost" onClick={() => void load()}>Refresh</button>
      </div>
      <table className="experiments">
        <thead>
          <tr>
            <th />
            {header('id', '#')}
            {header('name')}
            {header('status')}
            {header('adapter')}
            {metricNames.map((m) => header(m))}
            {header('duration_s', 'time (s)')}
            <th>model</th>
          </tr>
        </thead>
        <tbody>
          {shown.map((r) => (
            <tr key={r.id}>
              <td><input type="checkbox" checked={selected.includes(r.id)} onChange={(e) => setSelected(e.target.checked ? [...selected, r.id] : selected.filter((id) => id !== r.id))} aria-label={`Select experiment ${r.id}`} /></td>
              <td>{r.id}</td>
              <td><Link href={`/projects/${projectId}/experiments/${r.id}`}>{r.name}</Link>{r.tags.map((t) => <span key={t} className="tag">{t}</span>)}</td>
              <td>{r.status}</td>
              <td>{r.adapter}</td>
              {metricNames.map((m) => <td key={m}>{fmt(r.metrics[m])}</td>)}
              <td>{fmt(r.duration_s)}</td>
              <td>{r.model_id ? <button className="small" onClick={() => void promote(r.model_id!)}>Promote to production</button> : '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {compare && <CompareView data={compare} />}
    </section>
  );
}

function CompareView({ data }: { data: Compare }) {
  const names = data.experiments.map((e) => `#${e.id} ${e.name}`);
  return (
    <section className="panel" aria-label="Compare experiments">
      <h3>Compare</h3>
      <table>
        <thead><tr><th /> {names.map((n) => <th key={n}>{n}</th>)}</tr></thead>
        <tbody>
          {Object.entries(data.params).map(([k, values]) => <tr key={`p-${k}`}><td>{k}</td>{values.map((v, i) => <td key={i}>{fmt(v)}</td>)}</tr>)}
          {Object.entries(data.metrics).map(([k, values]) => <tr key={`m-${k}`}><td><b>{k}</b></td>{values.map((v, i) => <td key={i}>{fmt(v)}</td>)}</tr>)}
        </tbody>
      </table>
      <div className="charts">
        <Curves title="Losses" series={data.experiments.flatMap((e) => curves((e.history ?? []) as Epoch[], LOSSES, `#${e.id} `))} />
        <Curves title="Validation" series={data.experiments.flatMap((e) => curves((e.history ?? []) as Epoch[], QUALITY, `#${e.id} `))} />
      </div>
      {data.experiments.map((e) => (
        <div key={e.id}>
          <h4>#{e.id} {e.name}: per class</h4>
          {e.per_class && e.per_class.length > 0 && (
            <table>
              <thead><tr>{Object.keys(e.per_class[0]).map((k) => <th key={k}>{k}</th>)}</tr></thead>
              <tbody>{e.per_class.map((row, i) => <tr key={i}>{Object.values(row).map((v, j) => <td key={j}>{fmt(v)}</td>)}</tr>)}</tbody>
            </table>
          )}
          {e.confusion && (
            <table className="confusion" aria-label="Confusion matrix (rows true, columns predicted)">
              <tbody>{e.confusion.map((row, i) => <tr key={i}>{row.map((n, j) => <td key={j} style={{ background: i === j ? '#e8f5e9' : n ? '#ffebee' : undefined }}>{n}</td>)}</tr>)}</tbody>
            </table>
          )}
        </div>
      ))}
    </section>
  );
}

/** The Training tab: the dialog, the project's current or latest job live. */
export function TrainingPanel({ projectId, versions, initialVersion }: { projectId: number; versions: Version[]; initialVersion?: number }) {
  const [jobId, setJobId] = useState<number | null>(null);
  useEffect(() => {
    api.get('/api/projects/{id}/train/status', { path: { id: projectId } }).then((s) => s.job && setJobId(s.job.id), () => undefined);
  }, [projectId]);
  return (
    <>
      <TrainDialog projectId={projectId} versions={versions} initialVersion={initialVersion} onStarted={(job) => setJobId(job.id)} />
      {jobId !== null && <TrainJobView key={jobId} jobId={jobId} />}
    </>
  );
}
