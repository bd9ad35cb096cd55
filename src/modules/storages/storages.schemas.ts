import { Type, type Static } from 'typebox';
import type { Selectable } from 'kysely';
import type { ProjectStoragesTable, StorageObjectsTable } from '../../db/schema.js';
import { Id, Nullable, StringEnum, Timestamp } from '../../http/schemas.js';

export const STORAGE_PURPOSES = ['source', 'target'] as const;
export const IMPORT_MODES = ['reference', 'copy'] as const;
export const SYNC_STATES = ['never', 'queued', 'running', 'succeeded', 'failed'] as const;
export const OBJECT_OUTCOMES = ['imported', 'duplicate', 'rejected', 'skipped'] as const;

const Name = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' });
const Endpoint = Type.String({
  minLength: 8,
  maxLength: 2048,
  pattern: '^https?://[^/?#@\\s]+/?$',
  description: 'The S3-compatible server, `https://host[:port]` (no path); it must be on the operator\'s STORAGE_ALLOWLIST',
});
const Region = Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z0-9-]+$', default: 'us-east-1' });
const Bucket = Type.String({ minLength: 3, maxLength: 63, pattern: '^[a-z0-9][a-z0-9.-]*[a-z0-9]$', description: 'The bucket name (S3 rules: lower-case letters, digits, dots and hyphens)' });
const Prefix = Type.String({
  maxLength: 512,
  pattern: '^([A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*/?)?$',
  default: '',
  description: 'Only objects under this key prefix (`photos/2024`); empty for the whole bucket. Letters, digits, `_ . -` and `/`',
});
const AccessKeyId = Type.String({ minLength: 1, maxLength: 256, pattern: '^\\S+$' });
const SecretAccessKey = Type.String({ minLength: 1, maxLength: 512, pattern: '^\\S+$', description: 'Stored encrypted; never shown again' });
const SyncInterval = Nullable(Type.Integer({ minimum: 5, maximum: 10_080, description: 'Minutes between scheduled syncs (5 to 10080); null: on demand only' }));

export const StorageCreate = Type.Object(
  {
    name: Name,
    purpose: StringEnum(STORAGE_PURPOSES, { default: 'source', description: '`source`: images are imported from it; `target`: exports and version files are written to it' }),
    endpoint: Endpoint,
    region: Region,
    force_path_style: Type.Boolean({ default: true, description: 'Path-style addressing (`host/bucket/key`), which most S3-compatible servers need' }),
    bucket: Bucket,
    prefix: Prefix,
    access_key_id: AccessKeyId,
    secret_access_key: SecretAccessKey,
    import_mode: StringEnum(IMPORT_MODES, {
      default: 'reference',
      description: '`reference`: the image row points at the object, read from the bucket when needed (its thumbnail is made once '
        + 'and kept by Versa); `copy`: the bytes are copied into Versa\'s store',
    }),
    sync_interval_minutes: Type.Optional(SyncInterval),
  },
  { additionalProperties: false },
);
export type StorageCreate = Static<typeof StorageCreate>;

export const StorageUpdate = Type.Object(
  {
    name: Type.Optional(Name),
    endpoint: Type.Optional(Endpoint),
    region: Type.Optional(Region),
    force_path_style: Type.Optional(Type.Boolean()),
    access_key_id: Type.Optional(AccessKeyId),
    secret_access_key: Type.Optional(SecretAccessKey),
    import_mode: Type.Optional(StringEnum(IMPORT_MODES)),
    sync_interval_minutes: Type.Optional(SyncInterval),
  },
  { additionalProperties: false, description: 'The bucket, prefix and purpose are fixed (images point into them): attach another storage instead.' },
);
export type StorageUpdate = Static<typeof StorageUpdate>;

export const StorageParams = Type.Object({ id: Id, storage_id: Id });
export const StorageVersionParams = Type.Object({ id: Id, storage_id: Id, version_id: Id });

const SyncCounts = Type.Object({
  listed: Type.Integer({ description: 'Objects under the prefix' }),
  new: Type.Integer({ description: 'Objects imported as new images' }),
  changed: Type.Integer({ description: 'Objects with a new ETag since they were imported, imported again as new images' }),
  missing: Type.Integer({ description: 'Objects imported earlier that the bucket no longer lists (their images stay; see /objects?missing=true)' }),
  duplicates: Type.Integer({ description: 'Objects whose bytes the project already had' }),
  rejected: Type.Integer({ description: 'Objects that are not images Versa can read' }),
  skipped: Type.Integer({ description: 'Objects left out by their name (not an image extension)' }),
});
export type SyncCounts = Static<typeof SyncCounts>;

export const StorageOut = Type.Object({
  id: Type.Integer(),
  project_id: Type.Integer(),
  name: Type.String(),
  purpose: StringEnum(STORAGE_PURPOSES),
  endpoint: Type.String(),
  region: Type.String(),
  force_path_style: Type.Boolean(),
  bucket: Type.String(),
  prefix: Type.String(),
  access_key_hint: Type.String({ description: 'The access key id\'s last four characters (`…WXYZ`); the secret is never returned' }),
  import_mode: StringEnum(IMPORT_MODES),
  sync_interval_minutes: Nullable(Type.Integer()),
  next_sync_at: Nullable(Timestamp),
  sync: Type.Object({
    state: StringEnum(SYNC_STATES),
    job_id: Nullable(Type.Integer()),
    last_at: Nullable(Timestamp),
    error: Nullable(Type.String()),
    counts: Nullable(SyncCounts),
  }),
  counts: Type.Object({
    objects: Type.Integer({ description: 'Objects the syncs have seen' }),
    imported: Type.Integer({ description: 'Objects that became images (or matched one) and are still in the bucket' }),
    missing: Type.Integer({ description: 'Objects that were imported and are gone from the bucket now' }),
  }),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type StorageOut = Static<typeof StorageOut>;

export const ConnectionTestOut = Type.Object({
  ok: Type.Boolean(),
  detail: Type.String({ description: 'What was tried and what the server answered' }),
  objects_seen: Type.Integer({ description: 'Objects the test listing saw under the prefix (at most 1)' }),
});
export type ConnectionTestOut = Static<typeof ConnectionTestOut>;

export const SyncStartedOut = Type.Object({
  job_id: Type.Integer(),
  status: StringEnum(['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const),
  url: Type.String({ description: 'Follow the job here' }),
});
export type SyncStartedOut = Static<typeof SyncStartedOut>;

export const ObjectsQuery = Type.Object(
  {
    missing: Type.Optional(Type.Boolean({ description: 'Only objects gone from the bucket (true) or only present ones (false)' })),
    outcome: Type.Optional(StringEnum(OBJECT_OUTCOMES)),
    after: Type.Optional(Type.Integer({ minimum: 0, description: 'Objects after this id (the previous page\'s last `id`)' })),
    limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
  },
  { additionalProperties: false },
);
export type ObjectsQuery = Static<typeof ObjectsQuery>;

export const StorageObjectOut = Type.Object({
  id: Type.Integer(),
  key: Type.String(),
  etag: Type.String(),
  size_bytes: Type.Integer(),
  outcome: StringEnum(OBJECT_OUTCOMES),
  detail: Nullable(Type.String()),
  image_id: Nullable(Type.Integer({ description: 'The image it became or matched; null once that image is deleted' })),
  imported_at: Timestamp,
  missing_since: Nullable(Timestamp),
});
export type StorageObjectOut = Static<typeof StorageObjectOut>;

export const StorageWriteOut = Type.Object({
  bucket: Type.String(),
  keys: Type.Array(Type.String(), { description: 'The object keys written' }),
  bytes: Type.Integer(),
});
export type StorageWriteOut = Static<typeof StorageWriteOut>;

export type StorageRow = Selectable<ProjectStoragesTable>;
export type StorageObjectRow = Selectable<StorageObjectsTable>;

export interface StorageTallies {
  objects: number;
  imported: number;
  missing: number;
}

export function toStorageOut(row: StorageRow, tallies: StorageTallies, job: { status: string } | null): StorageOut {
  const state = job && (job.status === 'queued' || job.status === 'running') ? job.status : (row.last_sync_status ?? 'never');
  return {
    id: row.id,
    project_id: row.project_id,
    name: row.name,
    purpose: row.purpose,
    endpoint: row.endpoint,
    region: row.region,
    force_path_style: row.force_path_style === 1,
    bucket: row.bucket,
    prefix: row.prefix,
    access_key_hint: `…${row.access_key_hint}`,
    import_mode: row.import_mode,
    sync_interval_minutes: row.sync_interval_minutes,
    next_sync_at: row.next_sync_at,
    sync: {
      state: state as StorageOut['sync']['state'],
      job_id: row.sync_job_id,
      last_at: row.last_sync_at,
      error: row.last_sync_error,
      counts: row.last_sync ? (JSON.parse(row.last_sync) as SyncCounts) : null,
    },
    counts: tallies,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function toStorageObjectOut(row: StorageObjectRow): StorageObjectOut {
  return {
    id: row.id,
    key: row.object_key,
    etag: row.etag,
    size_bytes: Number(row.size_bytes),
    outcome: row.outcome,
    detail: row.detail,
    image_id: row.image_id,
    imported_at: row.imported_at,
    missing_since: row.missing_since,
  };
}
