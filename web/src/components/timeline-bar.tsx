/** A point on the timeline (a track's keyframe): `at` from 0 (start) to 1 (end). */
export interface TimelineMark {
  key: string | number;
  at: number;
  title: string;
  className?: string;
}

/** A stretch of the timeline (a sample's time segment): `from` and `to` from 0 to 1. */
export interface TimelineSpan {
  key: string | number;
  from: number;
  to: number;
  label: string;
  color: string;
  title: string;
}

interface Props {
  /** The scrubber's position, from 0 to `max` (a frame index). */
  value: number;
  max: number;
  onSeek(value: number): void;
  label: string;
  marks?: readonly TimelineMark[];
  spans?: readonly TimelineSpan[];
  onSpanClick?(span: TimelineSpan): void;
}

/** Greedy lanes: each span takes the first lane whose last span ended before it starts, so overlapping ones stack. */
function lanesOf(spans: readonly TimelineSpan[]): Map<TimelineSpan, number> {
  const ends: number[] = [];
  const lanes = new Map<TimelineSpan, number>();
  for (const span of [...spans].sort((a, b) => a.from - b.from)) {
    let lane = ends.findIndex((end) => end <= span.from);
    if (lane < 0) lane = ends.push(0) - 1;
    ends[lane] = span.to;
    lanes.set(span, lane);
  }
  return lanes;
}

/**
 * The one timeline bar of video (issue 26): the scrubber over a strip that marks points (the image editor's track
 * keyframes) and stretches (the samples page's time segments, overlapping ones in lanes), both placed by fraction
 * of the video, so the editor's frames and a sample's seconds share one look and one behaviour.
 */
export function TimelineBar({ value, max, onSeek, label, marks = [], spans = [], onSpanClick }: Props) {
  const lanes = lanesOf(spans);
  const laneCount = Math.max(0, ...lanes.values()) + 1;
  const pct = (f: number) => `${Math.max(0, Math.min(1, f)) * 100}%`;
  return (
    <div className="timeline-bar">
      <div className={`timeline-track-bar${spans.length > 0 ? ' with-spans' : ''}`} style={spans.length > 0 ? { height: laneCount * 12 } : undefined} data-testid="timeline-strip">
        {spans.map((s) => (
          <span
            key={s.key}
            className="timeline-span"
            data-testid="timeline-span"
            data-label={s.label}
            style={{ left: pct(s.from), width: pct(s.to - s.from), top: lanes.get(s)! * 12, background: s.color }}
            title={s.title}
            onClick={() => onSpanClick?.(s)}
          />
        ))}
        {marks.map((m) => (
          <span key={m.key} className={`keyframe-tick${m.className ? ` ${m.className}` : ''}`} style={{ left: pct(m.at) }} title={m.title} />
        ))}
      </div>
      <input type="range" className="scrubber" min={0} max={Math.max(0, max)} value={Math.max(0, Math.min(value, max))} onChange={(e) => onSeek(Number(e.target.value))} aria-label={label} />
    </div>
  );
}
