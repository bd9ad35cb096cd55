import type { ReactNode } from 'react';
import { colorOf, labelsOf, pickedLabel, type SampleViewProps } from './sample-view.js';

/**
 * The classes of a whole sample. Single-label: chips of its class (1–9 sets it). Multi-label project: a checkbox per
 * class, ticked by a click or toggled by its key 1–9 (pickedLabel), so that one sample can hold several classes.
 */
export function SampleLabels({ sample, classes, readOnly, multiLabel, save, empty, children }: SampleViewProps & { empty: string; children?: ReactNode }) {
  const labels = labelsOf(sample);
  if (multiLabel) {
    return (
      <fieldset className="sample-labels" aria-label="Sample classes" data-testid="sample-labels" disabled={readOnly}>
        {classes.map((c, i) => (
          <label key={c.id} className="chip" style={{ background: colorOf(classes, c.name) }}>
            <input type="checkbox" checked={labels.includes(c.name)} onChange={() => save({ label: pickedLabel(sample, c.name, true) })} /> {i < 9 ? `${i + 1} ` : ''}{c.name}
          </label>
        ))}
        {children}
      </fieldset>
    );
  }
  return (
    <div className="sample-labels" aria-label="Sample label" data-testid="sample-labels">
      {labels.length === 0 ? <span className="muted">{empty}</span> : labels.map((l) => <span key={l} className="chip" style={{ background: colorOf(classes, l) }}>{l}</span>)}
      {children}
    </div>
  );
}
