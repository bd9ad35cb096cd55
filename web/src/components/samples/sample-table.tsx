import { memo, useEffect, useMemo, useRef, useState } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import { api } from '../../api.js';
import type { LabelClass, Sample, SamplePatch } from '../../types.js';

const ROW_HEIGHT = 30;

/**
 * Tabular samples as a virtualised table (@tanstack/react-virtual: only the rows in view are in the DOM, so 100,000
 * rows scroll smoothly). The target is the last column and is editable: a class for classification, a number for
 * regression. `onNearEnd` asks for more rows while scrolling toward the end of what is loaded.
 */
export function SampleTable({ rows, total, classes, readOnly, onChange, onNearEnd, focusId = null, regression }: {
  rows: Sample[];
  total: number;
  classes: LabelClass[];
  readOnly: boolean;
  onChange(sample: Sample, patch: SamplePatch): void;
  onNearEnd(): void;
  /** A row to scroll to and mark once it is loaded (the Health tab's links). */
  focusId?: number | null;
  /** Whether the target is a number (see useRegression). */
  regression: boolean;
}) {
  const scroller = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({ count: rows.length, getScrollElement: () => scroller.current, estimateSize: () => ROW_HEIGHT, overscan: 8 });
  const columns = useMemo(() => (rows.length > 0 ? Object.keys(rows[0].data.row ?? {}) : []), [rows.length > 0 ? rows[0] : null]);
  const items = virtualizer.getVirtualItems();
  const lastShown = items.length > 0 ? items[items.length - 1].index : -1;
  useEffect(() => {
    if (lastShown >= rows.length - 50 && rows.length < total) onNearEnd();
  }, [lastShown, rows.length, total]);
  const template = `70px repeat(${columns.length}, minmax(90px, 1fr)) 70px 150px`;
  const focusIndex = focusId === null ? -1 : rows.findIndex((r) => r.id === focusId);
  useEffect(() => {
    if (focusIndex >= 0) virtualizer.scrollToIndex(focusIndex, { align: 'center' });
  }, [focusIndex]);

  return (
    <div className="sample-table" role="table" aria-label="Tabular samples" aria-rowcount={total}>
      <div className="sample-table-head" role="row" style={{ gridTemplateColumns: template }}>
        <span role="columnheader" title="The sample's id in Versa">#</span>
        {columns.map((c) => <span role="columnheader" key={c}>{c}</span>)}
        <span role="columnheader">split</span>
        <span role="columnheader">target</span>
      </div>
      <div ref={scroller} className="sample-table-body" data-testid="sample-table-body">
        <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
          {items.map((item) => (
            // Keyed by slot, not by sample: a fast scroll re-fills the rows already in the DOM instead of making new ones.
            <Row key={item.index % SLOTS} index={item.index} start={item.start} sample={rows[item.index]} columns={columns} template={template}
              regression={regression} classes={classes} readOnly={readOnly} onChange={onChange} focused={item.index === focusIndex} />
          ))}
        </div>
      </div>
    </div>
  );
}

/**
 * Whether the project's tabular target is a number (regression), as the server says (GET …/samples/target: the
 * import's declaration, else all of the project's rows), never guessed from the rows a page has loaded; undefined
 * until known, or while `tabular` is false. `refresh` asks again when it changes (after an import).
 */
export function useRegression(projectId: number, tabular: boolean, onError: (message: string) => void, refresh?: unknown): boolean | undefined {
  const [regression, setRegression] = useState<boolean>();
  useEffect(() => {
    if (tabular) api.get('/api/projects/{id}/samples/target', { path: { id: projectId } }).then((t) => setRegression(t.task === 'regression'), (e) => onError((e as Error).message));
  }, [projectId, tabular, refresh]);
  return regression;
}

/** Row slots: more than the rows a screen and its overscan ever show, so that slots in view never collide. */
const SLOTS = 256;

const Row = memo(function Row({ index, start, sample, columns, template, regression, classes, readOnly, onChange, focused }: {
  index: number;
  start: number;
  sample: Sample;
  columns: string[];
  template: string;
  regression: boolean;
  classes: LabelClass[];
  readOnly: boolean;
  onChange(sample: Sample, patch: SamplePatch): void;
  focused: boolean;
}) {
  return (
    <div role="row" aria-rowindex={index + 1} aria-current={focused || undefined} className={`sample-table-row${focused ? ' focused' : ''}`} style={{ gridTemplateColumns: template, transform: `translateY(${start}px)`, height: ROW_HEIGHT }}>
      <span role="cell">{sample.id}</span>
      {columns.map((c) => <span role="cell" key={c}>{formatCell(sample.data.row?.[c])}</span>)}
      <span role="cell">{sample.split ?? '—'}</span>
      <span role="cell">
        {regression ? (
          // Keyed by sample: the uncontrolled input starts again from the new sample's value when the slot is re-filled.
          <input key={sample.id} type="number" step="any" aria-label={`Target of sample ${sample.id}`} disabled={readOnly} defaultValue={typeof sample.value === 'number' ? sample.value : ''}
            onBlur={(e) => {
              const value = e.target.value === '' ? null : Number(e.target.value);
              if (value !== sample.value) onChange(sample, { value });
            }} />
        ) : (
          <select aria-label={`Target of sample ${sample.id}`} disabled={readOnly} value={typeof sample.label === 'string' ? sample.label : ''} onChange={(e) => onChange(sample, { label: e.target.value || null })}>
            <option value="">—</option>
            {classes.map((c) => <option key={c.id} value={c.name}>{c.name}</option>)}
          </select>
        )}
      </span>
    </div>
  );
});

function formatCell(value: unknown): string {
  if (value === null || value === undefined) return '∅';
  return String(value);
}
