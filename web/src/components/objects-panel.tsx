import { useRef, useState, type KeyboardEvent } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import type { EditorController } from '../editor/editor-controller.js';
import type { Annotation, LabelClass } from '../types.js';
import { AttributesEditor } from './attributes-editor.js';

/** Two lines a row: swatch, what the shape is and where it came from; below, its class and the hide / lock / delete buttons. */
const ROW = 46;

/**
 * Every shape of the open image, virtualised (thousands of rows cost a screenful): class, source, confidence;
 * select (kept in sync with the canvas), hide, lock, delete and change class; filter by class; ↑/↓ move the
 * selection, Delete deletes, H hides, L locks. Below the list, the selected shape's attributes (its class's specs).
 */
export function ObjectsPanel({ controller, classes, selectedKey, colors, viewOnly = false }: {
  controller: EditorController | null;
  classes: LabelClass[];
  selectedKey: number | null;
  colors: Map<number, string>;
  /** The role cannot annotate: no class picker and no Delete (hide and lock only change the view, they stay). */
  viewOnly?: boolean;
}) {
  const [classFilter, setClassFilter] = useState('');
  const scroller = useRef<HTMLDivElement>(null);
  const items: [number, Annotation][] = controller?.store ? [...controller.store.items] : [];
  const rows = classFilter ? items.filter(([, a]) => String(a.class_id) === classFilter) : items;
  const virtual = useVirtualizer({ count: rows.length, getScrollElement: () => scroller.current, estimateSize: () => ROW, overscan: 10 });
  const names = new Map(classes.map((c) => [c.id, c.name]));
  const at = rows.findIndex(([k]) => k === selectedKey);

  const onKey = (e: KeyboardEvent) => {
    if (!controller || rows.length === 0) return;
    const move = (i: number) => {
      const next = Math.max(0, Math.min(rows.length - 1, i));
      controller.selectKey(rows[next][0]);
      virtual.scrollToIndex(next);
    };
    if (e.key === 'ArrowDown') move(at + 1);
    else if (e.key === 'ArrowUp') move(at - 1);
    else if (e.key === 'Delete' && selectedKey !== null && !viewOnly) controller.deleteKey(selectedKey);
    else if ((e.key === 'h' || e.key === 'H') && selectedKey !== null) controller.toggleHidden(selectedKey);
    else if ((e.key === 'l' || e.key === 'L') && selectedKey !== null) controller.toggleLocked(selectedKey);
    else return;
    e.preventDefault();
    e.stopPropagation();
  };

  return (
    <section className="objects-panel" aria-label="Objects" data-testid="objects-panel">
      <div className="objects-head">
        <b>Objects</b> <span className="muted small">{rows.length}{classFilter ? ` of ${items.length}` : ''}</span>
        <select value={classFilter} onChange={(e) => setClassFilter(e.target.value)} aria-label="Objects class filter">
          <option value="">All classes</option>
          {classes.map((c) => (
            <option key={c.id} value={c.id}>
              {c.name}
            </option>
          ))}
        </select>
      </div>
      <div ref={scroller} className="objects-list" tabIndex={0} onKeyDown={onKey} role="listbox" aria-label="Objects list" aria-activedescendant={selectedKey !== null ? `object-${selectedKey}` : undefined}>
        <div style={{ height: virtual.getTotalSize(), position: 'relative' }}>
          {virtual.getVirtualItems().map((v) => {
            const [key, a] = rows[v.index];
            const hidden = controller?.hidden.has(key) ?? false;
            const locked = controller?.locked.has(key) ?? false;
            return (
              <div
                key={key}
                id={`object-${key}`}
                role="option"
                aria-selected={key === selectedKey}
                data-object-key={key}
                className={`object-row${key === selectedKey ? ' selected' : ''}${hidden ? ' hidden-shape' : ''}`}
                style={{ position: 'absolute', top: 0, left: 0, right: 0, height: ROW, transform: `translateY(${v.start}px)` }}
                onClick={() => controller?.selectKey(key)}
              >
                <span className="swatch" style={{ background: colors.get(a.class_id) ?? '#999' }} />
                {viewOnly ? (
                  <span className="object-class">{names.get(a.class_id) ?? '?'}</span>
                ) : (
                  <select
                    value={a.class_id}
                    aria-label={`Class of object ${v.index + 1}`}
                    onClick={(e) => e.stopPropagation()}
                    onChange={(e) => controller?.changeClass(key, Number(e.target.value))}
                    disabled={locked}
                    title={locked ? 'Locked' : undefined}
                  >
                    {classes.map((c) => (
                      <option key={c.id} value={c.id}>
                        {names.get(c.id)}
                      </option>
                    ))}
                  </select>
                )}
                {(() => {
                  const info = `${a.annotation_type} · ${a.source === 'manual' ? 'drawn' : a.source}${a.confidence != null && a.source !== 'manual' ? ` ${Math.round(a.confidence * 100)}%` : ''}${a.status === 'suggested' ? ' · suggestion' : ''}`;
                  return (
                    <span className={`object-info muted${a.status === 'suggested' ? ' suggested' : ''}`} title={info}>
                      {info}
                    </span>
                  );
                })()}
                <button className="ghost small" aria-label={hidden ? 'Show' : 'Hide'} title={hidden ? 'Show (H)' : 'Hide (H)'} onClick={(e) => (e.stopPropagation(), controller?.toggleHidden(key))}>
                  {hidden ? '◌' : '●'}
                </button>
                <button className="ghost small" aria-label={locked ? 'Unlock' : 'Lock'} title={locked ? 'Unlock (L)' : 'Lock (L)'} onClick={(e) => (e.stopPropagation(), controller?.toggleLocked(key))}>
                  {locked ? '🔒' : '🔓'}
                </button>
                {!viewOnly && (
                  <button className="ghost small" aria-label="Delete object" title="Delete" disabled={locked} onClick={(e) => (e.stopPropagation(), controller?.deleteKey(key))}>
                    ✕
                  </button>
                )}
              </div>
            );
          })}
        </div>
      </div>
      {(() => {
        const selected = selectedKey !== null ? controller?.store?.items.get(selectedKey) : undefined;
        const specs = selected ? (classes.find((c) => c.id === selected.class_id)?.attributes ?? []) : [];
        if (!selected || !controller || specs.length === 0) return null;
        return (
          <AttributesEditor
            key={selectedKey}
            specs={specs}
            values={selected.attributes}
            disabled={controller.locked.has(selectedKey!) || controller.state().readOnly}
            onChange={(values) => controller.setAttributes(selectedKey!, values)}
          />
        );
      })()}
    </section>
  );
}
