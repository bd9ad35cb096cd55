import { useEffect, useState } from 'react';
import { api } from '../../api.js';
import { jobFinished, ProgressBar, useJob } from '../../jobs.js';
import type { Project, ResponseOf, Sample } from '../../types.js';

type Started = ResponseOf<'/api/samples/{sample_id}/frames', 'post'>;
interface FramesResult {
  frames?: number;
  classified?: number;
  segment_classes?: { matched: string[]; missing: string[] };
}

/**
 * "Send to image project": a video sample becomes a video of the chosen project whose frames (every `step`-th of the
 * clip from `start` to `end`) are images there, its time segments their classifications where the class exists.
 * Shows the job's progress and outcome: frames, classified frames and the segment labels that had no class.
 */
export function SendFrames({ sample, onError }: { sample: Sample; onError(message: string): void }) {
  const [open, setOpen] = useState(false);
  const [projects, setProjects] = useState<Project[]>([]);
  const [target, setTarget] = useState<number | ''>('');
  const [step, setStep] = useState(1);
  const [start, setStart] = useState('');
  const [end, setEnd] = useState('');
  const [started, setStarted] = useState<Started | null>(null);
  const [busy, setBusy] = useState(false);
  const { job, error } = useJob(started?.job_id ?? null);

  useEffect(() => {
    if (!open || projects.length > 0) return;
    api.get('/api/projects').then((list) => {
      setProjects(list);
      if (list.length > 0 && target === '') setTarget(list.find((p) => p.id !== sample.project_id)?.id ?? list[0].id);
    }, (e) => onError((e as Error).message));
  }, [open]);

  const send = async () => {
    if (target === '') return;
    setBusy(true);
    setStarted(null);
    try {
      const body: { project_id: number; step: number; start_s?: number; end_s?: number } = { project_id: target, step };
      if (start.trim() !== '') body.start_s = Number(start);
      if (end.trim() !== '') body.end_s = Number(end);
      setStarted(await api.post('/api/samples/{sample_id}/frames', { path: { sample_id: sample.id }, body }));
    } catch (e) {
      onError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };

  if (!open) return <button onClick={() => setOpen(true)}>Send to image project</button>;
  const result = (job?.status === 'succeeded' ? job.result : null) as FramesResult | null;
  const missing = result?.segment_classes?.missing ?? started?.segment_classes.missing ?? [];
  return (
    <form className="send-frames" aria-label="Send to image project" onSubmit={(e) => (e.preventDefault(), void send())}>
      <label>
        Image project
        <select value={target} onChange={(e) => setTarget(Number(e.target.value))} aria-label="Target project">
          {projects.map((p) => <option key={p.id} value={p.id}>{p.name}</option>)}
        </select>
      </label>
      <label>
        Every Nth frame
        <input type="number" min={1} max={10000} value={step} onChange={(e) => setStep(Math.max(1, Math.floor(Number(e.target.value)) || 1))} aria-label="Step" style={{ width: 70 }} />
      </label>
      <label>
        From (s)
        <input type="number" min={0} step="any" value={start} placeholder="0" onChange={(e) => setStart(e.target.value)} aria-label="Start (s)" style={{ width: 80 }} />
      </label>
      <label>
        To (s)
        <input type="number" min={0} step="any" value={end} placeholder={String(sample.data.duration_s ?? 'end')} onChange={(e) => setEnd(e.target.value)} aria-label="End (s)" style={{ width: 80 }} />
      </label>
      <button type="submit" disabled={busy || target === '' || (started !== null && !jobFinished(job))}>Send frames</button>
      <button type="button" onClick={() => setOpen(false)}>Close</button>
      <div role="status" data-testid="send-frames-outcome" style={{ flexBasis: '100%' }}>
        {started && !jobFinished(job) && <ProgressBar value={job?.progress ?? 0} label="Decoding frames" />}
        {error && <span className="error">{error}</span>}
        {job?.status === 'failed' && <span className="error">Decoding failed: {job.error ?? 'unknown error'}</span>}
        {result && (
          <span>
            {result.frames} frames sent to{' '}
            <a href={`/projects/${started!.project_id}`}>{projects.find((p) => p.id === started!.project_id)?.name ?? `project ${started!.project_id}`}</a>
            {result.segment_classes && `, ${result.classified ?? 0} classified from its segments`}
            {missing.length > 0 && <> · no class there for: <b data-testid="missing-classes">{missing.join(', ')}</b> (left out)</>}
          </span>
        )}
      </div>
    </form>
  );
}
