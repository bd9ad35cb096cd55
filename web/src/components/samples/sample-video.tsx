import { useEffect, useRef, useState } from 'react';
import type { TimeSegment } from '../../types.js';
import { TimelineBar } from '../timeline-bar.js';
import { SegmentList } from './segment-list.js';
import { SampleLabels } from './sample-labels.js';
import { classOfKey, colorOf, isTyping, pickedLabel, type SampleViewProps } from './sample-view.js';

/**
 * A video clip with frame-accurate seeking: `,` and `.` step one frame (at the container's frame rate), `[` and `]`
 * mark a segment's start and end, 1–9 labels the marked segment (or the whole clip when nothing is marked).
 */
export function SampleVideo(props: SampleViewProps) {
  const { sample, classes, readOnly, multiLabel, save } = props;
  const video = useRef<HTMLVideoElement>(null);
  const fps: number = sample.data.fps || 25;
  const [frame, setFrame] = useState(0);
  const [mark, setMark] = useState<{ start?: number; end?: number }>({});
  const segments = (sample.spans ?? []) as TimeSegment[];

  // The middle of a frame: seeking there shows that frame whatever the decoder's rounding.
  const seekFrame = (n: number) => {
    const v = video.current;
    if (!v) return;
    const last = Math.max(0, Math.floor((v.duration || sample.data.duration_s || 0) * fps) - 1);
    const target = Math.min(Math.max(0, n), last);
    v.pause();
    v.currentTime = (target + 0.5) / fps;
    setFrame(target);
  };
  const current = () => Math.floor((video.current?.currentTime ?? 0) * fps);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (isTyping(e) || e.ctrlKey || e.metaKey || e.altKey) return;
      if (e.key === '.') seekFrame(current() + 1);
      else if (e.key === ',') seekFrame(current() - 1);
      else if (e.key === ' ') void (video.current?.paused ? video.current.play() : video.current?.pause());
      else if (e.key === '[') setMark({ start: current() / fps });
      else if (e.key === ']') setMark((m) => ({ ...m, end: (current() + 1) / fps }));
      else {
        const cls = classOfKey(classes, e.key);
        if (!cls || readOnly) return;
        if (mark.start !== undefined && mark.end !== undefined && mark.end > mark.start) {
          save({ spans: [...segments, { start_s: round(mark.start), end_s: round(mark.end), label: cls.name }].sort((a, b) => a.start_s - b.start_s) });
          setMark({});
        } else save({ label: pickedLabel(sample, cls.name, multiLabel) });
      }
      e.preventDefault();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  });

  const duration: number = sample.data.duration_s || video.current?.duration || 0;
  // The scrubber runs over the frame count, so frame n sits at n / fps of the duration, under the segments' times.
  const frameCount = Math.max(0, Math.floor(duration * fps));
  const spans = duration > 0 ? segments.map((s, i) => ({
    key: i, from: s.start_s / duration, to: s.end_s / duration, label: s.label, color: colorOf(classes, s.label),
    title: `${s.label}: ${s.start_s.toFixed(3)}–${s.end_s.toFixed(3)} s`,
  })) : [];
  return (
    <div className="sample-video">
      <SampleLabels {...props} empty="No clip label — press 1–9">
        <span className="muted"> {sample.data.duration_s ?? '?'} s · {fps} fps</span>
      </SampleLabels>
      <video ref={video} key={sample.id} src={sample.data.file_url} controls preload="auto" className="sample-player" onTimeUpdate={() => setFrame(current())} />
      <div className="sample-timeline" data-testid="sample-timeline">
        <TimelineBar value={frame} max={frameCount} onSeek={seekFrame} label="Frame" spans={spans} onSpanClick={(span) => seekFrame(Math.floor(segments[span.key as number].start_s * fps))} />
      </div>
      <p className="muted" data-testid="frame">
        Frame {frame} · {(frame / fps).toFixed(3)} s
        {mark.start !== undefined && ` · segment from ${mark.start.toFixed(3)} s`}
        {mark.end !== undefined && ` to ${mark.end.toFixed(3)} s — press 1–9`}
      </p>
      <SegmentList segments={segments} classes={classes} readOnly={readOnly} onSeek={(s) => seekFrame(Math.floor(s.start_s * fps))} onRemove={(s) => save({ spans: segments.filter((x) => x !== s) })} />
    </div>
  );
}

const round = (s: number) => Math.round(s * 1000) / 1000;
