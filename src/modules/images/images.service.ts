import type { BlobClaims, BlobClaimSession } from '../../storage/blob-claims.js';
import type { Readable } from 'node:stream';
import type { Insertable } from 'kysely';
import type { Caller } from '../../access/caller.js';
import type { ProjectAccess } from '../../access/project-access.js';
import { HttpError, NotFoundError, ValidationError } from '../../http/errors.js';
import type { Page } from '../../http/pagination.js';
import type { Tx } from '../../db/database.js';
import type { ImagesTable } from '../../db/schema.js';
import { identifyImage, ImageRejectedError } from '../../imaging/image-probe.js';
import type { BlobStore } from '../../storage/blob-store.js';
import { ImageConflictError, type DeletedImage, type ImagesRepository } from './images.repository.js';
import {
  toImageListItem,
  toImageOut,
  untouchedImageOut,
  type ImageListQuery,
  type ImageListItem,
  type ImageOut,
  type ImageOutRow,
  type ImagesBulkDeleteBody,
  type ImagesBulkDeleteOut,
  type ImageUpdate,
  type UploadOut,
  type UploadResult,
} from './images.schemas.js';
import type { AssignmentScope } from '../assignments/assignment-scope.service.js';
import type { LockGuard } from '../locks/lock-guard.service.js';
import { storedFilenameCandidates } from './stored-filename.logic.js';
import { REJECTION_STATUS, type ImageIngest } from './image-ingest.service.js';
import type { ImageFeatureRecorder, MeasuredFile } from '../quality/image-features.service.js';

/** One file of an upload, read whole, with the hash of its bytes. */
export interface IncomingFile {
  readonly originalName: string;
  readonly bytes: Buffer;
  readonly sha256: string;
  /** The part was cut off at the per-file size limit. */
  readonly truncated: boolean;
  /**
   * The blob key of the original where it already is (an object of a project storage, imported by reference), by the
   * file's extension; null when it cannot be referenced (the file is refused). Absent: the bytes are stored in Versa's store.
   */
  readonly reference?: (ext: string) => string | null;
}

/** A stored file ready to be sent: opened only when the client does not already hold this version. */
export interface StoredFile {
  readonly filename: string;
  readonly mimeType: string;
  readonly size: number | null;
  readonly etag: string;
  open(): Readable;
}

export interface ImagesServiceOptions {
  readonly maxUploadBytes: number;
  /** Files of one upload request decoded at the same time. */
  readonly uploadConcurrency: number;
}

/** A file after the concurrent phase of an upload: refused, already in the project, or checked with its blobs written. */
type PreparedFile =
  | { originalName: string; outcome: 'rejected'; status: number; detail: string }
  | { originalName: string; outcome: 'duplicate'; image: ImageOutRow }
  | { originalName: string; outcome: 'stored'; image: Omit<Insertable<ImagesTable>, 'filename' | 'original_name' | 'created_at'>; measured?: MeasuredFile };

type FileOutcome =
  | { originalName: string; outcome: 'created' | 'duplicate'; image: ImageOutRow }
  | { originalName: string; outcome: 'rejected'; status: number; detail: string };

/** Attempts at recording an upload when concurrent requests keep taking the same bytes or names (PostgreSQL). */
const COMMIT_ATTEMPTS = 3;

const REJECTION_CODE: Record<number, string> = {
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'invalid_image',
};

const extensionOf = (key: string) => key.slice(key.lastIndexOf('.') + 1);
const notFound = (imageId: number) => `Image ${imageId} not found`;

export class ImagesService {
  constructor(
    private readonly images: ImagesRepository,
    private readonly access: ProjectAccess,
    private readonly blobs: BlobStore,
    private readonly options: ImagesServiceOptions,
    /**
     * Locks refuse deletes by others; assigned-only projects bound what annotators see; claims are shared with the
     * other writers of image files (imports into a project).
     */
    private readonly teams: { locks: LockGuard; scope: AssignmentScope; claims: BlobClaims },
    private readonly ingest: ImageIngest,
    /** Quality features measured from the thumbnail while it is in memory (the quality module's cache). */
    private readonly features?: ImageFeatureRecorder,
  ) {
    this.claims = teams.claims;
  }

  /** Content-addressed files that uploads (and imports) of this process are writing now (see BlobClaims). */
  private readonly claims: BlobClaims;

  async list(caller: Caller, projectId: number, query: ImageListQuery): Promise<Page<ImageListItem>> {
    const project = await this.access.project(caller, projectId, 'project.read');
    const role = (await this.access.roleOf(caller, project))!;
    const assignedTo = (await this.teams.scope.listingUser(caller, project, role)) ?? undefined;
    if (query.class_id !== undefined && !(await this.images.hasClass(projectId, query.class_id))) {
      throw new NotFoundError('Class not found in this project');
    }
    const ids = query.ids?.split(',').map(Number);
    const attribute = query.attribute === undefined ? undefined : attributeFilter(query.attribute);
    const filters = { split: query.split, review_state: query.review_state, class_id: query.class_id, annotated: query.annotated, assigned_to: assignedTo, ids, attribute, video_id: query.video_id };
    const filtered = Object.values(filters).some((value) => value !== undefined);
    // Hidden ground truth (issue 29) is listed and filtered as the untouched image it looks like.
    const hideGroundTruth = await this.teams.scope.hidesGroundTruth(caller, project, role);
    const [rows, total] = await Promise.all([
      this.images.listPage(projectId, { ...query, ...filters, hideGroundTruth }, filtered ? undefined : project.image_count),
      // The unfiltered total is the project's counter, so listing never counts a large table.
      filtered ? this.images.countFiltered(projectId, { ...filters, hideGroundTruth }) : Promise.resolve(project.image_count),
    ]);
    const hidden = hideGroundTruth ? await this.teams.scope.hiddenAmong(caller, project, role, rows.map((r) => r.id)) : new Set<number>();
    return { items: rows.map((r) => toImageListItem(r, hidden.has(r.id))), total };
  }

  /**
   * Stores every acceptable file of the request and reports each file's outcome in request order. Files are read
   * one after another from the request while up to `uploadConcurrency` of them are checked, decoded and written to
   * blob storage; then every new image is recorded in one transaction, in request order (so ids follow it). A
   * request that fails part-way (a malformed body, an unexpected error) records nothing and removes its blobs.
   */
  async upload(caller: Caller, projectId: number, files: AsyncIterable<IncomingFile>): Promise<UploadOut> {
    await this.access.project(caller, projectId, 'images.write');
    const claims = this.claims.session();
    try {
      return await this.uploadHolding(projectId, files, claims);
    } finally {
      await claims.release();
    }
  }

  /**
   * Stores and records files for the project on no caller's behalf (a project storage's sync, whose caller was checked
   * when it was started or scheduled): each file's result, in order, even when every file was refused.
   */
  async ingestFiles(projectId: number, files: AsyncIterable<IncomingFile>): Promise<UploadResult[]> {
    const claims = this.claims.session();
    try {
      return (await this.ingestHolding(projectId, files, claims, false)).map(resultOf);
    } finally {
      await claims.release();
    }
  }

  private async uploadHolding(projectId: number, files: AsyncIterable<IncomingFile>, claims: BlobClaimSession): Promise<UploadOut> {
    return this.uploadReport(await this.ingestHolding(projectId, files, claims));
  }

  private async ingestHolding(projectId: number, files: AsyncIterable<IncomingFile>, claims: BlobClaimSession, requireFiles = true): Promise<FileOutcome[]> {
    const tasks: Promise<PreparedFile>[] = [];
    const running = new Set<Promise<void>>();
    try {
      for await (const file of files) {
        const task = this.prepare(projectId, file, claims);
        tasks.push(task);
        const done: Promise<void> = task.then(
          () => void running.delete(done),
          () => void running.delete(done),
        );
        running.add(done);
        while (running.size >= this.options.uploadConcurrency) await Promise.race(running);
      }
    } catch (err) {
      await this.discard(projectId, await Promise.allSettled(tasks), claims);
      throw err;
    }
    const settled = await Promise.allSettled(tasks);
    const failure = settled.find((s) => s.status === 'rejected');
    if (failure) {
      await this.discard(projectId, settled, claims);
      throw failure.reason;
    }
    const prepared = settled.map((s) => (s as PromiseFulfilledResult<PreparedFile>).value);
    if (prepared.length === 0) {
      if (!requireFiles) return [];
      throw ValidationError.at(['body', 'files'], 'Field required: one or more file parts named "files"', 'missing');
    }
    let outcomes: FileOutcome[];
    try {
      outcomes = await this.record(projectId, prepared, claims);
    } catch (err) {
      await this.discard(projectId, settled, claims);
      throw err;
    }
    await this.recordFeatures(prepared, outcomes);
    return outcomes;
  }

  /** Checks, decodes and writes one file's blobs. Refusals are outcomes; anything thrown is unexpected. */
  private async prepare(projectId: number, file: IncomingFile, claims: BlobClaimSession): Promise<PreparedFile> {
    const { originalName, bytes, sha256 } = file;
    if (file.truncated) {
      const limit = Math.round(this.options.maxUploadBytes / (1024 * 1024));
      return { originalName, outcome: 'rejected', status: 413, detail: `The file is larger than the limit of ${limit} MB per file` };
    }
    try {
      const type = identifyImage(bytes);
      // Known bytes are not decoded again.
      const existing = await this.images.findBySha(projectId, sha256);
      if (existing) return { originalName, outcome: 'duplicate', image: existing };
      let measured: MeasuredFile | undefined;
      // Only a recorder asks for the fitted pixels: without one the thumbnail is made in one cheaper pipeline.
      const features = this.features;
      const checked = await this.ingest.check(bytes, type, features && ((pixels) => (measured = features.measure(bytes, type.mime, pixels))));
      const columns = this.ingest.columns(projectId, sha256, bytes.length, checked.probed);
      if (file.reference) {
        const reference = file.reference(checked.probed.type.ext);
        if (reference === null) return { originalName, outcome: 'rejected', status: 422, detail: 'The object key is too long to refer to' };
        columns.blob_key = reference;
      }
      const keys = { blobKey: columns.blob_key, thumbnailKey: columns.thumbnail_key };
      await claims.hold([keys.blobKey, keys.thumbnailKey]);
      try {
        await this.ingest.store(keys, bytes, checked, file.reference ? 'import' : 'ingest', file.reference ? 'referenced' : 'store');
      } catch (writeFailure) {
        await this.deleteBlobsUnlessUsed(projectId, sha256, [keys.blobKey, keys.thumbnailKey], claims);
        throw writeFailure;
      }
      return { originalName, outcome: 'stored', image: { project_id: projectId, split: null, ...columns }, measured };
    } catch (err) {
      if (err instanceof ImageRejectedError) return { originalName, outcome: 'rejected', status: REJECTION_STATUS[err.reason], detail: err.message };
      throw err;
    }
  }

  /** Caches the features of the images this upload created; a failure only leaves them to be measured later. */
  private async recordFeatures(prepared: PreparedFile[], outcomes: FileOutcome[]): Promise<void> {
    if (!this.features) return;
    const measured = new Map(prepared.flatMap((p) => (p.outcome === 'stored' && p.measured ? [[p.image.sha256, p.measured] as const] : [])));
    const created = outcomes.flatMap((o) => {
      const m = o.outcome === 'created' ? measured.get(o.image.sha256) : undefined;
      return m && o.outcome === 'created' ? [{ id: o.image.id, sha256: o.image.sha256, measured: m }] : [];
    });
    await this.features.record(created).catch(() => undefined);
  }

  /**
   * Records the stored files in one transaction under the project's image-write lock (bytes another request recorded
   * meanwhile are found there and become duplicates), retried when a concurrent request took the same names.
   */
  private async record(projectId: number, prepared: PreparedFile[], claims: BlobClaimSession): Promise<FileOutcome[]> {
    for (let attempt = 1; ; attempt++) {
      try {
        const { outcomes, orphans } = await this.images.transaction(projectId, (trx) => this.insertStored(projectId, prepared, trx));
        // Blobs of files that found no free name are removed only once the transaction is final.
        await Promise.all(orphans.map((o) => this.deleteBlobsUnlessUsed(projectId, o.sha256, [o.blob_key, o.thumbnail_key], claims)));
        return outcomes;
      } catch (err) {
        if (!(err instanceof ImageConflictError) || attempt === COMMIT_ATTEMPTS) throw err;
      }
    }
  }

  /**
   * Bytes already in the project (stored meanwhile, or earlier in this request) become duplicates; the others get
   * the first free stored name and are inserted together.
   */
  private async insertStored(projectId: number, prepared: PreparedFile[], trx: Tx) {
    const stored = prepared.flatMap((p) => (p.outcome === 'stored' ? [p] : []));
    const shas = [...new Set(stored.map((p) => p.image.sha256))];
    const existing = await this.images.findByShas(projectId, shas, trx);
    const candidates = new Map(stored.map((p) => [p, storedFilenameCandidates(p.originalName, extensionOf(p.image.blob_key), p.image.sha256)]));
    const taken = await this.images.takenFilenames(projectId, [...candidates.values()].flat(), trx);

    const now = new Date().toISOString();
    const rows: Insertable<ImagesTable>[] = [];
    const newBySha = new Map<string, string>();
    const orphans: Extract<PreparedFile, { outcome: 'stored' }>['image'][] = [];
    const plans = prepared.map((p) => {
      if (p.outcome !== 'stored') return p;
      const sha256 = p.image.sha256;
      const before = existing.get(sha256);
      if (before) return { originalName: p.originalName, outcome: 'duplicate' as const, image: before };
      const sameAs = newBySha.get(sha256);
      if (sameAs) return { originalName: p.originalName, outcome: 'duplicate-new' as const, filename: sameAs };
      const filename = candidates.get(p)!.find((name) => !taken.has(name));
      if (!filename) {
        orphans.push(p.image);
        return { originalName: p.originalName, outcome: 'rejected' as const, status: 409, detail: `No free file name for "${p.originalName}" in the project` };
      }
      taken.add(filename);
      newBySha.set(sha256, filename);
      rows.push({ ...p.image, filename, original_name: p.originalName.slice(0, 255), created_at: now });
      return { originalName: p.originalName, outcome: 'created' as const, filename };
    });
    const inserted = new Map((await this.images.insertManyCounted(projectId, rows, trx)).map((row) => [row.filename, row]));

    const outcomes: FileOutcome[] = [];
    for (const plan of plans) {
      if (plan.outcome === 'created') outcomes.push({ originalName: plan.originalName, outcome: 'created', image: inserted.get(plan.filename)! });
      else if (plan.outcome === 'duplicate-new') outcomes.push({ originalName: plan.originalName, outcome: 'duplicate', image: inserted.get(plan.filename)! });
      else outcomes.push(plan);
    }
    return { outcomes, orphans };
  }

  private uploadReport(outcomes: FileOutcome[]): UploadOut {
    const results: UploadResult[] = outcomes.map(resultOf);
    const count = (outcome: FileOutcome['outcome']) => outcomes.filter((o) => o.outcome === outcome).length;
    const rejected = count('rejected');
    if (rejected === outcomes.length) {
      const first = outcomes[0] as Extract<FileOutcome, { outcome: 'rejected' }>;
      const detail = outcomes.length === 1 ? first.detail : `All ${outcomes.length} files were rejected; first: ${first.detail}`;
      throw new HttpError(first.status, REJECTION_CODE[first.status] ?? 'rejected', detail, { results });
    }
    return {
      images: outcomes.flatMap((o) => (o.outcome === 'rejected' ? [] : [toImageOut(o.image)])),
      results,
      created: count('created'),
      duplicates: count('duplicate'),
      rejected,
    };
  }

  /** Removes the blobs a failed upload request wrote (unless some row refers to the same bytes). */
  private async discard(projectId: number, settled: PromiseSettledResult<PreparedFile>[], claims: BlobClaimSession): Promise<void> {
    const stored = new Map<string, string[]>();
    for (const s of settled) {
      if (s.status === 'fulfilled' && s.value.outcome === 'stored') stored.set(s.value.image.sha256, [s.value.image.blob_key, s.value.image.thumbnail_key]);
    }
    await Promise.all([...stored].map(([sha256, keys]) => this.deleteBlobsUnlessUsed(projectId, sha256, keys, claims)));
  }

  async get(caller: Caller, imageId: number): Promise<ImageOut> {
    const image = await this.visibleImage(caller, imageId, 'project.read');
    const project = { id: image.project_id, owner_id: image.owner_id };
    const role = (await this.access.roleOf(caller, project))!;
    return (await this.teams.scope.hides(caller, project, role, imageId)) ? untouchedImageOut(image) : toImageOut(image);
  }

  /** Sets the split; another user's lock on the image refuses it (409 naming the holder). */
  async update(caller: Caller, imageId: number, input: ImageUpdate): Promise<ImageOut> {
    await this.visibleImage(caller, imageId, 'images.write');
    await this.teams.locks.assertWritable(caller, imageId);
    return toImageOut(await this.images.updateSplit(imageId, input.split));
  }

  /** Deletes the image with its annotations and files; returns how many annotations went with it. */
  async delete(caller: Caller, imageId: number): Promise<{ deletedAnnotations: number }> {
    const image = await this.visibleImage(caller, imageId, 'images.delete');
    await this.teams.locks.assertWritable(caller, imageId);
    const { images, deletedAnnotations } = await this.images.deleteCounted(image.project_id, [imageId]);
    if (images.length === 0) throw new NotFoundError(notFound(imageId));
    await this.deleteBlobsOf(images);
    return { deletedAnnotations };
  }

  /**
   * Deletes the listed images the caller may delete; the others are reported as not found and left alone. When any
   * image to delete is locked by another user the whole request is refused (409 naming the images and holders) and
   * nothing is deleted.
   */
  async bulkDelete(caller: Caller, input: ImagesBulkDeleteBody): Promise<ImagesBulkDeleteOut> {
    const ids = [...new Set(input.ids)];
    const found = await this.images.findManyWithOwner(ids);
    const byProject = new Map<number, { owner_id: number; ids: number[] }>();
    for (const image of found) {
      if (input.project_id !== undefined && image.project_id !== input.project_id) continue;
      const group = byProject.get(image.project_id) ?? { owner_id: image.owner_id, ids: [] };
      group.ids.push(image.id);
      byProject.set(image.project_id, group);
    }
    const allowed: [number, number[]][] = [];
    for (const [projectId, group] of byProject) {
      const may = await this.access
        .check(caller, { id: projectId, owner_id: group.owner_id }, 'images.delete', `Project ${projectId} not found`)
        .then(() => true, (err: unknown) => {
          if (err instanceof HttpError && (err.statusCode === 403 || err.statusCode === 404)) return false;
          throw err;
        });
      if (may) allowed.push([projectId, group.ids]);
    }
    await this.teams.locks.assertNoneLocked(caller, { imageIds: allowed.flatMap(([, groupIds]) => groupIds) });
    const deleted = new Set<number>();
    let deletedAnnotations = 0;
    for (const [projectId, groupIds] of allowed) {
      const result = await this.images.deleteCounted(projectId, groupIds);
      for (const image of result.images) deleted.add(image.id);
      deletedAnnotations += result.deletedAnnotations;
      await this.deleteBlobsOf(result.images);
    }
    return { deleted: deleted.size, deleted_annotations: deletedAnnotations, not_found: ids.filter((id) => !deleted.has(id)) };
  }

  /** The original bytes of an image, found by its stored name inside the project (the name never reaches storage). */
  async file(caller: Caller, projectId: number, filename: string): Promise<StoredFile> {
    const project = await this.access.project(caller, projectId, 'project.read');
    const image = await this.images.findByFilename(projectId, filename);
    if (!image) throw new NotFoundError(`Image file "${filename}" not found in project ${projectId}`);
    const role = (await this.access.roleOf(caller, project))!;
    await this.teams.scope.assertImage(caller, project, role, image.id, `Image file "${filename}" not found in project ${projectId}`);
    return {
      filename: image.filename,
      mimeType: image.mime_type,
      size: Number(image.size_bytes),
      etag: image.sha256,
      open: () => this.blobs.stream(image.blob_key),
    };
  }

  async thumbnail(caller: Caller, imageId: number): Promise<StoredFile> {
    const image = await this.visibleImage(caller, imageId, 'project.read');
    // A video's frames are stored without thumbnails (made in the decoding, they cost FFmpeg ~0.8 CPU-s per 300 1080p frames).
    if (image.video_id !== null && (await this.blobs.size(image.thumbnail_key)) === null) await this.makeThumbnail(image);
    return {
      filename: image.filename.replace(/\.[^.]+$/, '.webp'),
      mimeType: 'image/webp',
      size: null,
      etag: image.sha256,
      open: () => this.blobs.stream(image.thumbnail_key),
    };
  }

  /** Thumbnails being made now, by key: a grid asking twice for one makes it once. */
  private readonly makingThumbnails = new Map<string, Promise<void>>();

  /**
   * Makes and stores an image's thumbnail from its original. Its key is claimed while it is written, and should the
   * image have been deleted meanwhile, the thumbnail goes again (unless another row refers to the same bytes).
   */
  private makeThumbnail(image: { project_id: number; sha256: string; blob_key: string; thumbnail_key: string }): Promise<void> {
    const key = image.thumbnail_key;
    let making = this.makingThumbnails.get(key);
    if (!making) {
      making = (async () => {
        const thumbnail = await this.ingest.thumbnailOf(await this.blobs.get(image.blob_key));
        const claims = this.claims.session();
        try {
          await claims.hold([key]);
          await this.blobs.put(key, thumbnail);
        } finally {
          await claims.release();
        }
        await this.deleteBlobsUnlessUsed(image.project_id, image.sha256, [key]);
      })().finally(() => this.makingThumbnails.delete(key));
      this.makingThumbnails.set(key, making);
    }
    return making;
  }

  private async visibleImage(caller: Caller, imageId: number, permission: 'project.read' | 'images.write' | 'images.delete') {
    const image = await this.images.findWithOwner(imageId);
    const project = image && { id: image.project_id, owner_id: image.owner_id };
    const role = await this.access.check(caller, project, permission, notFound(imageId));
    await this.teams.scope.assertImage(caller, project!, role, imageId, notFound(imageId));
    return image!;
  }

  private async deleteBlobsOf(images: DeletedImage[]): Promise<void> {
    await Promise.all(images.map((i) => this.deleteBlobsUnlessUsed(i.project_id, i.sha256, [i.blob_key, i.thumbnail_key])));
  }

  /**
   * Blobs are keyed by content, so they are removed only when no row of the project refers to those bytes and no
   * other request, of any process, is writing them (its row may be about to commit; see BlobClaims).
   */
  private async deleteBlobsUnlessUsed(projectId: number, sha256: string, keys: string[], claims?: BlobClaimSession): Promise<void> {
    await this.claims.removeUnlessUsed(keys, () => this.images.shaInUse(projectId, sha256), (key) => this.blobs.delete(key), claims);
  }
}

function resultOf(o: FileOutcome): UploadResult {
  if (o.outcome === 'rejected') return { original_name: o.originalName, outcome: o.outcome, status: o.status, detail: o.detail };
  return {
    original_name: o.originalName,
    outcome: o.outcome,
    status: o.outcome === 'created' ? 201 : 200,
    image_id: o.image.id,
    ...(o.outcome === 'duplicate' ? { detail: `Identical to image ${o.image.id} (${o.image.filename}) already in the project` } : {}),
  };
}

/** `name:value` → the attribute's name and the JSON texts its value may be stored as (a string, or a boolean or number). */
function attributeFilter(text: string): { name: string; json: string[] } {
  const colon = text.indexOf(':');
  const raw = text.slice(colon + 1);
  const json = [JSON.stringify(raw)];
  if (raw === 'true' || raw === 'false') json.push(raw);
  else if (raw.trim() !== '' && Number.isFinite(Number(raw))) json.push(JSON.stringify(Number(raw)));
  return { name: text.slice(0, colon), json };
}
