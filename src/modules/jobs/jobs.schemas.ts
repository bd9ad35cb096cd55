import { Type, type Static } from 'typebox';
import type { JobRow } from '../../jobs/job-queue.js';
import { Nullable, StringEnum, Timestamp } from '../../http/schemas.js';

export const JobOut = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  status: StringEnum(['queued', 'running', 'succeeded', 'failed'] as const),
  progress: Type.Number({ minimum: 0, maximum: 1 }),
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
    name: row.name,
    status: row.status,
    progress: row.progress,
    result: row.result === null ? null : JSON.parse(row.result),
    error: row.error,
    project_id: row.project_id,
    created_at: row.created_at,
    started_at: row.started_at,
    finished_at: row.finished_at,
  };
}
