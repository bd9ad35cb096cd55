import { Chart, registerables, type ChartConfiguration } from 'chart.js';
import { useEffect, useRef, useState } from 'react';
import { api } from '../api.js';
import { Curves, fmt } from '../components/training-panel.js';
import { Link } from '../router.js';
import type { ResponseOf } from '../types.js';

Chart.register(...registerables);

type Experiment = ResponseOf<'/api/experiments/{id}', 'get'>;
type Errors = ResponseOf<'/api/experiments/{id}/errors', 'get'>;
type SplitEvaluation = NonNullable<Experiment['analysis']>[string];
type Kind = 'false_positive' | 'false_negative' | 'confusion' | '';


function series(history: Record<string, unknown>[], names: string[]) {
  return names
    .filter((n) => history.some((h) => typeof h[n] === 'number'))
    .map((n) => ({ label: n, points: history.filter((h) => typeof h[n] === 'number').map((h) => ({ x: Number(h.epoch), y: h[n] as number })) }));
}

/** Precision against recall per class (the 101 interpolated points its AP50 averages). */
function PrCurves({ split }: { split: SplitEvaluation }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    if (!canvas.current) return;
    const config: ChartConfiguration<'line', { x: number; y: number }[]> = {
      type: 'line',
      data: {
        datasets: split.per_class.filter((c) => c.pr_curve).map((c) => ({
          label: c.name, data: c.pr_curve!.map((p, i) => ({ x: i / 100, y: p })), pointRadius: 0, borderWidth: 2,
        })),
      },
      options: {
        animation: false, responsive: true, parsing: false,
        plugins: { title: { display: true, text: 'Precision–recall (IoU 0.5)' } },
        scales: { x: { type: 'linear', min: 0, max: 1, title: { display: true, text: 'recall' } }, y: { min: 0, max: 1, title: { display: true, text: 'precision' } } },
      },
    };
    const chart = new Chart(canvas.current, config);
    return () => chart.destroy();
  }, [split]);
  return <canvas ref={canvas} aria-label="Precision–recall curves" data-testid="pr-curves" />;
}

/** One experiment: curves per epoch, per-class table, PR curves, confusion matrix with background, error browser. */
export default function ExperimentPage({ projectId, experimentId }: { projectId: number; experimentId: number }) {
  const [experiment, setExperiment] = useState<Experiment | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [split, setSplit] = useState<'valid' | 'test'>('valid');
  const [kind, setKind] = useState<Kind>('');
  const [errors, setErrors] = useState<Errors | null>(null);

  useEffect(() => {
    api.get('/api/experiments/{id}', { path: { id: experimentId } }).then((e) => {
      setExperiment(e);
      if (e.analysis && !e.analysis.valid && e.analysis.test) setSplit('test');
    }, (e) => setError((e as Error).message));
  }, [experimentId]);
  useEffect(() => {
    if (!experiment?.analysis) return;
    api.get('/api/experiments/{id}/errors', { path: { id: experimentId }, query: { split, limit: 100, kind: kind || undefined } }).then(setErrors, (e) => setError((e as Error).message));
  }, [experiment, split, kind]);

  if (error) return <div className="page"><p className="error">{error}</p></div>;
  if (!experiment) return <div className="page">Loading experiment…</div>;
  const history = experiment.history;
  const evaluation = experiment.analysis?.[split] ?? null;
  const labels = evaluation?.confusion.labels ?? [];
  return (
    <div className="page experiment-page">
      <p><Link href={`/projects/${projectId}`}>← project</Link></p>
      <h2>#{experiment.id} {experiment.name}</h2>
      <p className="muted small">{experiment.adapter} · {experiment.status} · {Object.entries(experiment.metrics).map(([k, v]) => `${k} ${fmt(v)}`).join(' · ')}</p>
      <div className="charts">
        <Curves title="Losses" series={series(history, ['train_loss', 'val_loss'])} />
        <Curves title="Validation" series={series(history, ['map50', 'map50_95', 'precision', 'recall', 'accuracy'])} />
      </div>
      {experiment.analysis ? (
        <>
          <label>Split{' '}
            <select value={split} onChange={(e) => setSplit(e.target.value as 'valid' | 'test')} aria-label="Split">
              {Object.keys(experiment.analysis).map((s) => <option key={s}>{s}</option>)}
            </select>
          </label>
          {evaluation && (
            <>
              <h3>Per class</h3>
              <table className="per-class" data-testid="per-class">
                <thead><tr><th>class</th><th>instances</th><th>AP50</th><th>AP50-95</th><th>precision</th><th>recall</th><th>best F1</th><th>F1 threshold</th></tr></thead>
                <tbody>
                  {evaluation.per_class.map((c) => (
                    <tr key={c.class_id}><td>{c.name}</td><td>{c.instances}</td><td>{fmt(c.ap50)}</td><td>{fmt(c.ap50_95)}</td><td>{fmt(c.precision)}</td><td>{fmt(c.recall)}</td><td>{fmt(c.f1)}</td><td>{fmt(c.conf_threshold)}</td></tr>
                  ))}
                </tbody>
              </table>
              <div className="charts"><PrCurves split={evaluation} /></div>
              <h3>Confusion matrix</h3>
              <p className="muted small">Rows: true class; columns: predicted, each class at its F1 threshold. Background row: false positives; background column: missed objects.</p>
              <table className="confusion" data-testid="confusion">
                <thead><tr><th />{labels.map((l) => <th key={l}>{l}</th>)}</tr></thead>
                <tbody>
                  {evaluation.confusion.matrix.map((row, i) => (
                    <tr key={i}><th>{labels[i]}</th>{row.map((n, j) => <td key={j} style={{ background: i === j ? '#e8f5e9' : n ? '#ffebee' : undefined }}>{n}</td>)}</tr>
                  ))}
                </tbody>
              </table>
            </>
          )}
          <h3>Errors</h3>
          <label>Kind{' '}
            <select value={kind} onChange={(e) => setKind(e.target.value as Kind)} aria-label="Error kind">
              <option value="">all errors</option>
              <option value="false_positive">false positives</option>
              <option value="false_negative">false negatives</option>
              <option value="confusion">class confusions</option>
            </select>
          </label>
          {errors && (
            <table className="errors" data-testid="errors">
              <thead><tr><th>image</th><th>false positives</th><th>false negatives</th><th>confusions</th><th /></tr></thead>
              <tbody>
                {errors.images.map((image) => (
                  <tr key={image.version_image_id}>
                    <td>{image.image_id}</td><td>{image.false_positives}</td><td>{image.false_negatives}</td><td>{image.confusions}</td>
                    <td><Link href={`/projects/${projectId}/annotate?image=${image.image_id}&experiment=${experimentId}&eval_split=${split}`}>Open in editor</Link></td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {errors && <p className="muted small">{errors.total} images with such errors{errors.total > errors.images.length ? `, the first ${errors.images.length} shown` : ''}.</p>}
        </>
      ) : (
        <p className="muted">No per-class evaluation: only finished versa-detect runs record one.</p>
      )}
    </div>
  );
}
