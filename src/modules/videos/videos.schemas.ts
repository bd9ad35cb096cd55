import { Type, type Static } from 'typebox';
import type { Selectable } from 'kysely';
import type { VideosTable } from '../../db/schema.js';
import { Nullable, StringEnum, Timestamp } from '../../http/schemas.js';

export const VIDEO_STATUSES = ['decoding', 'ready', 'failed'] as const;

export const VideoOut = Type.Object({
  id: Type.Integer(),
  project_id: Type.Integer(),
  name: Type.String({ description: 'The name the file was uploaded with' }),
  fps: Type.Number({ description: 'Frames per second (the stream\'s average rate)' }),
  frame_count: Type.Integer({ description: 'Frames in the video; every `step`-th of them (from frame 0) is an image' }),
  width: Type.Integer(),
  height: Type.Integer(),
  duration_s: Type.Number(),
  step: Type.Integer(),
  size_bytes: Type.Integer(),
  mime_type: Type.String(),
  status: StringEnum(VIDEO_STATUSES, { description: '`decoding` until its frames are images (`ready`), or `failed` with `error`' }),
  error: Nullable(Type.String()),
  job_id: Nullable(Type.Integer({ description: 'The decoding job (GET /api/jobs/{id} for its progress)' })),
  range_start_s: Nullable(Type.Number({ description: 'The clip that was decoded (seconds from the start, end excluded); null: all of it' })),
  range_end_s: Nullable(Type.Number()),
  source_sample_id: Nullable(Type.Integer({ description: 'The video sample it was made from (POST /api/samples/{id}/frames), if any' })),
  created_at: Timestamp,
});
export type VideoOut = Static<typeof VideoOut>;

/** Documents the multipart body; the route reads the parts as a stream, so this is never validated. */
export const VideoUploadBody = Type.Object({
  file: Type.Unsafe<unknown>({ type: 'string', format: 'binary', description: 'An MP4, WebM or MOV file, told by its bytes' }),
  step: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, default: 1, description: 'Decode every Nth frame (1: every frame)' })),
});

export type VideoRow = Selectable<VideosTable>;

export function toVideoOut(row: VideoRow): VideoOut {
  return {
    id: row.id,
    project_id: row.project_id,
    name: row.name,
    fps: row.fps,
    frame_count: row.frame_count,
    width: row.width,
    height: row.height,
    duration_s: row.duration_s,
    step: row.step,
    size_bytes: Number(row.size_bytes),
    mime_type: row.mime_type,
    status: row.status,
    error: row.error,
    job_id: row.job_id,
    range_start_s: row.range_start_s,
    range_end_s: row.range_end_s,
    source_sample_id: row.source_sample_id,
    created_at: row.created_at,
  };
}
