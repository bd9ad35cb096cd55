import { useMemo } from 'react';
import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, LineController, LineElement, PointElement, Tooltip, type ChartConfiguration } from 'chart.js';
import type { LabelClass, QcAnnotator } from '../../types.js';
import { ChartCanvas } from '../chart-canvas.js';
import { annotatorName, colourOf } from './figures.js';

Chart.register(BarController, BarElement, LineController, LineElement, PointElement, CategoryScale, LinearScale, Tooltip, Legend);

const unitScale = { y: { min: 0, max: 1 } };

function perAnnotator(rows: QcAnnotator[]): ChartConfiguration {
  return {
    type: 'bar',
    data: {
      labels: rows.map(annotatorName),
      datasets: [
        { label: 'Ground-truth F1', data: rows.map((a) => a.ground_truth.f1), backgroundColor: '#1f77b4' },
        { label: 'Mean IoU', data: rows.map((a) => a.ground_truth.mean_iou), backgroundColor: '#2ca02c' },
        { label: 'Agreement', data: rows.map((a) => a.agreement), backgroundColor: '#ff7f0e' },
      ],
    },
    options: { animation: false, scales: unitScale },
  };
}

function perClass(rows: QcAnnotator[], classes: LabelClass[]): ChartConfiguration {
  const ids = [...new Set(rows.flatMap((a) => a.per_class.map((c) => c.class_id)))].sort((x, y) => x - y);
  const names = new Map(classes.map((c) => [c.id, c.name]));
  return {
    type: 'bar',
    data: {
      labels: ids.map((id) => names.get(id) ?? `class ${id}`),
      datasets: rows.map((a, i) => ({ label: annotatorName(a), data: ids.map((id) => a.per_class.find((c) => c.class_id === id)?.f1 ?? null), backgroundColor: colourOf(i) })),
    },
    options: { animation: false, scales: unitScale },
  };
}

function overTime(rows: QcAnnotator[]): ChartConfiguration {
  const days = [...new Set(rows.flatMap((a) => a.over_time.map((d) => d.day)))].sort();
  return {
    type: 'line',
    data: {
      labels: days,
      datasets: rows.map((a, i) => ({ label: annotatorName(a), data: days.map((day) => a.over_time.find((d) => d.day === day)?.f1 ?? null), borderColor: colourOf(i), backgroundColor: colourOf(i), spanGaps: true })),
    },
    options: { animation: false, scales: unitScale },
  };
}

/** The analytics as charts: per annotator, per class (ground-truth F1) and ground-truth F1 by day. */
export function QualityCharts({ rows, classes }: { rows: QcAnnotator[]; classes: LabelClass[] }) {
  const charts = useMemo(
    () => [
      { label: 'Per annotator: ground-truth F1, mean IoU, agreement', config: perAnnotator(rows) },
      { label: 'Per class: ground-truth F1 by annotator', config: perClass(rows, classes) },
      { label: 'Over time: ground-truth F1 by day', config: overTime(rows) },
    ],
    [rows, classes],
  );
  if (rows.length === 0) return null;
  return (
    <div className="health-charts" data-testid="quality-charts">
      {charts.map((c) => (
        <ChartCanvas key={c.label} label={c.label} config={c.config} />
      ))}
    </div>
  );
}
