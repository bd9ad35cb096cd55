import { useEffect, useState } from 'react';
import { api } from './api.js';
import type { ResponseOf } from './types.js';

export type Job = ResponseOf<'/api/jobs/{id}', 'get'>;

export const jobFinished = (job: Job | null): boolean => job?.status === 'succeeded' || job?.status === 'failed' || job?.status === 'cancelled';

/** Follows a background job at GET /api/jobs/{id} until it finishes; `onDone` runs once, with the final job. */
export function useJob(jobId: number | null, onDone?: (job: Job) => void, intervalMs = 500): { job: Job | null; error: string | null } {
  const [job, setJob] = useState<Job | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setJob(null);
    setError(null);
    if (jobId === null) return;
    let stopped = false;
    let timer = 0;
    const poll = async () => {
      try {
        const next = await api.get('/api/jobs/{id}', { path: { id: jobId } });
        if (stopped) return;
        setJob(next);
        if (jobFinished(next)) return onDone?.(next);
      } catch (e) {
        if (stopped) return;
        setError((e as Error).message);
        return;
      }
      timer = window.setTimeout(() => void poll(), intervalMs);
    };
    void poll();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [jobId]);
  return { job, error };
}

export function ProgressBar({ value, label }: { value: number; label?: string }) {
  const percent = Math.round(Math.max(0, Math.min(1, value)) * 100);
  return (
    <div className="progress" role="progressbar" aria-valuenow={percent} aria-valuemin={0} aria-valuemax={100} aria-label={label}>
      <div style={{ width: `${percent}%` }} />
      <span>{percent}%</span>
    </div>
  );
}
