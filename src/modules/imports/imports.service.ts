import { createHash } from 'node:crypto';
import { setImmediate } from 'node:timers/promises';
import type { Insertable } from 'kysely';
import type { AnnotationsTable } from '../../db/schema.js';
import { basename, dirname, isAbsolute, relative, resolve } from 'node:path';
import type { Caller } from '../../access/caller.js';
import type { ProjectAccess, ProjectRecord } from '../../access/project-access.js';
import { isSingleLabel } from '../annotations/single-label.logic.js';
import { roleAllows } from '../../access/roles.js';
import type { Tx } from '../../db/database.js';
import type { Transactions } from '../../db/transactions.js';
import type { Annotation, DatasetItem, DatasetSource } from '../../formats/dataset.js';
import { readImage, stemOf } from '../../formats/dataset.js';
import { FormatError } from '../../formats/format-error.js';
import { readDataset, readDatasetZip } from '../../formats/readers/index.js';
import { withTracksFromFrames } from '../../formats/frame-tracks.js';
import { ConflictError, HttpError, ForbiddenError, NotFoundError, PayloadTooLargeError, ValidationError } from '../../http/errors.js';
import { attributeProblem, type AttributeSpec, type AttributeValue } from '../../imaging/class-specs.js';
import { GeometryError, parseGeometry, type AnnotationType } from '../../imaging/geometry.js';
import { ImportLedger, MAX_SKIPPED_LISTED } from '../../formats/import-ledger.js';
import { ImageRejectedError, type ProbedImage } from '../../imaging/image-probe.js';
import type { BlobClaims, BlobClaimSession } from '../../storage/blob-claims.js';
import type { BlobStore } from '../../storage/blob-store.js';
import { paletteColor } from '../classes/classes.service.js';
import { projectBlobPrefix } from '../../storage/keys.js';
import { REJECTION_STATUS, type CheckedImage, type ImageIngest } from '../images/image-ingest.service.js';
import { filenameStem, storedFilenameCandidates } from '../images/stored-filename.logic.js';
import type { LockGuard } from '../locks/lock-guard.service.js';
import type { ProjectsRepository } from '../projects/projects.repository.js';
import type { RevisionsRepository } from '../revisions/revisions.repository.js';
import { toProjectOut } from '../projects/projects.schemas.js';
import type { UploadedArchive } from './import-upload.adapter.js';
import type { ImportsRepository, NewAnnotation, NewImage } from './imports.repository.js';
import { planEntries, type EntryPlan } from './entry-pairing.logic.js';
import { matchedAnnotations } from './annotation-match.logic.js';
import { FrameVideos } from './frame-videos.logic.js';
import { ensureFolder, resolvedPath, touch } from '../../storage/local-files.js';
import {
  type ImportFolderRequest,
  type ImportIntoFolderRequest,
  type ImportIntoOptions,
  type ImportIntoOut,
  type ImportOptions,
  type ImportSkippedOut,
  type ImportSummaryOut,
  type ProjectImportedOut,
  type NewClasses,
  type OnConflict,
} from './imports.schemas.js';

export interface ImportsServiceOptions {
  readonly importRoot: string | null;
  /** Temporary files (uploaded archives, extracted datasets) go under this folder. */
  readonly workDir: string;
  /** Largest image file accepted, as for uploads. */
  readonly maxImageBytes: number;
  /** Images read, hashed and decoded at the same time. */
  readonly concurrency: number;
  /** Annotations one import may carry. */
  readonly maxAnnotations: number;
  /** Entries one archive may have, and images one dataset may list. */
  readonly maxEntries: number;
  /** An importing project not written to for this long is abandoned (its importer was killed). */
  readonly staleSeconds: number;
}

/** What an import into an existing project needs besides the importer's own parts (built once, in app.ts). */
export interface ImportIntoDeps {
  readonly access: ProjectAccess;
  readonly locks: LockGuard;
  readonly transactions: Transactions;
  readonly projects: ProjectsRepository;
  readonly revisions: RevisionsRepository;
  /** Shared with image uploads: a failed import removes a file only when no upload is writing it too. */
  readonly claims: BlobClaims;
}

/** Images written per transaction. */
const BATCH_IMAGES = 200;
/** Annotations written per transaction; the event loop gets a turn between two. */
const BATCH_ANNOTATIONS = 500;

/** An image checked, decoded and stored, waiting for its rows. */
interface PreparedImage<T extends DatasetItem = DatasetItem> {
  item: T;
  sha256: string;
  probed: StoredBytes;
  sizeBytes: number;
}

/**
 * Where `fill` writes for an import into an existing project: rows under the hidden staging project, files under
 * the target project's keys (so that moving the rows is all that is left), claimed while the import runs.
 */
interface IntoTarget {
  readonly projectId: number;
  readonly claims: BlobClaimSession;
  /** The blob keys claimed (written, or already there), by content hash: removed (unless used) when the import fails. */
  readonly written: Map<string, string[]>;
}

/** The facts of an image's bytes that its rows need, found once per content (its thumbnail is not kept). */
interface StoredBytes {
  type: ProbedImage['type'];
  width: number;
  height: number;
}

/** The classes of a dataset against a project's: matched by exact name, else case-insensitively (oldest first). */
function matchClasses(projectClasses: { id: number; name: string }[]) {
  const exact = new Map(projectClasses.map((c) => [c.name, c]));
  const folded = new Map<string, { id: number; name: string }>();
  for (const c of projectClasses) if (!folded.has(c.name.toLowerCase())) folded.set(c.name.toLowerCase(), c);
  return (name: string) => exact.get(name) ?? folded.get(name.toLowerCase());
}

/** Names, deduplicated case-insensitively, for a message: the first few, then how many more. */
function nameList(names: string[]): string {
  const shown = names.slice(0, 20).map((n) => JSON.stringify(n)).join(', ');
  return names.length > 20 ? `${shown} and ${names.length - 20} more` : shown;
}

interface ImportCounts {
  image_count: number;
  annotated_image_count: number;
  annotation_count: number;
  class_count: number;
  /** What the dataset held: read = kept + skipped, per kind. */
  ledger: ImportLedger;
}

/** The accounts of an import, for its answer. */
function accounts(ledger: ImportLedger): Pick<ImportSummaryOut, 'counts' | 'skipped' | 'skipped_count'> {
  return { counts: ledger.counts(), skipped: ledger.skippedList, skipped_count: ledger.skippedCount };
}

/**
 * `strict`: an import that would leave anything out is refused, its answer listing what would be lost. Thrown before
 * the project is published (or the staging rows merged), so the failure path removes everything written.
 */
function assertNothingSkipped(strict: boolean | undefined, ledger: ImportLedger): void {
  if (!strict || ledger.skippedCount === 0) return;
  throw new HttpError(422, 'items_skipped', `The import would leave out ${ledger.skippedCount} item(s) of the dataset (strict=true); nothing was imported`, {
    ...accounts(ledger),
  });
}

/** Entries that became images of their own while another image has their bytes, for the answer. */
function sharedReport(shared: EntryPlan['shared']): Pick<ImportSummaryOut, 'images_sharing_bytes' | 'shared_bytes'> {
  return {
    images_sharing_bytes: shared.length,
    shared_bytes: shared.slice(0, MAX_SKIPPED_LISTED).map((s) => ({ file: s.file, same_as: s.sameAs })),
  };
}

/**
 * Creates a project from a dataset archive or folder. Imports run inline (the spec answers 201 with the project): the
 * images are read from disk a few at a time, labels are streamed (COCO files are never parsed whole), rows are
 * written in short transactions with a turn of the event loop between two, and decoding runs on libuv's pool, so
 * memory stays flat and other requests keep being served. Limits on entries and annotations refuse an archive
 * (413) before anything is stored.
 *
 * All or nothing, even across a kill -9: the project is created `importing` (hidden from every reader) and becomes
 * `ready` with its counters in one statement at the end. On failure the row is deleted (its classes, images and
 * annotations go by cascade) and its blob prefix removed; after a crash, `recoverAbandoned` does the same at the next
 * start for every importing project whose importer stopped writing.
 */
export class ImportsService {
  constructor(
    private readonly imports: ImportsRepository,
    private readonly blobs: BlobStore,
    private readonly options: ImportsServiceOptions,
    private readonly log: { info(obj: object, msg: string): void },
    private readonly into: ImportIntoDeps,
    /** The ingest path uploads take too: the same checks, decode and files for every image. */
    private readonly ingest: ImageIngest,
  ) {}

  async importArchive(caller: Caller, upload: UploadedArchive): Promise<ProjectImportedOut> {
    const fallbackName = stemOf(basename(upload.originalName.replace(/\\/g, '/'))).trim() || 'Imported dataset';
    return this.withArchive(upload, upload.options.format, (source) => this.importDataset(caller, source, upload.options, fallbackName, null));
  }

  /**
   * Adds a dataset archive to an existing project (see `importInto`). The caller's access is checked before the
   * upload is read, so a refused request stores nothing.
   */
  async importArchiveInto(caller: Caller, projectId: number, readUpload: () => Promise<UploadedArchive<ImportIntoOptions>>): Promise<ImportIntoOut> {
    const target = await this.targetProject(caller, projectId);
    const upload = await readUpload();
    return this.withArchive(upload, upload.options.format, (source) => this.importInto(caller, target, source, upload.options, null));
  }

  /** Adds a dataset folder under the import root to an existing project (see `importInto`). */
  async importFolderInto(caller: Caller, projectId: number, input: ImportIntoFolderRequest): Promise<ImportIntoOut> {
    const target = await this.targetProject(caller, projectId);
    const { root, folder } = await this.folderInsideRoot(input.path);
    const source = await readDataset(folder, input.format, this.datasetLimits()).catch((error) => mapFormatError(error, folder));
    return this.importInto(caller, target, source, input, root).catch((error) => mapFormatError(error, folder));
  }

  /** Extracts an uploaded archive, runs `work` on its dataset, and removes both the upload and the extraction. */
  private async withArchive<T, O>(upload: UploadedArchive<O>, format: ImportOptions['format'], work: (source: DatasetSource) => Promise<T>): Promise<T> {
    try {
      await ensureFolder(this.options.workDir);
      const source = await readDatasetZip(upload.path, {
        format,
        workDir: this.options.workDir,
        limits: { maxEntries: this.options.maxEntries, entriesSetting: 'MAX_IMPORT_ENTRIES' },
        datasetLimits: this.datasetLimits(),
      }).catch((error) => mapFormatError(error, this.options.workDir));
      // The start-up sweep of another process removes temporary folders not written for a while: keep these fresh.
      const keepFresh = setInterval(() => touch(source.dir, dirname(upload.path)), (this.options.staleSeconds * 1000) / 4);
      keepFresh.unref();
      try {
        return await work(source).catch((error) => mapFormatError(error, source.dir));
      } finally {
        clearInterval(keepFresh);
        await source.cleanup();
      }
    } finally {
      await upload.cleanup();
    }
  }

  async importFolder(caller: Caller, input: ImportFolderRequest): Promise<ProjectImportedOut> {
    const { root, folder } = await this.folderInsideRoot(input.path);
    const source = await readDataset(folder, input.format, this.datasetLimits()).catch((error) => mapFormatError(error, folder));
    return this.importDataset(caller, source, input, basename(folder) || 'Imported dataset', root).catch((error) => mapFormatError(error, folder));
  }

  /**
   * Removes the projects of imports that will never finish (their process was killed): importing projects not written
   * to for `staleSeconds`, with their files. Idempotent; safe while other processes import (their projects are fresh).
   */
  async recoverAbandoned(): Promise<number[]> {
    const before = new Date(Date.now() - this.options.staleSeconds * 1000).toISOString();
    const abandoned = await this.imports.abandonedImports(before);
    for (const id of abandoned) {
      await this.imports.deleteProject(id);
      await this.blobs.deletePrefix(projectBlobPrefix(id));
    }
    if (abandoned.length > 0) this.log.info({ projectIds: abandoned }, 'abandoned imports removed');
    return abandoned;
  }

  private datasetLimits() {
    return { maxAnnotations: this.options.maxAnnotations, maxImages: this.options.maxEntries };
  }

  /**
   * The folder `path` names inside the import root, with links resolved. A path that leaves the root (by `..`, an
   * absolute path elsewhere or a link) is 403, whether or not it exists, so the answer tells nothing about what is
   * outside.
   */
  private async folderInsideRoot(path: string): Promise<{ root: string; folder: string }> {
    if (!this.options.importRoot) throw new ForbiddenError('Folder import is disabled: no import root is configured (IMPORT_ROOT)');
    const outside = () => new ForbiddenError('The path is outside the import root');
    let root: string;
    try {
      root = await resolvedPath(this.options.importRoot);
    } catch {
      throw new ForbiddenError('Folder import is disabled: the import root does not exist');
    }
    const lexical = resolve(root, path);
    if (!isInside(root, lexical)) throw outside();
    let folder: string;
    try {
      folder = await resolvedPath(lexical);
    } catch {
      throw ValidationError.at(['body', 'path'], 'No such folder under the import root');
    }
    if (!isInside(root, folder)) throw outside();
    return { root, folder };
  }

  private async importDataset(
    caller: Caller,
    source: DatasetSource,
    options: ImportOptions,
    fallbackName: string,
    /** For folder imports: every image file must resolve inside this root (a link inside the dataset may not lead out). */
    root: string | null,
  ): Promise<ProjectImportedOut> {
    const now = new Date().toISOString();
    const project = await this.imports.createProject({
      owner_id: caller.userId,
      name: (options.name ?? fallbackName).trim().slice(0, 200),
      description: '',
      project_type: options.project_type ?? source.projectType,
      location: '',
      created_at: now,
      updated_at: now,
      status: 'importing',
    });
    // Writes move `updated_at` too, but a slow image or a long scan may leave gaps: a beat keeps the project fresh.
    const beat = setInterval(() => void this.imports.heartbeat(project.id).catch(() => undefined), (this.options.staleSeconds * 1000) / 4);
    beat.unref();
    try {
      const counts = await this.fill(project.id, source, root);
      assertNothingSkipped(options.strict, counts.ledger);
      const { staged } = await this.imports.bytesShared(project.id, null);
      const { shared } = planEntries(staged, []);
      const row = await this.imports.publish(project.id, {
        image_count: counts.image_count,
        annotated_image_count: counts.annotated_image_count,
        annotation_count: counts.annotation_count,
        class_count: counts.class_count,
      });
      this.log.info(
        { projectId: project.id, format: source.format, images: counts.image_count, annotations: counts.annotation_count,
          imagesSharingBytes: shared.length, skipped: counts.ledger.skippedCount },
        'dataset imported',
      );
      return {
        ...toProjectOut(row),
        import: {
          format: source.format,
          entries: counts.image_count,
          images_created: counts.image_count,
          images_merged: 0,
          ...sharedReport(shared),
          annotations_created: counts.annotation_count,
          ...accounts(counts.ledger),
        },
      };
    } catch (error) {
      clearInterval(beat);
      await this.imports.deleteProject(project.id);
      await this.blobs.deletePrefix(projectBlobPrefix(project.id));
      throw error;
    } finally {
      clearInterval(beat);
    }
  }

  /**
   * The project a dataset is added to. Adding images and their labels is what uploading and annotating allow; an
   * annotator kept to their assigned images is refused (403): the new images would not be assigned to them, and the
   * labels of images they already have may land on images they cannot see.
   */
  private async targetProject(caller: Caller, projectId: number): Promise<ProjectRecord> {
    const project = await this.into.access.wholeProject(caller, projectId, 'images.write');
    await this.into.access.check(caller, project, 'annotations.write', `Project ${projectId} not found`);
    return project;
  }

  /**
   * Adds a dataset to an existing project, all or nothing. It is filled like a new project's import, into a hidden
   * staging project (so a kill -9 leaves nothing the recovery does not remove), with its files stored under the
   * target's keys; then one transaction matches its classes to the project's by name, gives the labels of images
   * whose bytes the project already has to those images, moves the rest of its rows into the project with a `create`
   * revision per annotation, and moves the project's counters by what moved. Any failure removes the staging rows
   * and the files no row uses: the project is left as it was.
   */
  private async importInto(caller: Caller, target: ProjectRecord, source: DatasetSource, options: ImportIntoOptions, root: string | null): Promise<ImportIntoOut> {
    const newClasses = options.new_classes ?? 'create';
    // Classes the dataset declares are checked before anything is stored; those named only by its labels, at the end.
    const declared = matchClasses(await this.imports.classesOf(target.id));
    await this.assertMayAddClasses(caller, target, source.classes.filter((name) => !declared(name)), newClasses);
    const now = new Date().toISOString();
    const staging = await this.imports.createProject({
      owner_id: caller.userId,
      name: `Import into project ${target.id}`,
      description: '',
      project_type: target.project_type,
      location: '',
      created_at: now,
      updated_at: now,
      status: 'importing',
    });
    const beat = setInterval(() => void this.imports.heartbeat(staging.id).catch(() => undefined), (this.options.staleSeconds * 1000) / 4);
    beat.unref();
    const into: IntoTarget = { projectId: target.id, claims: this.into.claims.session(), written: new Map() };
    try {
      const counts = await this.fill(staging.id, source, root, into);
      assertNothingSkipped(options.strict, counts.ledger);
      const onConflict = options.on_conflict ?? 'skip';
      const merged = await this.into.transactions.run(async (tx) => {
        const out = await this.mergeStaging(caller, target, staging.id, newClasses, onConflict, counts.ledger, tx);
        assertNothingSkipped(options.strict, counts.ledger);
        return out;
      });
      const project = await this.into.projects.find(target.id);
      if (!project) throw new NotFoundError(`Project ${target.id} not found`);
      this.log.info(
        { projectId: target.id, format: source.format, imagesCreated: merged.imagesCreated, imagesMerged: merged.imagesMerged,
          annotations: merged.annotations, classesCreated: merged.created.length, imagesSharingBytes: merged.shared.length,
          skipped: counts.ledger.skippedCount },
        'dataset imported into a project',
      );
      return {
        project_id: target.id,
        format: source.format,
        entries: counts.image_count,
        images_created: merged.imagesCreated,
        images_merged: merged.imagesMerged,
        ...sharedReport(merged.shared),
        annotations_created: merged.annotations,
        classes_created: merged.created,
        classes_matched: merged.matched,
        conflicts: { on_conflict: onConflict, ...merged.conflicts },
        ...accounts(counts.ledger),
        project: toProjectOut(project),
      };
    } catch (error) {
      clearInterval(beat);
      await this.imports.deleteProject(staging.id);
      await this.discardBlobs(target.id, into);
      throw error;
    } finally {
      clearInterval(beat);
      await into.claims.release();
    }
  }

  /** Refuses classes the project lacks: by the request's choice (422), or for want of `classes.write` (403). */
  private async assertMayAddClasses(caller: Caller, target: ProjectRecord, missing: string[], newClasses: NewClasses): Promise<void> {
    const names = [...new Map(missing.map((name) => [name.toLowerCase(), name])).values()];
    if (names.length === 0) return;
    if (newClasses === 'refuse') {
      throw new HttpError(422, 'unknown_classes', `The dataset's classes ${nameList(names)} are not classes of project ${target.id} `
        + '(new_classes=refuse); nothing was imported');
    }
    const role = await this.into.access.roleOf(caller, target);
    if (!role || !roleAllows(role, 'classes.write')) {
      throw new ForbiddenError(`The dataset's classes ${nameList(names)} are not classes of project ${target.id}, and your role (${role}) `
        + 'does not allow classes.write to create them; nothing was imported');
    }
  }

  /** The one transaction that moves a filled staging project's rows into the target project (see `importInto`). */
  private async mergeStaging(caller: Caller, target: ProjectRecord, stagingId: number, newClasses: NewClasses, onConflict: OnConflict, ledger: ImportLedger, tx: Tx) {
    // First, before any row lock: uploads of bytes the project has answer them as duplicates only while no import
    // adds those bytes unseen, and the entries are paired with the project's images as they stand.
    await this.imports.lockImageWrites(target.id, tx);
    if (!(await this.into.projects.find(target.id, tx))) throw new NotFoundError(`Project ${target.id} not found`);
    const projectClasses = await this.imports.classesOf(target.id, tx);
    const stagingClasses = await this.imports.classesOf(stagingId, tx);
    const match = matchClasses(projectClasses);
    await this.assertMayAddClasses(caller, target, stagingClasses.filter((c) => !match(c.name)).map((c) => c.name), newClasses);
    const matched = new Set<string>();
    const created: string[] = [];
    /** Classes moved into the project, by lower-cased name: a dataset's "Car" and "car" become one class. */
    const moved = new Map<string, number>();
    for (const cls of stagingClasses) {
      const existing = match(cls.name);
      if (existing) {
        matched.add(existing.name);
        await this.imports.remapClass(cls.id, existing.id, tx);
        continue;
      }
      const same = moved.get(cls.name.toLowerCase());
      if (same !== undefined) {
        await this.imports.remapClass(cls.id, same, tx);
        continue;
      }
      await this.imports.moveClass(cls.id, target.id, paletteColor(projectClasses.length + created.length), tx);
      moved.set(cls.name.toLowerCase(), cls.id);
      created.push(cls.name);
    }

    // Labels of entries whose bytes the project has go onto its images, one entry per image (see planEntries): all or
    // nothing, so another user's lock on one refuses the import.
    const { staged, existing } = await this.imports.bytesShared(stagingId, target.id, tx);
    const { merges, shared } = planEntries(staged, existing);
    let annotatedBefore = 0;
    let conflicts = { matched: 0, skipped: 0, replaced: 0, annotatedLost: 0 };
    if (merges.length > 0) {
      await this.into.locks.assertNoneLocked(caller, { imageIds: merges.map((m) => m.into) }, tx);
      conflicts = await this.resolveConflicts(caller, merges, onConflict, tx);
    }
    if (isSingleLabel(target)) await this.keepOneClass(target.id, stagingId, merges, ledger, tx);
    if (merges.length > 0) annotatedBefore = await this.imports.mergeEntries(merges, tx);
    await this.renameClashes(stagingId, target.id, tx);
    await this.into.revisions.insertCreatesOfProject(stagingId, target.id, caller.userId, new Date().toISOString(), tx);
    const rows = await this.imports.moveRows(stagingId, target.id, tx);
    await this.into.projects.bumpCounters(target.id, {
      image_count: rows.images,
      annotation_count: rows.annotations - conflicts.replaced,
      annotated_image_count: rows.annotatedImages + annotatedBefore - conflicts.annotatedLost,
      class_count: created.length,
    }, tx);
    await this.imports.deleteProject(stagingId, tx);
    const { annotatedLost: _, ...conflictCounts } = conflicts;
    return { imagesCreated: rows.images, imagesMerged: merges.length, annotations: rows.annotations, created, matched: [...matched], shared, conflicts: conflictCounts };
  }

  /**
   * The annotations of merged entries against those their images already have (classes already remapped to the
   * project's): each one matching an existing annotation (same class, type and geometry within 0.5 px) is counted;
   * `skip` deletes those staged ones, `replace` deletes every annotation of the image (with a `delete` revision), so
   * that the entry's take their place; `append` changes nothing. `annotatedLost`: images `replace` emptied.
   */
  private async resolveConflicts(caller: Caller, merges: { staged: number; into: number }[], onConflict: OnConflict, tx: Tx) {
    const result = { matched: 0, skipped: 0, replaced: 0, annotatedLost: 0 };
    const staged = await this.imports.annotationsOfImages(merges.map((m) => m.staged), tx);
    const existing = await this.imports.annotationsOfImages(merges.map((m) => m.into), tx);
    const byImage = <T extends { image_id: number }>(rows: T[]) => {
      const map = new Map<number, T[]>();
      for (const row of rows) map.set(row.image_id, [...(map.get(row.image_id) ?? []), row]);
      return map;
    };
    const stagedOf = byImage(staged);
    const existingOf = byImage(existing);
    const dropped: { id: number; image_id: number }[] = [];
    const now = new Date().toISOString();
    for (const { staged: stagedId, into } of merges) {
      const incoming = stagedOf.get(stagedId) ?? [];
      const have = existingOf.get(into) ?? [];
      const matched = matchedAnnotations(incoming, have);
      result.matched += matched.size;
      if (onConflict === 'skip') {
        for (const row of incoming) if (matched.has(row.id)) dropped.push(row);
        result.skipped += matched.size;
      } else if (onConflict === 'replace' && have.length > 0) {
        await this.into.revisions.insertDeletesOfImage(into, caller.userId, now, tx);
        await this.imports.deleteAnnotations(have, tx);
        result.replaced += have.length;
        result.annotatedLost++;
      }
    }
    await this.imports.deleteAnnotations(dropped, tx);
    return result;
  }

  /**
   * A single-label project keeps one class per image (issue 30): of an entry's classifications the first is kept,
   * and none when the project's image it merges into already has one; each one left out is accounted, with why.
   */
  private async keepOneClass(projectId: number, stagingId: number, merges: { staged: number; into: number }[], ledger: ImportLedger, tx: Tx): Promise<void> {
    const staged = await this.imports.classifications({ projectId: stagingId }, tx);
    if (staged.length === 0) return;
    const into = new Map(merges.map((m) => [m.staged, m.into]));
    const had = new Map<number, string>();
    for (const row of (await this.imports.classifications({ imageIds: [...into.values()] }, tx)).reverse()) had.set(row.image_id, row.class_name);
    const kept = new Map<number, string>();
    const dropped: typeof staged = [];
    for (const row of staged) {
      const before = had.get(into.get(row.image_id) ?? 0);
      const first = kept.get(row.image_id);
      if (before === undefined && first === undefined) {
        kept.set(row.image_id, row.class_name);
        continue;
      }
      const reason = before !== undefined
        ? `project ${projectId} is single-label and the image already has class "${before}"`
        : `project ${projectId} is single-label; the entry's first class "${first}" was kept`;
      ledger.drop('annotations', 'classification', { file: row.original_name, item: `classification (class "${row.class_name}")`, reason });
      dropped.push(row);
    }
    await this.imports.deleteAnnotations(dropped, tx);
  }

  /** Staging images whose stored name the project already uses get the next free one, as an upload would. */
  private async renameClashes(stagingId: number, projectId: number, tx: Tx): Promise<void> {
    const clashes = await this.imports.filenameClashes(stagingId, projectId, tx);
    if (clashes.length === 0) return;
    const candidates = clashes.map((c) => {
      const ext = c.blob_key.slice(c.blob_key.lastIndexOf('.') + 1);
      return [...storedFilenameCandidates(c.original_name, ext, c.sha256), `${c.sha256}.${ext}`];
    });
    const taken = await this.imports.takenFilenames([stagingId, projectId], candidates.flat(), tx);
    for (const [i, clash] of clashes.entries()) {
      const filename = candidates[i]!.find((name) => !taken.has(name));
      if (!filename) throw new ConflictError(`No free file name for "${clash.original_name}" in project ${projectId}; nothing was imported`);
      taken.add(filename);
      await this.imports.renameImage(clash.id, filename, tx);
    }
  }

  /** Removes the files a failed import into a project held, unless a row of the project or another writer uses them. */
  private async discardBlobs(projectId: number, into: IntoTarget): Promise<void> {
    for (const [sha256, keys] of into.written) {
      await this.into.claims.removeUnlessUsed(keys, () => this.imports.shaInUse(projectId, sha256), (key) => this.blobs.delete(key), into.claims);
    }
  }

  /**
   * Classes, then images in dataset order (a few prepared at once), written in batches. Labels come with their images,
   * or (COCO) apart: then the images are stored first and the labels streamed after them, so that neither the
   * archive's labels nor its images' rows are ever all in memory. Every entry the dataset lists becomes an image
   * with its own labels, byte-identical ones too (issue 18); their bytes are stored once. With `into` (an import into
   * an existing project), the files go under that project's keys.
   */
  private async fill(projectId: number, dataset: DatasetSource, root: string | null, into?: IntoTarget): Promise<ImportCounts> {
    // Datumaro keeps a video's tracks as the `track_id` attribute of each frame's shapes (CVAT's and Versa's exports):
    // a Datumaro dataset whose classes declare one is read again as video. (COCO keeps the ids as attribute values.)
    const tracked = [...(dataset.classSpecs?.values() ?? [])].some((spec) => spec.attributes?.some((a) => a.name === 'track_id'));
    const source = tracked && dataset.format === 'datumaro' && !dataset.tracks ? await withTracksFromFrames(dataset) : dataset;
    const blobProjectId = into?.projectId ?? projectId;
    const ledger = source.ledger ?? new ImportLedger();
    const counts: ImportCounts = { image_count: 0, annotated_image_count: 0, annotation_count: 0, class_count: 0, ledger };
    const classIds = new Map<string, number>();
    const classId = async (name: string): Promise<number> => {
      let id = classIds.get(name);
      if (id === undefined) {
        const spec = source.classSpecs?.get(name);
        id = await this.imports.insertClass(projectId, name, paletteColor(classIds.size), {
          skeleton: spec?.skeleton ? JSON.stringify(spec.skeleton) : null,
          attributes: spec?.attributes?.length ? JSON.stringify(spec.attributes) : null,
        });
        classIds.set(name, id);
        counts.class_count++;
      }
      return id;
    };
    for (const name of source.classes) await classId(name);
    /** The row of an annotation, or null when it cannot be stored (it is accounted as skipped, with the reason). */
    const annotationRow = async (annotation: Annotation, size: { width: number; height: number }, createdAt: string, file: string, index: number): Promise<NewAnnotation | null> => {
      const what = `annotation ${index + 1} (${annotation.type}, class "${annotation.className}")`;
      const geometry = storedGeometry(annotation, size);
      if (typeof geometry === 'string') {
        ledger.skip('annotations', annotation.type, { file, item: what, reason: geometry });
        return null;
      }
      if (counts.annotation_count >= this.options.maxAnnotations) {
        throw new PayloadTooLargeError(`The dataset has more than ${this.options.maxAnnotations} annotations (MAX_IMPORT_ANNOTATIONS)`);
      }
      ledger.keep('annotations', annotation.type);
      counts.annotation_count++;
      return {
        project_id: projectId,
        class_id: await classId(annotation.className),
        annotation_type: annotation.type,
        geometry: JSON.stringify(geometry),
        confidence: null,
        source: 'import',
        created_at: createdAt,
        updated_at: createdAt,
        attributes: keptAttributes(annotation, source.classSpecs?.get(annotation.className)?.attributes ?? [], ledger, file, what),
        group_id: annotation.groupId ?? null,
      };
    };

    const apart = source.labelsApart?.();
    /** Where the labels of an item stored apart go: its image's id, size and file. */
    const targets = new Map<string, { id: number; width: number; height: number; file: string }>();
    const taken = new Set<string>();
    let images: NewImage[] = [];
    let keys: (string | undefined)[] = [];
    let annotations = new Map<string, NewAnnotation[]>();
    const flush = async () => {
      if (apart) {
        const ids = await this.imports.insertImages(images);
        images.forEach((image, i) => targets.set(keys[i]!, { id: ids.get(image.filename)!, width: image.width, height: image.height, file: image.original_name }));
      } else {
        await this.imports.insertBatch(images, annotations);
      }
      images = [];
      keys = [];
      annotations = new Map();
      await setImmediate();
    };

    const videos = new FrameVideos(projectId, source, (values) => this.imports.insertVideo(values));
    const items: AsyncIterable<DatasetItem & { key?: string }> = apart ? apart.items() : source.items();
    for await (const prepared of this.prepareAll(projectId, items, root, into)) {
      const { item, sha256, probed, sizeBytes } = prepared;
      if (counts.image_count >= this.options.maxEntries) {
        throw new PayloadTooLargeError(`The dataset has more than ${this.options.maxEntries} images (MAX_IMPORT_ENTRIES)`);
      }
      const filename = freeFilename(item.fileName, probed.type.ext, sha256, taken);
      taken.add(filename);
      const size = { width: probed.width, height: probed.height };
      const rows: NewAnnotation[] = [];
      const createdAt = new Date().toISOString();
      ledger.keep('images');
      for (let i = 0; i < item.annotations.length; i++) {
        const row = await annotationRow(item.annotations[i], size, createdAt, item.fileName, i);
        if (row) rows.push(row);
      }
      images.push({
        project_id: projectId,
        filename,
        original_name: item.fileName.slice(0, 255),
        split: item.split,
        ...this.ingest.columns(blobProjectId, sha256, sizeBytes, probed),
        annotation_count: rows.length,
        created_at: createdAt,
        ...(item.video ? await videos.frame(item.video, size) : {}),
      });
      keys.push(item.key);
      if (rows.length > 0) annotations.set(filename, rows);
      counts.image_count++;
      if (rows.length > 0) counts.annotated_image_count++;
      if (images.length >= BATCH_IMAGES) await flush();
    }
    await flush();
    if (counts.image_count === 0) throw new HttpError(422, 'invalid_dataset', 'The dataset contains no images');
    if (apart) await this.fillLabelsApart(apart.annotations(), targets, annotationRow, counts);
    await videos.finish((values) => this.imports.setVideoLength(...values));
    await this.imports.insertTracks(await videos.trackRows(ledger, classId, source.classSpecs, (values, className, file, what) =>
      keptAttributes({ attributes: values } as Annotation, source.classSpecs?.get(className)?.attributes ?? [], ledger, file, what)));
    return counts;
  }

  /** Streams labels kept apart from their images into rows, a batch per transaction, then sets the images' counts. */
  private async fillLabelsApart(
    labels: AsyncIterable<{ itemKey: string; annotation: Annotation }>,
    targets: Map<string, { id: number; width: number; height: number; file: string }>,
    annotationRow: (annotation: Annotation, size: { width: number; height: number }, createdAt: string, file: string, index: number) => Promise<NewAnnotation | null>,
    counts: ImportCounts,
  ): Promise<void> {
    const perImage = new Map<number, number>();
    const seen = new Map<number, number>();
    let rows: Insertable<AnnotationsTable>[] = [];
    const createdAt = new Date().toISOString();
    for await (const { itemKey, annotation } of labels) {
      const target = targets.get(itemKey);
      if (!target) {
        counts.ledger.skip('annotations', annotation.type, { file: itemKey, item: `annotation (${annotation.type}, class "${annotation.className}")`, reason: 'its image is not in the dataset' });
        continue;
      }
      const index = seen.get(target.id) ?? 0;
      seen.set(target.id, index + 1);
      const row = await annotationRow(annotation, target, createdAt, target.file, index);
      if (!row) continue;
      rows.push({ ...row, image_id: target.id });
      perImage.set(target.id, (perImage.get(target.id) ?? 0) + 1);
      if (rows.length >= BATCH_ANNOTATIONS) {
        await this.imports.insertAnnotations(rows);
        rows = [];
        await setImmediate();
      }
    }
    await this.imports.insertAnnotations(rows);
    const perImageCounts = [...perImage];
    for (let i = 0; i < perImageCounts.length; i += BATCH_IMAGES) {
      await this.imports.setImageCounts(perImageCounts.slice(i, i + BATCH_IMAGES));
      await setImmediate();
    }
    counts.annotated_image_count = perImage.size;
  }

  /**
   * Reads, checks and stores the images with up to `concurrency` in flight, yielding them in dataset order. When one
   * fails, the others in flight are awaited before the error surfaces, so no blob is written after the clean-up.
   */
  private async *prepareAll<T extends DatasetItem>(projectId: number, items: AsyncIterable<T>, root: string | null, into?: IntoTarget): AsyncGenerator<PreparedImage<T>> {
    const window: Promise<PreparedImage<T>>[] = [];
    /** Each content is decoded and stored once, by its first entry; the others wait for it. */
    const stored = new Map<string, Promise<StoredBytes>>();
    try {
      for await (const item of items) {
        const prepared = this.prepare(projectId, item, root, stored, into);
        // It may fail while an earlier one is awaited; marked handled here, its error still surfaces when awaited.
        prepared.catch(() => undefined);
        window.push(prepared);
        if (window.length >= this.options.concurrency) yield await window.shift()!;
      }
      while (window.length > 0) yield await window.shift()!;
    } finally {
      await Promise.allSettled(window);
    }
  }

  /**
   * The same checks as an upload (magic number, size, pixel limit, decodable), then the blobs (keyed by content; for
   * an import into a project, under its keys, claimed and remembered for the clean-up). Bytes already met in this
   * import are neither decoded nor stored again.
   */
  private async prepare<T extends DatasetItem>(
    projectId: number,
    item: T,
    root: string | null,
    stored: Map<string, Promise<StoredBytes>>,
    into?: IntoTarget,
  ): Promise<PreparedImage<T>> {
    if (root && 'path' in item.source && !isInside(root, await resolvedPath(item.source.path))) {
      throw new ForbiddenError(`Image ${item.fileName} links outside the import root`);
    }
    const bytes = await readImage(item.source);
    if (bytes.length > this.options.maxImageBytes) {
      throw new PayloadTooLargeError(`Image ${item.fileName} is larger than the limit of ${Math.round(this.options.maxImageBytes / 1024 ** 2)} MB per image`);
    }
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    let facts = stored.get(sha256);
    if (!facts) {
      facts = this.store(projectId, item, bytes, sha256, into);
      stored.set(sha256, facts);
    }
    return { item, sha256, probed: await facts, sizeBytes: bytes.length };
  }

  /** Checks and decodes the first entry of some bytes, then stores them (unless the project into which it goes has them). */
  private async store(projectId: number, item: DatasetItem, bytes: Buffer, sha256: string, into?: IntoTarget): Promise<StoredBytes> {
    let checked: CheckedImage;
    try {
      checked = await this.ingest.check(bytes);
    } catch (error) {
      if (!(error instanceof ImageRejectedError)) throw error;
      throw new HttpError(REJECTION_STATUS[error.reason], 'invalid_image', `Image ${item.fileName}: ${error.message}`);
    }
    const { type, width, height } = checked.probed;
    const keys = this.ingest.keys(into?.projectId ?? projectId, sha256, type);
    if (into) {
      // Claimed before looking: a delete of the project's image of these bytes from now on leaves its files in place.
      await into.claims.hold([keys.blobKey, keys.thumbnailKey]);
      into.written.set(sha256, [keys.blobKey, keys.thumbnailKey]);
      if (await this.imports.hasImage(into.projectId, sha256)) return { type, width, height };
    }
    await this.ingest.store(keys, bytes, checked, 'import');
    return { type, width, height };
  }
}

/**
 * The stored name of an entry: the first free of an upload's candidates, then (for entries of the same name and bytes,
 * in different folders of the dataset) the hash-suffixed name numbered.
 */
function freeFilename(fileName: string, ext: string, sha256: string, taken: Set<string>): string {
  const free = storedFilenameCandidates(fileName, ext, sha256).find((name) => !taken.has(name));
  if (free) return free;
  const stem = filenameStem(fileName);
  for (let n = 2; ; n++) {
    const name = `${stem}-${sha256.slice(0, 8)}-${n}.${ext}`;
    if (!taken.has(name)) return name;
  }
}

function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/**
 * The geometry to store, validated like the annotations API does (shapes cut to the image), or why the API would
 * refuse it (no area inside the image...): datasets in the wild carry such degenerate labels; they are skipped and
 * accounted for rather than refusing the whole dataset (`strict` refuses it).
 */
function storedGeometry(annotation: Annotation, size: { width: number; height: number }): object | string {
  try {
    return parseGeometry(annotation.type as AnnotationType, annotation.geometry as Record<string, unknown>, size);
  } catch (error) {
    if (error instanceof GeometryError) return error.path.length > 0 ? `${error.message} (at ${error.path.join('.')})` : error.message;
    throw error;
  }
}

/** The annotation's attribute values its class declares, as the row stores them; the others are skipped with why. */
function keptAttributes(annotation: Annotation, specs: readonly AttributeSpec[], ledger: ImportLedger, file: string, what: string): string | null {
  if (!annotation.attributes) return null;
  const kept: Record<string, AttributeValue> = {};
  for (const [name, value] of Object.entries(annotation.attributes)) {
    const spec = specs.find((s) => s.name === name);
    const problem = spec ? attributeProblem(spec, value) : 'the class declares no such attribute';
    if (problem) {
      ledger.skip('attributes', '', { file, item: `attribute "${name}" of ${what}`, reason: problem });
      continue;
    }
    kept[name] = value;
    ledger.keep('attributes');
  }
  return Object.keys(kept).length > 0 ? JSON.stringify(kept) : null;
}

/**
 * A dataset that cannot be read: too large an archive is 413, anything else (layout, labels, unsafe entries) 422.
 * Messages name files by their path in the dataset: the server's folder they were extracted to (`dir`) is cut out.
 */
function mapFormatError(error: unknown, dir: string | null): never {
  // Readers name files by their last folders at most; the extraction folder's own name goes too.
  const scrub = (message: string) => (dir ? message.split(`${dir}/`).join('').split(dir).join('.').split(`${basename(dir)}/`).join('') : message);
  if (error instanceof FormatError) {
    if (error.code === 'archive_too_large') throw new PayloadTooLargeError(scrub(error.message));
    throw new HttpError(422, error.code, scrub(error.message));
  }
  if (error instanceof HttpError && dir && error.message.includes(dir)) {
    (error as { message: string }).message = scrub(error.message);
  }
  throw error;
}
