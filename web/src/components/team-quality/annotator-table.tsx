import type { LabelClass, QcAnnotator } from '../../types.js';
import { annotatorName, COLUMNS, score } from './figures.js';

/** One row per annotator: ground-truth scores, agreement with the others, pace, rejection and rework. */
export function AnnotatorTable({ rows }: { rows: QcAnnotator[] }) {
  if (rows.length === 0) return <p className="muted">No annotator has submitted a task yet.</p>;
  return (
    <table className="list quality-table" data-testid="annotator-table">
      <thead>
        <tr>
          <th>Annotator</th>
          {COLUMNS.map((c) => (
            <th key={c.key} title={c.title}>
              {c.label}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((a) => (
          <tr key={a.user_id} data-user={a.user_id}>
            <td data-col="name" title={a.email}>
              {annotatorName(a)}
            </td>
            {COLUMNS.map((c) => (
              <td key={c.key} data-col={c.key}>
                {c.value(a)}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Ground-truth matches per annotator and class: true and false positives, misses, F1. */
export function PerClassTable({ rows, classes }: { rows: QcAnnotator[]; classes: LabelClass[] }) {
  const names = new Map(classes.map((c) => [c.id, c.name]));
  const lines = rows.flatMap((a) => a.per_class.map((c) => ({ a, c })));
  if (lines.length === 0) return <p className="muted">No ground-truth answers scored yet.</p>;
  return (
    <table className="list quality-table" data-testid="per-class-table">
      <thead>
        <tr>
          <th>Annotator</th>
          <th>Class</th>
          <th title="Matched shapes">TP</th>
          <th title="Drawn, not in the ground truth">FP</th>
          <th title="In the ground truth, missed">FN</th>
          <th>F1</th>
        </tr>
      </thead>
      <tbody>
        {lines.map(({ a, c }) => (
          <tr key={`${a.user_id}:${c.class_id}`} data-user={a.user_id} data-class={c.class_id}>
            <td>{annotatorName(a)}</td>
            <td>{names.get(c.class_id) ?? `class ${c.class_id}`}</td>
            <td>{c.tp}</td>
            <td>{c.fp}</td>
            <td>{c.fn}</td>
            <td data-col="f1">{score(c.f1)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
