import { createHash } from 'node:crypto';
import type { Caller } from '../../access/caller.js';
import type { ProjectAccess } from '../../access/project-access.js';
import { isUniqueViolation } from '../../db/errors.js';
import { ConflictError, NotFoundError, ServiceUnavailableError, ValidationError } from '../../http/errors.js';
import type { JobContext, JobQueue } from '../../jobs/job-queue.js';
import { JobCancelledError } from '../../jobs/job-queue.js';
import type { JobsRepository } from '../../jobs/jobs.repository.js';
import { chunks } from '../../lib/batches.js';
import { urlAllowed } from '../../lib/url-allowlist.js';
import type { BlobStore } from '../../storage/blob-store.js';
import { exportBlobKey, storageObjectBlobKey, versionPrefix } from '../../storage/keys.js';
import type { BucketObject, S3Bucket } from '../../storage/s3-bucket.js';
import type { ExportRequest } from '../exports/exports.schemas.js';
import type { ExportsService } from '../exports/exports.service.js';
import type { ImagesService, IncomingFile } from '../images/images.service.js';
import type { StorageBuckets } from './storage-buckets.adapter.js';
import type { StoragesRepository } from './storages.repository.js';
import {
  toStorageObjectOut,
  toStorageOut,
  type ConnectionTestOut,
  type ObjectsQuery,
  type StorageCreate,
  type StorageObjectOut,
  type StorageOut,
  type StorageRow,
  type StorageUpdate,
  type StorageWriteOut,
  type SyncCounts,
  type SyncStartedOut,
} from './storages.schemas.js';

export const SYNC_JOB = 'storage.sync';
export interface SyncPayload {
  storageId: number;
}

/** Objects of one sync handed to the image ingest at a time (each batch is recorded in one transaction). */
const BATCH = 50;
/** Objects fetched from the bucket at the same time. */
const FETCHES_IN_FLIGHT = 8;
/** Names of objects a sync fetches; others are listed and skipped (labels, archives, …). */
const IMAGE_NAME = /\.(jpe?g|png|webp|tiff?|gif|avif)$/i;

export interface StoragesOptions {
  readonly allowlist: readonly string[];
  /** Objects larger than an upload may be are not fetched. */
  readonly maxObjectBytes: number;
}

const noCounts = (): SyncCounts => ({ listed: 0, new: 0, changed: 0, missing: 0, duplicates: 0, rejected: 0, skipped: 0 });

/**
 * S3-compatible buckets attached to a project (issue 27): a source of images, synced on demand and on a schedule
 * (each object imported once per ETag, objects that disappear reported, never silently dropped), or a target that
 * exports and version files are written to. Credentials are sealed at rest and never answered; endpoints must be on
 * the operator's allowlist, checked as webhook URLs are.
 */
export class StoragesService {
  constructor(
    private readonly storages: StoragesRepository,
    private readonly buckets: StorageBuckets,
    private readonly access: ProjectAccess,
    private readonly queue: JobQueue,
    private readonly jobs: JobsRepository,
    private readonly images: ImagesService,
    private readonly exports: ExportsService,
    private readonly blobs: BlobStore,
    private readonly options: StoragesOptions,
  ) {}

  async list(caller: Caller, projectId: number): Promise<StorageOut[]> {
    await this.access.project(caller, projectId, 'project.read');
    return Promise.all((await this.storages.list(projectId)).map((row) => this.out(row)));
  }

  async get(caller: Caller, projectId: number, storageId: number): Promise<StorageOut> {
    return this.out(await this.visible(caller, projectId, storageId, 'project.read'));
  }

  async create(caller: Caller, projectId: number, input: StorageCreate): Promise<StorageOut> {
    await this.access.project(caller, projectId, 'project.update');
    this.assertCanSeal();
    this.assertAllowed(input.endpoint);
    if (input.prefix.split('/').some((part) => part === '.' || part === '..')) throw ValidationError.at(['body', 'prefix'], 'a prefix has no "." or ".." parts');
    const now = new Date().toISOString();
    const interval = input.purpose === 'source' ? (input.sync_interval_minutes ?? null) : null;
    try {
      const row = await this.storages.insert({
        project_id: projectId,
        name: input.name.trim(),
        purpose: input.purpose,
        endpoint: input.endpoint.replace(/\/$/, ''),
        region: input.region,
        force_path_style: input.force_path_style ? 1 : 0,
        bucket: input.bucket,
        prefix: input.prefix.replace(/\/+$/, ''),
        credentials: this.buckets.seal(projectId, { accessKeyId: input.access_key_id, secretAccessKey: input.secret_access_key }),
        access_key_hint: input.access_key_id.slice(-4),
        import_mode: input.import_mode,
        sync_interval_minutes: interval,
        next_sync_at: interval === null ? null : later(now, interval),
        created_by: caller.userId,
        created_at: now,
        updated_at: now,
      });
      return this.out(row);
    } catch (err) {
      if (isUniqueViolation(err)) throw new ConflictError(`The project already has a storage named "${input.name.trim()}"`);
      throw err;
    }
  }

  async update(caller: Caller, projectId: number, storageId: number, input: StorageUpdate): Promise<StorageOut> {
    const row = await this.visible(caller, projectId, storageId, 'project.update');
    if ((input.access_key_id === undefined) !== (input.secret_access_key === undefined)) {
      throw ValidationError.at(['body', input.access_key_id === undefined ? 'access_key_id' : 'secret_access_key'], 'access_key_id and secret_access_key are changed together');
    }
    if (input.endpoint !== undefined) this.assertAllowed(input.endpoint);
    if (input.access_key_id !== undefined) this.assertCanSeal();
    if (input.sync_interval_minutes != null && row.purpose !== 'source') throw ValidationError.at(['body', 'sync_interval_minutes'], 'only a source storage is synced');
    const now = new Date().toISOString();
    const interval = input.sync_interval_minutes === undefined ? undefined : input.sync_interval_minutes;
    try {
      const updated = await this.storages.update(storageId, {
        ...(input.name !== undefined ? { name: input.name.trim() } : {}),
        ...(input.endpoint !== undefined ? { endpoint: input.endpoint.replace(/\/$/, '') } : {}),
        ...(input.region !== undefined ? { region: input.region } : {}),
        ...(input.force_path_style !== undefined ? { force_path_style: input.force_path_style ? 1 : 0 } : {}),
        ...(input.import_mode !== undefined ? { import_mode: input.import_mode } : {}),
        ...(input.access_key_id !== undefined && input.secret_access_key !== undefined
          ? { credentials: this.buckets.seal(projectId, { accessKeyId: input.access_key_id, secretAccessKey: input.secret_access_key }), access_key_hint: input.access_key_id.slice(-4) }
          : {}),
        ...(interval !== undefined ? { sync_interval_minutes: interval, next_sync_at: interval === null ? null : later(now, interval) } : {}),
        updated_at: now,
      });
      return this.out(updated);
    } catch (err) {
      if (isUniqueViolation(err)) throw new ConflictError(`The project already has a storage named "${input.name?.trim()}"`);
      throw err;
    }
  }

  /** Detaches the storage; refused while images read their originals from it (delete them, or re-import by copy). */
  async delete(caller: Caller, projectId: number, storageId: number): Promise<void> {
    await this.visible(caller, projectId, storageId, 'project.update');
    const referencing = await this.storages.referencingImages(projectId, storageId);
    if (referencing > 0) throw new ConflictError(`${referencing} images of the project read their originals from this storage; delete them before detaching it`);
    await this.storages.delete(storageId);
    this.buckets.forget(storageId);
  }

  /** Lists the prefix (one object at most); a target also writes and deletes a small probe object. */
  async test(caller: Caller, projectId: number, storageId: number): Promise<ConnectionTestOut> {
    const row = await this.visible(caller, projectId, storageId, 'project.update');
    this.assertAllowed(row.endpoint);
    const bucket = this.bucket(row);
    const where = `s3://${row.bucket}/${row.prefix}`;
    let seen = 0;
    try {
      seen = await bucket.probe();
    } catch (err) {
      return { ok: false, detail: `Listing ${where} failed: ${describe(err)}`, objects_seen: 0 };
    }
    if (row.purpose === 'target') {
      const target = bucket.target();
      try {
        await target.put('versa-connection-test', Buffer.from('versa connection test\n'));
        await target.delete('versa-connection-test');
      } catch (err) {
        return { ok: false, detail: `Listing ${where} worked, writing to it failed: ${describe(err)}`, objects_seen: seen };
      }
    }
    return { ok: true, detail: row.purpose === 'target' ? `Listed and wrote to ${where}` : `Listed ${where}`, objects_seen: seen };
  }

  /** Starts a sync now (202): new objects are imported, objects gone from the bucket are reported. */
  async sync(caller: Caller, projectId: number, storageId: number): Promise<SyncStartedOut> {
    const row = await this.visible(caller, projectId, storageId, 'images.write');
    // Its counts (new, missing) are about the whole project: an annotator kept to their assignments may not start one.
    await this.access.wholeProject(caller, projectId, 'images.write');
    if (row.purpose !== 'source') throw new ConflictError('Only a source storage is synced; this one is a target');
    this.assertAllowed(row.endpoint);
    const job = await this.startSync(row, caller.userId);
    if (!job) throw new ConflictError(`A sync of this storage is already under way (job ${row.sync_job_id})`);
    return { job_id: job.id, status: job.status, url: `/api/jobs/${job.id}` };
  }

  /** Starts the syncs whose schedule is due (any process may call it: each due sync is claimed by one). */
  async syncDue(now = new Date()): Promise<number> {
    let started = 0;
    for (const row of await this.storages.due(now.toISOString())) {
      if (row.sync_interval_minutes === null || row.next_sync_at === null) continue;
      if (!(await this.storages.claimDue(row.id, row.next_sync_at, later(now.toISOString(), row.sync_interval_minutes)))) continue;
      if (!urlAllowed(row.endpoint, this.options.allowlist)) continue;
      if (await this.startSync(row, row.created_by)) started++;
    }
    return started;
  }

  private async startSync(row: StorageRow, userId: number | null): Promise<{ id: number; status: SyncStartedOut['status'] } | null> {
    if (row.sync_job_id !== null) {
      const previous = await this.jobs.find(row.sync_job_id);
      if (previous && (previous.status === 'queued' || previous.status === 'running')) return null;
    }
    const job = await this.jobs.create(SYNC_JOB, { storageId: row.id } satisfies SyncPayload, row.project_id, userId);
    if (!(await this.storages.setSyncJob(row.id, row.sync_job_id, job.id))) {
      await this.jobs.finish(job.id, { cancelled: true });
      return null;
    }
    await this.queue.submit(job);
    return { id: job.id, status: job.status };
  }

  /** The sync job: the listing a page at a time, each page's new objects imported in batches. */
  async runSync(ctx: JobContext<SyncPayload>): Promise<SyncCounts> {
    const row = await this.storages.find(ctx.payload.storageId);
    if (!row || row.purpose !== 'source') return noCounts();
    const counts = noCounts();
    try {
      const bucket = this.bucket(row);
      const sync = await this.storages.beginSync(row.id);
      for await (const page of bucket.pages()) {
        if (ctx.signal.aborted) throw new JobCancelledError();
        counts.listed += page.length;
        const known = await this.storages.known(row.id, page.map((o) => o.key));
        const fresh: BucketObject[] = [];
        const unchanged: number[] = [];
        for (const object of page) {
          const before = known.get(object.key);
          if (before && before.etag === object.etag) unchanged.push(before.id);
          else fresh.push(object);
        }
        await this.storages.markSeen(unchanged, sync);
        const now = new Date().toISOString();
        const skipped = fresh.filter((o) => !IMAGE_NAME.test(o.key) || o.size > this.options.maxObjectBytes);
        await this.storages.record(skipped.map((o) => ({
          storage_id: row.id, object_key: o.key, etag: o.etag, size_bytes: o.size, outcome: IMAGE_NAME.test(o.key) ? 'rejected' : 'skipped',
          detail: IMAGE_NAME.test(o.key) ? `larger than the upload limit of ${Math.round(this.options.maxObjectBytes / 1024 / 1024)} MB` : 'not an image file name',
          image_id: null, seen_sync: sync, imported_at: now, missing_since: null,
        })));
        for (const o of skipped) {
          if (IMAGE_NAME.test(o.key)) counts.rejected++;
          else counts.skipped++;
        }
        const wanted = fresh.filter((o) => !skipped.includes(o));
        for (const batch of chunks(wanted, BATCH)) {
          if (ctx.signal.aborted) throw new JobCancelledError();
          await this.importBatch(row, bucket, batch, known, sync, counts);
          await ctx.report({ message: `listed ${counts.listed} objects; ${counts.new + counts.changed} imported` });
        }
      }
      counts.missing = await this.storages.markMissing(row.id, sync, new Date().toISOString());
      await this.storages.finishSync(row.id, { status: 'succeeded', counts }, new Date().toISOString());
      return counts;
    } catch (err) {
      await this.storages.finishSync(row.id, { status: 'failed', error: ctx.signal.aborted ? 'cancelled' : describe(err) }, new Date().toISOString());
      throw err;
    }
  }

  /** Fetches a batch's objects (a few at a time), ingests them as one upload would, and records what each became. */
  private async importBatch(row: StorageRow, bucket: S3Bucket, batch: BucketObject[], known: Map<string, unknown>, sync: number, counts: SyncCounts): Promise<void> {
    const reference = row.import_mode === 'reference';
    const fetched: BucketObject[] = [];
    const fetches = new Map<number, Promise<Buffer | null>>();
    const start = (i: number) => {
      if (i < batch.length && !fetches.has(i)) fetches.set(i, bucket.get(batch[i].key, batch[i].etag || null).catch(() => null));
    };
    const relative = (key: string) => (row.prefix ? key.slice(row.prefix.length + 1) : key);
    async function* files(): AsyncGenerator<IncomingFile> {
      for (let i = 0; i < FETCHES_IN_FLIGHT; i++) start(i);
      for (let i = 0; i < batch.length; i++) {
        start(i + FETCHES_IN_FLIGHT);
        // An object gone (or replaced) since the listing is left for the next sync.
        const bytes = await fetches.get(i)!;
        fetches.delete(i);
        if (bytes === null) continue;
        const object = batch[i];
        fetched.push(object);
        yield {
          originalName: relative(object.key),
          bytes,
          sha256: createHash('sha256').update(bytes).digest('hex'),
          truncated: false,
          ...(reference ? { reference: (ext: string) => storageObjectBlobKey(row.id, object.etag, object.key, ext) } : {}),
        };
      }
    }
    const results = await this.images.ingestFiles(row.project_id, files());
    const now = new Date().toISOString();
    await this.storages.record(results.map((result, i) => {
      const object = fetched[i];
      const outcome = result.outcome === 'created' ? 'imported' : result.outcome;
      if (result.outcome === 'created') counts[known.has(object.key) ? 'changed' : 'new']++;
      else if (result.outcome === 'duplicate') counts.duplicates++;
      else counts.rejected++;
      return {
        storage_id: row.id, object_key: object.key, etag: object.etag, size_bytes: object.size, outcome,
        detail: result.outcome === 'rejected' ? (result.detail ?? null) : null,
        image_id: result.image_id ?? null, seen_sync: sync, imported_at: now, missing_since: null,
      };
    }));
  }

  async objects(caller: Caller, projectId: number, storageId: number, query: ObjectsQuery): Promise<StorageObjectOut[]> {
    await this.visible(caller, projectId, storageId, 'project.read');
    // The listing names the image each object became, assigned or not.
    await this.access.wholeProject(caller, projectId, 'project.read');
    return (await this.storages.objects(storageId, query)).map(toStorageObjectOut);
  }

  /** Exports the project (or a version) as the export route does, and writes the file to the target bucket. */
  async exportTo(caller: Caller, projectId: number, storageId: number, input: ExportRequest): Promise<StorageWriteOut> {
    const row = await this.target(caller, projectId, storageId);
    const made = await this.exports.export(caller, projectId, input);
    const key = `exports/${made.filename}`;
    const bytes = await this.bucket(row).target().putStream(key, this.blobs.stream(exportBlobKey(projectId, made.filename)));
    return { bucket: row.bucket, keys: [objectKeyOf(row, key)], bytes };
  }

  /** Writes a ready version's generated files to the target bucket, under `versions/v{number}/`. */
  async versionTo(caller: Caller, projectId: number, storageId: number, versionId: number): Promise<StorageWriteOut> {
    const row = await this.target(caller, projectId, storageId);
    await this.access.wholeProject(caller, projectId, 'export');
    const version = await this.storages.findVersion(versionId);
    if (!version || version.project_id !== projectId) throw new NotFoundError(`Version ${versionId} not found in project ${projectId}`);
    if (version.status !== 'ready') throw new ConflictError(`Version ${versionId} is ${version.status}; only a ready version's files can be written`);
    const target = this.bucket(row).target();
    const prefix = versionPrefix(projectId, version.number);
    const keys: string[] = [];
    let bytes = 0;
    for await (const blob of this.blobs.list(prefix)) {
      const key = `versions/v${version.number}/${blob.key.slice(prefix.length + 1)}`;
      bytes += await target.putStream(key, this.blobs.stream(blob.key));
      keys.push(objectKeyOf(row, key));
    }
    return { bucket: row.bucket, keys: keys.sort(), bytes };
  }

  private async target(caller: Caller, projectId: number, storageId: number): Promise<StorageRow> {
    const row = await this.visible(caller, projectId, storageId, 'project.update');
    if (row.purpose !== 'target') throw new ConflictError('Files are written only to a target storage; this one is a source');
    this.assertAllowed(row.endpoint);
    return row;
  }

  private bucket(row: StorageRow): S3Bucket {
    if (!this.buckets.canSeal) throw new ServiceUnavailableError('SECRETS_KEY is not set on the server: the storage\'s credentials cannot be read');
    return this.buckets.bucket(row);
  }

  private async visible(caller: Caller, projectId: number, storageId: number, permission: 'project.read' | 'project.update' | 'images.write'): Promise<StorageRow> {
    await this.access.project(caller, projectId, permission);
    const row = await this.storages.find(storageId);
    if (!row || row.project_id !== projectId) throw new NotFoundError(`Storage ${storageId} not found in project ${projectId}`);
    return row;
  }

  private async out(row: StorageRow): Promise<StorageOut> {
    const [tallies, job] = await Promise.all([this.storages.tallies(row.id), row.sync_job_id === null ? null : this.jobs.find(row.sync_job_id)]);
    return toStorageOut(row, tallies, job ?? null);
  }

  private assertCanSeal(): void {
    if (!this.buckets.canSeal) throw new ServiceUnavailableError('SECRETS_KEY is not set on the server: storage credentials cannot be stored encrypted, so none are stored');
  }

  private assertAllowed(endpoint: string): void {
    if (!urlAllowed(endpoint, this.options.allowlist)) {
      throw ValidationError.at(['body', 'endpoint'], this.options.allowlist.length ? `${endpoint} is not on the storage allowlist` : 'project storages are disabled (STORAGE_ALLOWLIST is empty)');
    }
  }
}

const later = (iso: string, minutes: number): string => new Date(Date.parse(iso) + minutes * 60_000).toISOString();

const objectKeyOf = (row: StorageRow, key: string): string => (row.prefix ? `${row.prefix}/${key}` : key);

/** An S3 error as a person can act on it (its code and message; never a stack or the request's credentials). */
function describe(err: unknown): string {
  const e = err as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  const status = e.$metadata?.httpStatusCode;
  return [e.name && e.name !== 'Error' ? e.name : null, status ? `HTTP ${status}` : null, e.message].filter(Boolean).join(': ').slice(0, 500);
}
