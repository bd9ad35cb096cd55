import { createHash } from 'node:crypto';
import { mkdir, realpath } from 'node:fs/promises';
import { basename, isAbsolute, relative, resolve } from 'node:path';
import type { Caller } from '../../access/caller.js';
import type { Annotation, DatasetItem, DatasetSource } from '../../formats/dataset.js';
import { readImage, stemOf } from '../../formats/dataset.js';
import { FormatError } from '../../formats/format-error.js';
import { readDataset, readDatasetZip } from '../../formats/readers/index.js';
import { HttpError, ForbiddenError, PayloadTooLargeError, ValidationError } from '../../http/errors.js';
import { GeometryError, parseGeometry, type AnnotationType } from '../../imaging/geometry.js';
import { identifyImage, ImageRejectedError, probeImage, type ProbedImage } from '../../imaging/image-probe.js';
import type { BlobStore } from '../../storage/blob-store.js';
import { paletteColor } from '../classes/classes.service.js';
import { imageBlobKey, thumbnailBlobKey } from '../images/images.service.js';
import { storedFilenameCandidates } from '../images/stored-filename.js';
import { projectBlobPrefix } from '../projects/projects.service.js';
import { toProjectOut, type ProjectOut } from '../projects/projects.schemas.js';
import type { UploadedArchive } from './import-upload.js';
import type { ImportsRepository, NewAnnotation, NewImage } from './imports.repository.js';
import type { ImportFolderRequest, ImportOptions } from './imports.schemas.js';

export interface ImportsServiceOptions {
  readonly importRoot: string | null;
  /** Temporary files (uploaded archives, extracted datasets) go under this folder. */
  readonly workDir: string;
  readonly maxImagePixels: number;
  /** Largest image file accepted, as for uploads. */
  readonly maxImageBytes: number;
  /** Images read, hashed and decoded at the same time. */
  readonly concurrency: number;
}

/** Images written per transaction. */
const BATCH_IMAGES = 200;

/** An image checked, decoded and stored, waiting for its rows. */
interface PreparedImage {
  item: DatasetItem;
  sha256: string;
  probed: ProbedImage;
  sizeBytes: number;
}

interface ImportCounts {
  image_count: number;
  annotated_image_count: number;
  annotation_count: number;
  class_count: number;
  skippedDuplicates: number;
  droppedAnnotations: number;
}

/**
 * Creates a project from a dataset archive or folder. Imports run inline (the spec answers 201 with the project): the
 * images are read from disk a few at a time, so memory stays flat, and decoding runs on libuv's pool, so the event
 * loop keeps serving. All or nothing: on any failure the project row is deleted (its classes, images and annotations
 * go by cascade) and its blob prefix removed.
 */
export class ImportsService {
  constructor(
    private readonly imports: ImportsRepository,
    private readonly blobs: BlobStore,
    private readonly options: ImportsServiceOptions,
    private readonly log: { info(obj: object, msg: string): void },
  ) {}

  async importArchive(caller: Caller, upload: UploadedArchive): Promise<ProjectOut> {
    try {
      await mkdir(this.options.workDir, { recursive: true });
      const source = await readDatasetZip(upload.path, { format: upload.options.format, workDir: this.options.workDir }).catch(mapFormatError);
      try {
        const fallbackName = stemOf(basename(upload.originalName.replace(/\\/g, '/'))).trim() || 'Imported dataset';
        return await this.importDataset(caller, source, upload.options, fallbackName, null);
      } finally {
        await source.cleanup();
      }
    } finally {
      await upload.cleanup();
    }
  }

  async importFolder(caller: Caller, input: ImportFolderRequest): Promise<ProjectOut> {
    const { root, folder } = await this.folderInsideRoot(input.path);
    const source = await readDataset(folder, input.format).catch(mapFormatError);
    return this.importDataset(caller, source, input, basename(folder) || 'Imported dataset', root);
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
      root = await realpath(this.options.importRoot);
    } catch {
      throw new ForbiddenError('Folder import is disabled: the import root does not exist');
    }
    const lexical = resolve(root, path);
    if (!isInside(root, lexical)) throw outside();
    let folder: string;
    try {
      folder = await realpath(lexical);
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
  ): Promise<ProjectOut> {
    const now = new Date().toISOString();
    const project = await this.imports.createProject({
      owner_id: caller.userId,
      name: (options.name ?? fallbackName).trim().slice(0, 200),
      description: '',
      project_type: options.project_type ?? source.projectType,
      location: '',
      created_at: now,
      updated_at: now,
    });
    try {
      const counts = await this.fill(project.id, source, root);
      const row = await this.imports.setCounters(project.id, {
        image_count: counts.image_count,
        annotated_image_count: counts.annotated_image_count,
        annotation_count: counts.annotation_count,
        class_count: counts.class_count,
      });
      this.log.info(
        { projectId: project.id, format: source.format, images: counts.image_count, annotations: counts.annotation_count,
          skippedDuplicates: counts.skippedDuplicates, droppedAnnotations: counts.droppedAnnotations },
        'dataset imported',
      );
      return toProjectOut(row);
    } catch (error) {
      await this.imports.deleteProject(project.id);
      await this.blobs.deletePrefix(projectBlobPrefix(project.id));
      mapFormatError(error);
    }
  }

  /** Classes, then images in dataset order (a few prepared at once), written in batches. */
  private async fill(projectId: number, source: DatasetSource, root: string | null): Promise<ImportCounts> {
    const counts: ImportCounts = { image_count: 0, annotated_image_count: 0, annotation_count: 0, class_count: 0, skippedDuplicates: 0, droppedAnnotations: 0 };
    const classIds = new Map<string, number>();
    const classId = async (name: string): Promise<number> => {
      let id = classIds.get(name);
      if (id === undefined) {
        id = await this.imports.insertClass(projectId, name, paletteColor(classIds.size));
        classIds.set(name, id);
        counts.class_count++;
      }
      return id;
    };
    for (const name of source.classes) await classId(name);

    const seen = new Set<string>();
    const taken = new Set<string>();
    let images: NewImage[] = [];
    let annotations = new Map<string, NewAnnotation[]>();
    const flush = async () => {
      await this.imports.insertBatch(images, annotations);
      images = [];
      annotations = new Map();
    };

    for await (const prepared of this.prepareAll(projectId, source, root)) {
      const { item, sha256, probed, sizeBytes } = prepared;
      // Byte-identical copies (some exports carry them) are one image; the first one's split and labels are kept.
      if (seen.has(sha256)) {
        counts.skippedDuplicates++;
        continue;
      }
      seen.add(sha256);
      const filename = storedFilenameCandidates(item.fileName, probed.type.ext, sha256).find((name) => !taken.has(name))!;
      taken.add(filename);
      const size = { width: probed.width, height: probed.height };
      const rows: NewAnnotation[] = [];
      const createdAt = new Date().toISOString();
      for (const annotation of item.annotations) {
        const geometry = storedGeometry(annotation, size);
        if (geometry === null) {
          counts.droppedAnnotations++;
          continue;
        }
        rows.push({
          project_id: projectId,
          class_id: await classId(annotation.className),
          annotation_type: annotation.type,
          geometry: JSON.stringify(geometry),
          confidence: null,
          source: 'import',
          created_at: createdAt,
          updated_at: createdAt,
        });
      }
      images.push({
        project_id: projectId,
        filename,
        original_name: item.fileName.slice(0, 255),
        width: probed.width,
        height: probed.height,
        split: item.split,
        sha256,
        mime_type: probed.type.mime,
        size_bytes: sizeBytes,
        blob_key: imageBlobKey(projectId, sha256, probed.type.ext),
        thumbnail_key: thumbnailBlobKey(projectId, sha256),
        annotation_count: rows.length,
        created_at: createdAt,
      });
      if (rows.length > 0) annotations.set(filename, rows);
      counts.image_count++;
      counts.annotation_count += rows.length;
      if (rows.length > 0) counts.annotated_image_count++;
      if (images.length >= BATCH_IMAGES) await flush();
    }
    await flush();
    if (counts.image_count === 0) throw new HttpError(422, 'invalid_dataset', 'The dataset contains no images');
    return counts;
  }

  /**
   * Reads, checks and stores the images with up to `concurrency` in flight, yielding them in dataset order. When one
   * fails, the others in flight are awaited before the error surfaces, so no blob is written after the clean-up.
   */
  private async *prepareAll(projectId: number, source: DatasetSource, root: string | null): AsyncGenerator<PreparedImage> {
    const window: Promise<PreparedImage>[] = [];
    try {
      for await (const item of source.items()) {
        const prepared = this.prepare(projectId, item, root);
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

  /** The same checks as an upload (magic number, size, pixel limit, decodable), then the blobs (keyed by content). */
  private async prepare(projectId: number, item: DatasetItem, root: string | null): Promise<PreparedImage> {
    if (root && 'path' in item.source && !isInside(root, await realpath(item.source.path))) {
      throw new ForbiddenError(`Image ${item.fileName} links outside the import root`);
    }
    const bytes = await readImage(item.source);
    if (bytes.length > this.options.maxImageBytes) {
      throw new PayloadTooLargeError(`Image ${item.fileName} is larger than the limit of ${Math.round(this.options.maxImageBytes / 1024 ** 2)} MB per image`);
    }
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    let probed: ProbedImage;
    try {
      probed = await probeImage(bytes, identifyImage(bytes), { maxPixels: this.options.maxImagePixels });
    } catch (error) {
      if (!(error instanceof ImageRejectedError)) throw error;
      const status = error.reason === 'too_many_pixels' ? 413 : error.reason === 'unsupported_type' ? 415 : 422;
      throw new HttpError(status, 'invalid_image', `Image ${item.fileName}: ${error.message}`);
    }
    await Promise.all([
      this.blobs.put(imageBlobKey(projectId, sha256, probed.type.ext), bytes),
      this.blobs.put(thumbnailBlobKey(projectId, sha256), probed.thumbnail),
    ]);
    return { item, sha256, probed, sizeBytes: bytes.length };
  }
}

function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/**
 * The geometry to store, validated like the annotations API does (shapes cut to the image), or null for a shape the
 * API would refuse (no area inside the image): datasets in the wild carry such degenerate labels, and dropping them
 * is what other tools do rather than refusing the whole dataset.
 */
function storedGeometry(annotation: Annotation, size: { width: number; height: number }): object | null {
  try {
    return parseGeometry(annotation.type as AnnotationType, annotation.geometry as Record<string, unknown>, size);
  } catch (error) {
    if (error instanceof GeometryError) return null;
    throw error;
  }
}

/** A dataset that cannot be read: too large an archive is 413, anything else (layout, labels, unsafe entries) 422. */
function mapFormatError(error: unknown): never {
  if (error instanceof FormatError) {
    if (error.code === 'archive_too_large') throw new PayloadTooLargeError(error.message);
    throw new HttpError(422, error.code, error.message);
  }
  throw error;
}
