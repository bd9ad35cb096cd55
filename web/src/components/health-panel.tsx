import { useEffect, useRef, useState } from 'react';
import {
  BarController,
  BarElement,
  BubbleController,
  CategoryScale,
  Chart,
  Legend,
  LinearScale,
  PointElement,
  Tooltip,
  type ChartConfiguration,
} from 'chart.js';
import { api } from '../api.js';
import { Link } from '../router.js';
import { ErrorBanner } from './layout.js';
import { SPLIT_NAMES } from '../vocabulary.js';

Chart.register(BarController, BarElement, BubbleController, CategoryScale, LinearScale, PointElement, Tooltip, Legend);

interface CheckResult {
  id: string;
  title: string;
  modality: string;
  severity: 'error' | 'warning' | 'info';
  count: number;
  message: string;
  items: { image_id?: number; annotation_id?: number; sample_id?: number; detail: string }[];
  image_ids?: number[];
  sample_ids?: number[];
}
interface Report {
  score: number;
  generated_at: string;
  features: { computed: number };
  checks: CheckResult[];
}
interface Profile {
  totals: { images: number; annotated_images: number; annotations: number; classes: number };
  splits: Record<string, { images: number; annotated: number }>;
  classes: { id: number; name: string; color: string; images: number; instances: number }[];
  box_sizes: { small: number; medium: number; large: number };
  box_heatmap: { cells: number; counts: number[][] };
  image_sizes: { width: number; height: number; images: number }[];
  samples?: SampleProfile;
}
interface SampleProfile {
  total: number;
  labelled: number;
  modalities: { modality: string; samples: number; labelled: number; splits: Record<string, number> }[];
  labels: { modality: string; name: string; samples: number }[];
  lengths: { modality: string; samples: number; min: number; median: number; p95: number; max: number }[];
  tabular: {
    target: string | null;
    rows: number;
    columns: { name: string; type: string; target: boolean; missing: number; distinct: number; distinct_capped: boolean; min?: number; max?: number; mean?: number; top_values?: { value: string; samples: number }[] }[];
  } | null;
}
interface Readiness {
  score: number;
  threshold: number;
  ready: boolean;
  adapter: string;
  checks: { id: string; passed: boolean; weight: number; message: string }[];
  blockers: string[];
}
interface Action {
  id: string;
  title: string;
  description: string;
  params: Record<string, { type: string; default: unknown; enum?: string[] }>;
}
interface Change {
  action: string;
  kind: string;
  image_id?: number;
  annotation_id?: number;
  class_id?: number;
  detail: string;
}
interface Preview {
  preview_token: string;
  summary: Record<string, number>;
  changes: Change[];
}
interface Run {
  id: number;
  status: string;
  created_at: string;
  summary: Record<string, number>;
  actions: { id: string }[];
}

/** One Chart.js chart on its own canvas, rebuilt when its configuration changes. */
function ChartCanvas({ config, label }: { config: ChartConfiguration; label: string }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    if (!canvas.current) return;
    const chart = new Chart(canvas.current, config);
    return () => chart.destroy();
  }, [config]);
  return (
    <figure className="health-chart">
      <figcaption>{label}</figcaption>
      <canvas ref={canvas} role="img" aria-label={label} />
    </figure>
  );
}

const SEVERITY_ORDER = { error: 0, warning: 1, info: 2 };

function charts(profile: Profile): { label: string; config: ChartConfiguration }[] {
  const cells = profile.box_heatmap.cells;
  const heat: { x: number; y: number; r: number; n: number }[] = [];
  const max = Math.max(1, ...profile.box_heatmap.counts.flat());
  profile.box_heatmap.counts.forEach((row, y) => row.forEach((n, x) => n > 0 && heat.push({ x: x + 0.5, y: y + 0.5, r: 2 + (12 * n) / max, n })));
  const sizeMax = Math.max(1, ...profile.image_sizes.map((s) => s.images));
  return [
    {
      label: 'Class balance (instances)',
      config: {
        type: 'bar',
        data: { labels: profile.classes.map((c) => c.name), datasets: [{ label: 'instances', data: profile.classes.map((c) => c.instances), backgroundColor: profile.classes.map((c) => c.color) }] },
        options: { animation: false, plugins: { legend: { display: false } } },
      },
    },
    {
      label: 'Box sizes (COCO)',
      config: {
        type: 'bar',
        data: { labels: ['small < 32²', 'medium < 96²', 'large'], datasets: [{ label: 'boxes', data: [profile.box_sizes.small, profile.box_sizes.medium, profile.box_sizes.large], backgroundColor: '#4c78a8' }] },
        options: { animation: false, plugins: { legend: { display: false } } },
      },
    },
    {
      label: 'Where box centres fall',
      config: {
        type: 'bubble',
        data: { datasets: [{ label: 'box centres', data: heat, backgroundColor: 'rgba(228, 87, 86, 0.6)' }] },
        options: {
          animation: false,
          plugins: { legend: { display: false } },
          scales: { x: { min: 0, max: cells, title: { display: true, text: 'x (left → right)' } }, y: { min: 0, max: cells, reverse: true, title: { display: true, text: 'y (top → bottom)' } } },
        },
      },
    },
    {
      label: 'Image sizes',
      config: {
        type: 'bubble',
        data: { datasets: [{ label: 'images', data: profile.image_sizes.map((s) => ({ x: s.width, y: s.height, r: 3 + (10 * s.images) / sizeMax })), backgroundColor: 'rgba(84, 162, 75, 0.6)' }] },
        options: { animation: false, plugins: { legend: { display: false } }, scales: { x: { title: { display: true, text: 'width px' } }, y: { title: { display: true, text: 'height px' } } } },
      },
    },
  ];
}

function sampleChart(samples: SampleProfile): { label: string; config: ChartConfiguration } {
  const labels = samples.labels.slice(0, 30);
  return {
    label: 'Samples per class',
    config: {
      type: 'bar',
      data: { labels: labels.map((l) => `${l.name} (${l.modality})`), datasets: [{ label: 'samples', data: labels.map((l) => l.samples), backgroundColor: '#4c78a8' }] },
      options: { animation: false, plugins: { legend: { display: false } } },
    },
  };
}

const round = (v: number | undefined) => (v === undefined ? '' : Number.isInteger(v) ? String(v) : v.toFixed(2));

/** The profile's samples: counts per modality and split, text lengths, the tabular columns. */
function SampleProfileTables({ samples }: { samples: SampleProfile }) {
  return (
    <div className="health-samples" data-testid="sample-profile">
      <table className="health-checks">
        <thead>
          <tr>
            <th>Modality</th>
            <th>Samples</th>
            <th>Labelled</th>
            <th>train / valid / test / unassigned</th>
            <th>Length (median, p95, max)</th>
          </tr>
        </thead>
        <tbody>
          {samples.modalities.map((m) => {
            const length = samples.lengths.find((l) => l.modality === m.modality);
            return (
              <tr key={m.modality} data-modality={m.modality}>
                <td>{m.modality}</td>
                <td className="count">{m.samples}</td>
                <td className="count">{m.labelled}</td>
                <td>{[...SPLIT_NAMES, 'unassigned'].map((k) => m.splits[k] ?? 0).join(' / ')}</td>
                <td>{length ? `${length.median}, ${length.p95}, ${length.max} characters` : '—'}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {samples.tabular && (
        <table className="health-checks" aria-label="Tabular columns">
          <thead>
            <tr>
              <th>Column</th>
              <th>Type</th>
              <th>Missing</th>
              <th>Distinct</th>
              <th>Range or most frequent</th>
            </tr>
          </thead>
          <tbody>
            {samples.tabular.columns.map((c) => (
              <tr key={c.name} data-column={c.name}>
                <td>{c.target ? <b>{c.name} (target)</b> : c.name}</td>
                <td>{c.type}</td>
                <td className="count">{c.missing}</td>
                <td className="count">{c.distinct}{c.distinct_capped ? '+' : ''}</td>
                <td>{c.mean !== undefined ? `${round(c.min)} – ${round(c.max)}, mean ${round(c.mean)}` : (c.top_values ?? []).slice(0, 3).map((v) => `${v.value} (${v.samples})`).join(', ')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

/** A check's first items; a sample's links to it on the samples page. */
function CheckItems({ projectId, check }: { projectId: number; check: CheckResult }) {
  return (
    <ul className="health-items">
      {check.items.map((item, i) => (
        <li key={i}>
          {item.sample_id !== undefined && (
            <Link href={`/projects/${projectId}/samples?modality=${check.modality}&sample=${item.sample_id}`}>Sample {item.sample_id}</Link>
          )}
          {item.sample_id !== undefined && ': '}
          {item.detail}
        </li>
      ))}
      {check.count > check.items.length && <li className="muted">… and {check.count - check.items.length} more</li>}
    </ul>
  );
}

/**
 * The project's Health tab: the quality score and readiness, each check with its count (a click shows the affected
 * images in the grid, or a sample check's items with links to the samples), the profile's charts, and the cleaning
 * dialog.
 */
export function HealthPanel({ projectId, onShowImages, onCleaned }: { projectId: number; onShowImages: (ids: number[], label: string) => void; onCleaned: () => void }) {
  const [report, setReport] = useState<Report | null>(null);
  const [profile, setProfile] = useState<Profile | null>(null);
  const [readiness, setReadiness] = useState<Readiness | null>(null);
  const [cleaning, setCleaning] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [chartConfigs, setChartConfigs] = useState<{ label: string; config: ChartConfiguration }[]>([]);
  const [open, setOpen] = useState<string | null>(null);

  const load = () => {
    setError(null);
    api.get<Report>(`/api/projects/${projectId}/quality`).then(setReport, (e) => setError((e as Error).message));
    api.get<Profile>(`/api/projects/${projectId}/profile`).then(
      (p) => {
        setProfile(p);
        // The image charts for projects with images (or nothing yet); a chart of the sample classes beside them.
        const images = p.totals.images > 0 || !p.samples ? charts(p) : [];
        setChartConfigs(p.samples && p.samples.labels.length > 0 ? [...images, sampleChart(p.samples)] : images);
      },
      (e) => setError((e as Error).message),
    );
    api.post<Readiness>(`/api/projects/${projectId}/readiness`, {}).then(setReadiness, (e) => setError((e as Error).message));
  };
  useEffect(load, [projectId]);

  const checks = report ? [...report.checks].sort((a, b) => SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity] || b.count - a.count) : [];
  return (
    <section className="health-panel" aria-label="Dataset health">
      <ErrorBanner message={error} onClose={() => setError(null)} />
      <div className="toolbar">
        <span className="health-score" data-testid="health-score">
          Health <b>{report ? report.score : '…'}</b>/100
        </span>
        {readiness && (
          <span className={`health-readiness ${readiness.ready ? 'ready' : 'blocked'}`} data-testid="readiness">
            Readiness for {readiness.adapter}: <b>{readiness.score}</b>/100 {readiness.ready ? '(ready)' : `(needs ${readiness.threshold}, ${readiness.blockers.length} blocker${readiness.blockers.length === 1 ? '' : 's'})`}
          </span>
        )}
        <button className="ghost" onClick={load}>
          Re-run checks
        </button>
        <button className="primary" onClick={() => setCleaning(true)}>
          Clean…
        </button>
      </div>
      {readiness && readiness.blockers.length > 0 && (
        <ul className="health-blockers">
          {readiness.blockers.map((b) => (
            <li key={b}>{b}</li>
          ))}
        </ul>
      )}
      {report && (
        <table className="health-checks">
          <thead>
            <tr>
              <th>Check</th>
              <th>Severity</th>
              <th>Count</th>
              <th>What</th>
            </tr>
          </thead>
          <tbody>
            {checks.map((c) => [
              <tr key={c.id} data-check={c.id} className={c.count > 0 ? `has-${c.severity}` : 'clean'}>
                <td>
                  {c.image_ids && c.image_ids.length > 0 ? (
                    <button className="link" onClick={() => onShowImages(c.image_ids!, c.title)}>
                      {c.title}
                    </button>
                  ) : c.modality !== 'image' && c.items.length > 0 ? (
                    <button className="link" aria-expanded={open === c.id} onClick={() => setOpen(open === c.id ? null : c.id)}>
                      {c.title}
                    </button>
                  ) : (
                    c.title
                  )}
                  {c.modality !== 'image' && <span className="muted"> ({c.modality})</span>}
                </td>
                <td>{c.severity}</td>
                <td className="count">{c.count}</td>
                <td>{c.count > 0 ? c.message : '—'}</td>
              </tr>,
              open === c.id && (
                <tr key={`${c.id}-items`} data-check-items={c.id}>
                  <td colSpan={4}>
                    <CheckItems projectId={projectId} check={c} />
                  </td>
                </tr>
              ),
            ])}
          </tbody>
        </table>
      )}
      {profile && (
        <div className="health-charts">
          {(profile.totals.images > 0 || !profile.samples) && (
            <p className="muted">
              {profile.totals.images} images ({profile.totals.annotated_images} annotated), {profile.totals.annotations} annotations, {profile.totals.classes} classes · train{' '}
              {profile.splits.train?.images ?? 0} / valid {profile.splits.valid?.images ?? 0} / test {profile.splits.test?.images ?? 0} / unassigned {profile.splits.unassigned?.images ?? 0}
            </p>
          )}
          {chartConfigs.map((c) => (
            <ChartCanvas key={c.label} label={c.label} config={c.config} />
          ))}
          {profile.samples && (
            <p className="muted">
              {profile.samples.total} samples ({profile.samples.labelled} labelled)
            </p>
          )}
          {profile.samples && <SampleProfileTables samples={profile.samples} />}
        </div>
      )}
      {cleaning && (
        <CleaningDialog
          projectId={projectId}
          onClose={() => setCleaning(false)}
          onChanged={() => {
            load();
            onCleaned();
          }}
        />
      )}
    </section>
  );
}

/** Pick actions, preview exactly what changes, apply, and revert earlier runs. */
function CleaningDialog({ projectId, onClose, onChanged }: { projectId: number; onClose: () => void; onChanged: () => void }) {
  const [catalog, setCatalog] = useState<Action[]>([]);
  const [chosen, setChosen] = useState<Set<string>>(new Set());
  const [preview, setPreview] = useState<Preview | null>(null);
  const [runs, setRuns] = useState<Run[]>([]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [note, setNote] = useState<string | null>(null);

  const loadRuns = () => api.get<Run[]>(`/api/projects/${projectId}/cleaning/runs`).then(setRuns, (e) => setError((e as Error).message));
  useEffect(() => {
    // Actions needing the user's own parameters (class merges and renames) are left to the API.
    api.get<Action[]>('/api/cleaning/actions?modality=image').then((a) => setCatalog(a.filter((x) => !['merge_classes', 'rename_class'].includes(x.id))), (e) => setError((e as Error).message));
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
  const doPreview = () => run(async () => setPreview(await api.post<Preview>(`/api/projects/${projectId}/cleaning/preview`, { actions: actions() })));
  const doApply = () =>
    run(async () => {
      const res = await api.post<{ cleaning_run_id: number; summary: Record<string, number> }>(`/api/projects/${projectId}/cleaning`, { actions: actions(), preview_token: preview!.preview_token });
      setNote(`Run ${res.cleaning_run_id} applied: ${describe(res.summary)}`);
      setPreview(null);
      await loadRuns();
      onChanged();
    });
  const doRevert = (id: number) =>
    run(async () => {
      await api.post(`/api/cleaning-runs/${id}/revert`, {});
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
