import { Type, type Static } from 'typebox';
import type { JobRow } from '../../jobs/job-queue.js';
import { Nullable, StringEnum, Timestamp } from '../../http/schemas.js';

export const JOB_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;

export const JobOut = Type.Object({
  id: Type.Integer(),
  kind: Type.String({ description: 'What the job does: `train`, `versions.generate`, `auto-annotate.yolo`, …' }),
  name: Type.String({ description: 'The same as `kind` (kept for older clients)' }),
  status: StringEnum(JOB_STATUSES),
  progress: Type.Number({ minimum: 0, maximum: 1 }),
  message: Nullable(Type.String({ description: 'What the job is doing now' })),
  eta_seconds: Nullable(Type.Number({ minimum: 0, description: 'Seconds left, when the job can tell' })),
  result: Type.Unknown({ description: 'What the job produced, once it succeeded' }),
  error: Nullable(Type.String()),
  project_id: Nullable(Type.Integer()),
  created_at: Timestamp,
  started_at: Nullable(Timestamp),
  finished_at: Nullable(Timestamp),
});
export type JobOut = Static<typeof JobOut>;

export function toJobOut(row: JobRow): JobOut {
  return {
    id: row.id,
    kind: row.name,
    name: row.name,
    status: row.status,
    progress: row.progress,
    message: row.message ?? null,
    eta_seconds: row.eta_seconds ?? null,
    result: row.result === null ? null : JSON.parse(row.result),
    error: row.error,
    project_id: row.project_id,
    created_at: row.created_at,
    started_at: row.started_at,
    finished_at: row.finished_at,
  };
}
