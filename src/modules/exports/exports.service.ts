import { randomBytes } from 'node:crypto';
import { PassThrough, type Readable } from 'node:stream';
import type { Caller } from '../../access/caller.js';
import type { ProjectAccess } from '../../access/project-access.js';
import type { ClassSpec, DatasetToWrite, ProjectType, Split, Tallies, WriteStats } from '../../formats/dataset.js';
import { FormatError } from '../../formats/format-error.js';
import { withTracksFromFrames } from '../../formats/frame-tracks.js';
import { WRITERS, type ExportWriter } from '../../formats/writers/index.js';
import { ConflictError, NotFoundError, ValidationError } from '../../http/errors.js';
import type { Metrics } from '../../lib/metrics.js';
import type { BlobStore } from '../../storage/blob-store.js';
import { exportBlobKey } from '../../storage/keys.js';
import { pagedItems, scopedPages, versionItems, type PageSource } from './export-dataset.service.js';
import { FrameTracks } from './frame-tracks.logic.js';
import type { AnnotationCursor, ExportsRepository, PageCursor } from './exports.repository.js';
import { toExportOut, type ExportAccountingOut, type ExportFormatName, type ExportOut, type ExportRequest } from './exports.schemas.js';

/** What an export is kept to besides the request: the project images a pipeline selected. */
export interface ExportScope {
  readonly imageIds?: readonly number[];
}

const scoped = (source: PageSource, ids: number[] | undefined): PageSource => (ids ? scopedPages(source, ids) : source);

/** An export file ready to be sent. */
export interface ExportFile {
  readonly filename: string;
  readonly contentType: string;
  readonly size: number;
  open(): Readable;
}

/** `Factory Floor #2` → `factory-floor-2`: the readable part of an export's file name (never trusted for storage). */
export function slugOf(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40)
    .replace(/-+$/, '');
  return slug || 'project';
}

const EXPORT_FILENAME = /^[a-z0-9][a-z0-9-]*-[0-9a-f]{16}\.[a-z]+$/;

/**
 * `{project-slug}-{v3|project}-{format}-{random}.{ext}`: readable, and unguessable by its 64 random bits (the name
 * is still checked against the caller's access on download).
 */
export function exportFilename(projectName: string, versionNumber: number | null, format: ExportFormatName, extension: string): string {
  const what = versionNumber === null ? 'project' : `v${versionNumber}`;
  return `${slugOf(projectName)}-${what}-${format.replace('_', '-')}-${randomBytes(8).toString('hex')}.${extension}`;
}

/**
 * Exports are written inline: the request answers once the file is stored. The dataset streams from the database in
 * pages into the writer and from the writer into the blob store, so memory stays flat whatever the size, and the
 * reading yields between pages so the event loop keeps serving other requests while a large export runs.
 */
export class ExportsService {
  constructor(
    private readonly exports: ExportsRepository,
    private readonly access: ProjectAccess,
    private readonly blobs: BlobStore,
    private readonly metrics: Metrics,
  ) {}

  /** The project's class names in order, and the skeletons and attribute specs they declare. */
  private async projectClassList(projectId: number): Promise<Pick<DatasetToWrite, 'classes' | 'classSpecs'>> {
    return classList(await this.exports.projectClasses(projectId));
  }

  /**
   * `scope.imageIds` keeps the export to those project images (a pipeline's selection; a version's images made from
   * them when a version is exported).
   */
  async export(caller: Caller, projectId: number, input: ExportRequest, scope: ExportScope = {}): Promise<ExportOut> {
    const project = await this.access.wholeProject(caller, projectId, 'export');
    const version = input.version_id == null ? null : await this.readyVersion(projectId, input.version_id);
    const writer = WRITERS[input.format];
    const filename = exportFilename(project.name, version?.number ?? null, input.format, writer.extension);
    const blobKey = exportBlobKey(projectId, filename);
    const annotatedOnly = input.include_unannotated === false;
    const controller = new AbortController();
    const ids = scope.imageIds && (version ? await this.exports.versionImageIdsOf(version.id, scope.imageIds) : [...scope.imageIds].sort((a, b) => a - b));
    const dataset: DatasetToWrite = version
      ? await this.versionDataset(version.id, project.project_type as ProjectType, annotatedOnly, controller.signal, ids)
      : await this.projectDataset(projectId, project.project_type as ProjectType, annotatedOnly, input.include_predictions === true, controller.signal, ids);
    const { stats, bytes } = await this.writeBlob(blobKey, writer, dataset, controller);
    this.metrics.throughput('export', stats.imageCount, bytes);
    try {
      const row = await this.exports.insert({
        project_id: projectId,
        version_id: version?.id ?? null,
        format: input.format,
        filename,
        blob_key: blobKey,
        size_bytes: bytes,
        image_count: stats.imageCount,
        annotation_count: stats.annotationCount,
        include_unannotated: annotatedOnly ? 0 : 1,
        created_by: caller.userId,
        created_at: new Date().toISOString(),
      });
      // What the format could not hold as it is: said in the answer, never dropped silently.
      return {
        ...toExportOut(row),
        ...(stats.kept ? { shapes_kept: stats.kept } : {}),
        ...(stats.converted ? { shapes_converted: stats.converted } : {}),
        ...(stats.skipped ? { shapes_skipped: stats.skipped } : {}),
        accounting: accountingOf(stats),
      };
    } catch (error) {
      await this.blobs.delete(blobKey);
      throw error;
    }
  }

  /** A project's images with their annotations, and its videos with their tracks (frames carry their tracks' shapes). */
  private async projectDataset(projectId: number, projectType: ProjectType, annotatedOnly: boolean, predictions: boolean, signal: AbortSignal, ids?: number[]): Promise<DatasetToWrite> {
    const { tracks, keyframes } = await this.exports.projectTracks(projectId);
    const frames = new FrameTracks(await this.exports.projectVideos(projectId), tracks, keyframes);
    return {
      ...(await this.projectClassList(projectId)),
      projectType,
      videos: frames.videos,
      tracks: frames.tracks,
      items: pagedItems(
        scoped({
          images: (cursor) => this.exports.projectImages(projectId, cursor),
          annotations: (cursor) => this.exports.projectAnnotations(projectId, cursor, predictions),
        }, ids),
        this.blobs,
        annotatedOnly,
        signal,
        undefined,
        frames,
      ),
    };
  }

  /**
   * A version's outputs with their frozen annotations. Its frames name their video, and its tracks are read back from
   * the frames' shapes that carry `track_id` (keyframes where the track had them, `outside` where it leaves the
   * frames): a first pass over the annotations, made only for a version that holds frames.
   */
  private async versionDataset(versionId: number, projectType: ProjectType, annotatedOnly: boolean, signal: AbortSignal, ids?: number[]): Promise<DatasetToWrite> {
    const frames = new FrameTracks(await this.exports.versionVideos(versionId), [], []);
    const pages = (split: Split) => scoped({
      images: (cursor: PageCursor) => this.exports.versionImages(versionId, split, cursor),
      annotations: (cursor: AnnotationCursor) => this.exports.versionAnnotations(versionId, split, cursor),
    }, ids);
    const items = () => versionItems(pages, this.blobs, annotatedOnly, signal, undefined, frames);
    const classes = classList(await this.exports.versionClasses(versionId));
    const tracked = frames.videos.length === 0 ? undefined : await withTracksFromFrames({
      format: 'datumaro',
      projectType,
      ...classes,
      async *items() {
        for await (const item of items()) if (item.video) yield item;
      },
    });
    return { ...classes, projectType, videos: frames.videos, tracks: tracked?.tracks ?? [], items: items() };
  }

  /** The file of an export, to a caller who may read its project; every other name is 404. */
  async file(caller: Caller, filename: string): Promise<ExportFile> {
    // Only names shaped like the ones exportFilename makes reach the database (a NUL byte, say, never does).
    const row = EXPORT_FILENAME.test(filename) ? await this.exports.findByFilename(filename) : undefined;
    await this.access.check(caller, row && { id: row.project_id, owner_id: row.owner_id }, 'project.read', `Export file "${filename}" not found`);
    await this.access.wholeProject(caller, row!.project_id, 'project.read');
    const found = row!;
    const size = await this.blobs.size(found.blob_key);
    if (size === null) throw new NotFoundError(`Export file "${filename}" not found`);
    return {
      filename: found.filename,
      contentType: WRITERS[found.format as ExportFormatName]?.contentType ?? 'application/octet-stream',
      size,
      open: () => this.blobs.stream(found.blob_key),
    };
  }

  private async readyVersion(projectId: number, versionId: number) {
    const version = await this.exports.findVersion(versionId);
    if (!version || version.project_id !== projectId) throw new NotFoundError(`Version ${versionId} not found in project ${projectId}`);
    if (version.status !== 'ready') {
      throw new ConflictError(`Version ${versionId} is ${version.status}; only a ready version can be exported`);
    }
    return version;
  }

  /**
   * Streams the writer's output into the blob store. Either side failing fails both: the blob store writes to a
   * temporary name and renames only a complete file, so a failed export leaves no file behind.
   */
  private async writeBlob(
    key: string,
    writer: ExportWriter,
    dataset: DatasetToWrite,
    controller: AbortController,
  ): Promise<{ stats: WriteStats; bytes: number }> {
    const output = new PassThrough({ highWaterMark: 1 << 20 });
    const stored = this.blobs.putStream(key, output);
    // A store that fails while the writer waits for `drain` would leave the writer waiting forever; racing it ends the export.
    const storeFailed = stored.then(
      () => new Promise<never>(() => undefined),
      (error: unknown) => Promise.reject(error),
    );
    storeFailed.catch(() => undefined);
    try {
      const stats = await Promise.race([writer.write(dataset, output), storeFailed]);
      return { stats, bytes: await stored };
    } catch (error) {
      controller.abort();
      // Destroyed without the error: the blob store may not listen on the stream yet, and it only needs to stop.
      output.destroy();
      await stored.catch(() => undefined);
      if (error instanceof FormatError) throw ValidationError.at(['body', 'format'], error.message);
      throw error;
    }
  }
}

/** Class names in order, and the skeletons and attribute specs those that declare any have. */
function classList(rows: { name: string; skeleton: string | null; attributes: string | null }[]): Pick<DatasetToWrite, 'classes' | 'classSpecs'> {
  const classSpecs = new Map<string, ClassSpec>();
  for (const row of rows) {
    if (row.skeleton === null && row.attributes === null) continue;
    classSpecs.set(row.name, {
      ...(row.skeleton !== null ? { skeleton: JSON.parse(row.skeleton) } : {}),
      ...(row.attributes !== null ? { attributes: JSON.parse(row.attributes) } : {}),
    });
  }
  return { classes: rows.map((c) => c.name), classSpecs };
}

/** What the writer did with every shape, attribute value, group and track it was given (ExportAccountingOut). */
function accountingOf(stats: WriteStats): ExportAccountingOut {
  const outcomes = (t: Tallies | undefined) => ({ kept: t?.kept ?? {}, converted: t?.converted ?? {}, skipped: t?.skipped ?? {} });
  return {
    shapes: outcomes(stats),
    attributes: outcomes(stats.extras?.attributes),
    groups: outcomes(stats.extras?.groups),
    tracks: outcomes(stats.extras?.tracks),
  };
}
