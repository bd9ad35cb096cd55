import { useEffect, useState } from 'react';
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
import type { ResponseOf } from '../types.js';
import { ChartCanvas } from './chart-canvas.js';
import { CleaningDialog } from './cleaning-dialog.js';
import { ErrorBanner } from './layout.js';
import { ReadinessWhy } from './readiness-why.js';
import { SPLIT_NAMES } from '../vocabulary.js';

Chart.register(BarController, BarElement, BubbleController, CategoryScale, LinearScale, PointElement, Tooltip, Legend);

type Report = ResponseOf<'/api/projects/{id}/quality', 'get'>;
type CheckResult = Report['checks'][number];
type Profile = ResponseOf<'/api/projects/{id}/profile', 'get'>;
type SampleProfile = NonNullable<Profile['samples']>;
type Readiness = ResponseOf<'/api/projects/{id}/readiness', 'post'>;

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
                <td>{[...SPLIT_NAMES, 'unassigned' as const].map((k) => m.splits[k] ?? 0).join(' / ')}</td>
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
  /** The cleaning dialog, open with these actions chosen (a readiness fix opens it on its action). */
  const [cleaning, setCleaning] = useState<string[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [chartConfigs, setChartConfigs] = useState<{ label: string; config: ChartConfiguration }[]>([]);
  const [open, setOpen] = useState<string | null>(null);

  const load = () => {
    setError(null);
    api.get('/api/projects/{id}/quality', { path: { id: projectId } }).then(setReport, (e) => setError((e as Error).message));
    api.get('/api/projects/{id}/profile', { path: { id: projectId } }).then(
      (p) => {
        setProfile(p);
        // The image charts for projects with images (or nothing yet); a chart of the sample classes beside them.
        const images = p.totals.images > 0 || !p.samples ? charts(p) : [];
        setChartConfigs(p.samples && p.samples.labels.length > 0 ? [...images, sampleChart(p.samples)] : images);
      },
      (e) => setError((e as Error).message),
    );
    api.post('/api/projects/{id}/readiness', { path: { id: projectId } }).then(setReadiness, (e) => setError((e as Error).message));
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
        <button className="primary" onClick={() => setCleaning([])}>
          Clean…
        </button>
      </div>
      {readiness && <ReadinessWhy projectId={projectId} readiness={readiness} onClean={setCleaning} />}
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
          initial={cleaning}
          onClose={() => setCleaning(null)}
          onChanged={() => {
            load();
            onCleaned();
          }}
        />
      )}
    </section>
  );
}
