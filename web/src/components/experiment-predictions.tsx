import { useEffect, useState } from 'react';
import { api } from '../api.js';
import type { BboxGeometry, LabelClass, ResponseOf } from '../types.js';

type Errors = ResponseOf<'/api/experiments/{id}/errors', 'get'>;
type Prediction = Errors['images'][number]['predictions'][number];

const PREDICTION_COLOUR = '#ff9800';

/**
 * The editor opened from an experiment's error browser (`?experiment=<id>&eval_split=<split>`; `split` is the grid's filter): the image with its ground
 * truth (solid, class colours) and the run's predictions (dashed, orange, with confidence) beside the editor, so the
 * two never mix. Nothing without `experiment` in the URL.
 */
export function ExperimentPredictions(props: { projectId: number; image: { id: number; filename: string; width: number; height: number }; classes: LabelClass[] }) {
  const query = new URLSearchParams(location.search);
  const experimentId = Number(query.get('experiment'));
  if (!experimentId) return null;
  return <RunPredictions {...props} experimentId={experimentId} split={query.get('eval_split') ?? 'valid'} />;
}

function RunPredictions({ projectId, image, experimentId, split, classes }: {
  projectId: number;
  image: { id: number; filename: string; width: number; height: number };
  experimentId: number;
  split: string;
  classes: LabelClass[];
}) {
  const [predictions, setPredictions] = useState<Prediction[] | null>(null);
  const [truth, setTruth] = useState<ResponseOf<'/api/images/{image_id}/annotations', 'get'>>([]);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setPredictions(null);
    api.get('/api/experiments/{id}/errors', { path: { id: experimentId }, query: { split: split as 'valid' | 'test', limit: 500 } }).then(
      (e) => setPredictions(e.images.find((i) => i.image_id === image.id)?.predictions ?? []),
      (e) => setError((e as Error).message),
    );
    api.get('/api/images/{image_id}/annotations', { path: { image_id: image.id } }).then(setTruth, () => setTruth([]));
  }, [experimentId, split, image.id]);
  const colour = (classId: number | null) => classes.find((c) => c.id === classId)?.color ?? '#2196f3';
  const stroke = Math.max(1, Math.max(image.width, image.height) / 300);
  return (
    <section className="experiment-predictions" data-testid="experiment-predictions">
      <h3>Run #{experimentId} ({split})</h3>
      {error && <p className="error small">{error}</p>}
      <p className="muted small">Solid: ground truth. <span style={{ color: PREDICTION_COLOUR }}>Dashed: predictions</span>{predictions ? ` (${predictions.length})` : ''}.</p>
      <svg viewBox={`0 0 ${image.width} ${image.height}`} style={{ width: '100%', background: '#222' }} aria-label="Ground truth and predictions">
        <image href={`/api/projects/${projectId}/images/file/${encodeURIComponent(image.filename)}`} width={image.width} height={image.height} />
        {truth.filter((a) => a.annotation_type === 'bbox').map((a, i) => {
          const g = a.geometry as BboxGeometry;
          return <rect key={`t${i}`} data-kind="truth" x={g.x} y={g.y} width={g.width} height={g.height} fill="none" stroke={colour(a.class_id)} strokeWidth={stroke} />;
        })}
        {(predictions ?? []).map((p, i) => (
          <g key={`p${i}`} data-kind="prediction">
            <rect x={p.bbox.x} y={p.bbox.y} width={p.bbox.width} height={p.bbox.height} fill="none" stroke={PREDICTION_COLOUR} strokeWidth={stroke} strokeDasharray={`${stroke * 4} ${stroke * 3}`} />
            <text x={p.bbox.x} y={Math.max(p.bbox.y - stroke, stroke * 8)} fill={PREDICTION_COLOUR} fontSize={stroke * 8}>{p.class_name} {p.confidence.toFixed(2)}</text>
          </g>
        ))}
      </svg>
    </section>
  );
}
