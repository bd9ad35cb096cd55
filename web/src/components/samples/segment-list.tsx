import type { LabelClass, TimeSegment } from '../../types.js';
import { colorOf } from './sample-view.js';

/** The time segments of a clip, each with a seek and a remove button. */
export function SegmentList({ segments, classes, readOnly, onSeek, onRemove }: {
  segments: TimeSegment[];
  classes: LabelClass[];
  readOnly: boolean;
  onSeek(s: TimeSegment): void;
  onRemove(s: TimeSegment): void;
}) {
  if (segments.length === 0) return <p className="muted">No segments yet.</p>;
  return (
    <ul className="span-list" aria-label="Segments">
      {segments.map((s, i) => (
        <li key={i}>
          <span className="chip" style={{ background: colorOf(classes, s.label) }}>{s.label}</span>{' '}
          <button className="ghost" onClick={() => onSeek(s)}>{s.start_s.toFixed(3)}–{s.end_s.toFixed(3)} s</button>
          {!readOnly && <button className="ghost" aria-label={`Remove segment ${i + 1}`} onClick={() => onRemove(s)}>✕</button>}
        </li>
      ))}
    </ul>
  );
}
