import type { QcAnnotator } from '../../types.js';

/**
 * How the Team quality page writes the API's figures (GET …/quality-control/annotators), one place so the table,
 * the charts and the browser test agree: scores to three decimals, rates as percentages, "—" where there is none.
 */
export const score = (n: number | null): string => (n === null ? '—' : n.toFixed(3));
export const percent = (n: number | null): string => (n === null ? '—' : `${(n * 100).toFixed(1)}%`);
export const seconds = (n: number | null): string => (n === null ? '—' : `${n.toFixed(1)} s`);
export const perHour = (n: number | null): string => (n === null ? '—' : n.toFixed(1));

export const annotatorName = (a: { email: string; display_name: string }): string => a.display_name || a.email;

/** The table's columns: a key (the cell's data-col), a heading, and the figure as written. */
export const COLUMNS: { key: string; label: string; title: string; value: (a: QcAnnotator) => string }[] = [
  { key: 'gt_images', label: 'GT images', title: 'Ground-truth images they submitted', value: (a) => String(a.ground_truth.images) },
  { key: 'precision', label: 'Precision', title: 'Ground truth: matched shapes / shapes drawn (IoU ≥ 0.5, same class)', value: (a) => score(a.ground_truth.precision) },
  { key: 'recall', label: 'Recall', title: 'Ground truth: matched shapes / reference shapes', value: (a) => score(a.ground_truth.recall) },
  { key: 'f1', label: 'F1', title: 'Ground truth F1', value: (a) => score(a.ground_truth.f1) },
  { key: 'mean_iou', label: 'Mean IoU', title: 'Mean IoU of the matched shapes', value: (a) => score(a.ground_truth.mean_iou) },
  { key: 'class_accuracy', label: 'Class acc.', title: 'Share of location-matched shapes given the right class', value: (a) => score(a.ground_truth.class_accuracy) },
  { key: 'agreement', label: 'Agreement', title: 'Mean F1 against the other annotators of the same images', value: (a) => score(a.agreement) },
  { key: 'tasks_submitted', label: 'Submitted', title: 'Tasks submitted', value: (a) => String(a.tasks_submitted) },
  { key: 'seconds_per_image', label: 'Active time / image', title: 'Active editing time per submitted image (gaps between saves, each up to 120 s)', value: (a) => seconds(a.seconds_per_image) },
  { key: 'objects_per_hour', label: 'Objects / hour', title: 'Objects drawn per hour of active time', value: (a) => perHour(a.objects_per_hour) },
  { key: 'rejection_rate', label: 'Rejected', title: 'Rejected / decided reviews of their submissions', value: (a) => percent(a.rejection_rate) },
  { key: 'rework_rate', label: 'Rework', title: 'Changes requested / decided reviews', value: (a) => percent(a.rework_rate) },
];

/** A colour per annotator, the same on every chart and overlay of the pages. */
const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf'];
export const colourOf = (index: number): string => PALETTE[index % PALETTE.length];
