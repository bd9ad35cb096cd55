import { useEffect, useRef, useState } from 'react';
import WaveSurfer from 'wavesurfer.js';
import RegionsPlugin from 'wavesurfer.js/dist/plugins/regions.esm.js';
import type { TimeSegment } from '../../types.js';
import { SegmentList } from './segment-list.js';
import { SampleLabels } from './sample-labels.js';
import { classOfKey, colorOf, isTyping, pickedLabel, type SampleViewProps } from './sample-view.js';

const round = (s: number) => Math.round(s * 1000) / 1000;

/**
 * An audio clip on a waveform (wavesurfer.js). Drag on the waveform to select a stretch, then press 1–9 to make it
 * a segment of that class; 1–9 with nothing selected labels the whole clip. Space plays or pauses.
 */
export function SampleAudio(props: SampleViewProps) {
  const { sample, classes, readOnly, multiLabel, save } = props;
  const host = useRef<HTMLDivElement>(null);
  const surfer = useRef<WaveSurfer | null>(null);
  const pending = useRef<{ start: number; end: number; remove(): void } | null>(null);
  const [selection, setSelection] = useState<[number, number] | null>(null);
  const [decoded, setDecoded] = useState<InstanceType<typeof RegionsPlugin> | null>(null);
  const segments = (sample.spans ?? []) as TimeSegment[];

  // One waveform per sample: saving a label must not reload the audio (a drag made while it reloaded was lost).
  useEffect(() => {
    const regions = RegionsPlugin.create();
    const ws = WaveSurfer.create({ container: host.current!, url: sample.data.file_url, height: 96, waveColor: '#8fa3c7', progressColor: '#2f5fb3', plugins: [regions], fetchParams: { credentials: 'same-origin' } });
    surfer.current = ws;
    ws.on('error', (err) => host.current?.setAttribute('data-error', String(err)));
    ws.on('decode', () => {
      host.current?.setAttribute('data-ready', 'true');
      setDecoded(regions);
    });
    if (!readOnly) regions.enableDragSelection({ color: 'rgba(47, 95, 179, 0.2)' });
    regions.on('region-created', (region) => {
      if (region.content) return;
      pending.current?.remove();
      pending.current = region;
      setSelection([region.start, region.end]);
    });
    regions.on('region-updated', (region) => {
      if (pending.current === region) setSelection([region.start, region.end]);
    });
    return () => {
      pending.current = null;
      setDecoded(null);
      host.current?.removeAttribute('data-ready');
      ws.destroy();
    };
  }, [sample.id, sample.data.file_url]);

  // The saved segments, redrawn whenever they change; a stretch being selected stays.
  useEffect(() => {
    if (!decoded) return;
    for (const r of decoded.getRegions()) if (r !== pending.current) r.remove();
    for (const s of segments) decoded.addRegion({ start: s.start_s, end: s.end_s, color: `${colorOf(classes, s.label)}44`, drag: false, resize: false, content: s.label });
  }, [decoded, JSON.stringify(segments)]);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (isTyping(e) || e.ctrlKey || e.metaKey || e.altKey) return;
      if (e.key === ' ') {
        e.preventDefault();
        void surfer.current?.playPause();
        return;
      }
      const cls = classOfKey(classes, e.key);
      if (!cls || readOnly) return;
      e.preventDefault();
      if (selection) {
        save({ spans: [...segments, { start_s: round(selection[0]), end_s: round(selection[1]), label: cls.name }].sort((a, b) => a.start_s - b.start_s) });
        pending.current?.remove();
        pending.current = null;
        setSelection(null);
      } else {
        save({ label: pickedLabel(sample, cls.name, multiLabel) });
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  });

  return (
    <div className="sample-audio">
      <SampleLabels {...props} empty="No clip label — press 1–9">
        <span className="muted"> {sample.data.duration_s ?? '?'} s{sample.data.sample_rate ? ` · ${sample.data.sample_rate} Hz` : ''}</span>
      </SampleLabels>
      <div ref={host} className="waveform" data-testid="waveform" />
      <p className="muted">{selection ? `Selected ${selection[0].toFixed(2)}–${selection[1].toFixed(2)} s: press 1–9 to label it` : 'Drag on the waveform to select a segment · Space plays'}</p>
      <SegmentList segments={segments} classes={classes} readOnly={readOnly} onSeek={(s) => surfer.current?.setTime(s.start_s)} onRemove={(s) => save({ spans: segments.filter((x) => x !== s) })} />
      <label className="field">
        Transcript
        <textarea key={sample.id} defaultValue={typeof sample.value === 'string' ? sample.value : ''} disabled={readOnly} rows={3}
          onBlur={(e) => e.target.value !== (typeof sample.value === 'string' ? sample.value : '') && save({ value: e.target.value === '' ? null : e.target.value })} />
      </label>
    </div>
  );
}
