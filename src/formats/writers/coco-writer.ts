import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import { encodeRle, rleArea, rleBbox, type Box, type Rle } from '../../imaging/rle.js';
import type { Annotation, ClassSpec, DatasetItem, DatasetToWrite, Point, Split, WriteStats } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { fillPolygon } from '../geometry.js';
import { geometryBox, polygonArea, rotatedCorners, type EllipseGeometry } from '../../imaging/geometry.js';
import { pointsBox } from '../../imaging/geometry.js';
import { sizeOf } from './item-size.js';
import { writeChunk, writeZip } from './zip-output.js';
import { ExportTally, type Wrote } from './export-tally.js';

/** Strings are gathered up to this many characters before one write: one write per annotation would dominate. */
const BATCH_CHARS = 1 << 16;

/** What a COCO annotation holds besides its shape: the attribute values, a frame shape's `track_id` among them. */
const WROTE: Wrote = { attributes: 'all', track: "track_id attribute on each frame's shape" };
/** Keypoints and their outline in one group, written as one annotation (the outline's attribute values with the keypoints'). */
const MERGED: Wrote = { ...WROTE, group: 'one COCO annotation (keypoints with their outline)' };

/**
 * One COCO document written incrementally. Images go straight to `output`; annotations, which COCO lists after all
 * images, go to a temporary file that is appended at the end, so neither list is ever held in memory. JSON text is
 * built by hand because JSON.stringify per annotation costs several times more at a million annotations.
 */
export class CocoDocumentWriter {
  private readonly categoryIds = new Map<string, number>();
  private images = '';
  private annotations = '';
  private imageCount = 0;
  private annotationCount = 0;
  private spool: WriteStream | null = null;
  private spoolDir: string | null = null;

  constructor(
    private readonly output: Writable,
    private readonly classes: string[],
    /** Adds a non-standard `split` member to each image (kept by our reader; other tools ignore it). */
    private readonly withSplit: boolean,
    private readonly classSpecs: Map<string, ClassSpec> = new Map(),
    private readonly tally = new ExportTally(),
  ) {
    classes.forEach((name, index) => this.categoryIds.set(name, index + 1));
  }

  async start(): Promise<void> {
    this.spoolDir = await mkdtemp(join(tmpdir(), 'versa-coco-'));
    this.spool = createWriteStream(join(this.spoolDir, 'annotations.json'));
    // Keypoint classes as COCO's person_keypoints: point names and edges numbered from 1. COCO has no flip pairs (a
    // reader guesses them from left_/right_ names, as ours does).
    const categories = this.classes.map((name, index) => {
      const skeleton = this.classSpecs.get(name)?.skeleton;
      const keypoints = skeleton ? `,"keypoints":${JSON.stringify(skeleton.points)},"skeleton":${JSON.stringify(skeleton.edges.map(([a, b]) => [a + 1, b + 1]))}` : '';
      return `{"id":${index + 1},"name":${JSON.stringify(name)},"supercategory":"none"${keypoints}}`;
    });
    await writeChunk(
      this.output,
      `{"info":{"description":"Exported from Versa","version":"1.0"},"licenses":[],"categories":[${categories.join(',')}],"images":[`,
    );
  }

  async add(item: DatasetItem, fileName = item.fileName): Promise<void> {
    const imageId = ++this.imageCount;
    const size = item.width && item.height ? `,"width":${item.width},"height":${item.height}` : '';
    const split = this.withSplit && item.split ? `,"split":"${item.split}"` : '';
    this.images += `${imageId > 1 ? ',' : ''}{"id":${imageId},"file_name":${JSON.stringify(fileName)}${size}${split}}`;
    const withOutline = keypointOutlines(item.annotations);
    const merged = withOutline && new Set(withOutline.values());
    // Only an object with holes needs the image's size (it is written as a mask).
    const pixels = item.annotations.some((a) => a.type === 'polygon' && a.geometry.holes?.length) ? await sizeOf(item) : null;
    for (const annotation of item.annotations) {
      if (merged?.has(annotation)) {
        // Written as its keypoints' segmentation; COCO's outline of an instance has no holes.
        if (annotation.type === 'polygon' && annotation.geometry.holes?.length) this.tally.shape(annotation, 'converted', 'polygon with holes→keypoints outline without holes', MERGED);
        else this.tally.shape(annotation, 'kept', annotation.type, MERGED);
        continue;
      }
      const json = this.annotationJson(annotation, imageId, pixels, withOutline?.get(annotation));
      if (json === null) continue;
      this.annotations += `${this.annotationCount > 0 ? ',' : ''}${json}`;
      this.annotationCount++;
      if (this.annotations.length >= BATCH_CHARS) await this.flushAnnotations();
    }
    if (this.images.length >= BATCH_CHARS) await this.flushImages();
  }

  /** Closes the document; the output itself is left open for the caller to end. */
  async finish(): Promise<WriteStats> {
    try {
      await this.flushImages();
      await this.flushAnnotations();
      const spool = this.spool!;
      spool.end();
      await new Promise<void>((resolve, reject) => (spool.closed ? resolve() : spool.once('close', resolve).once('error', reject)));
      await writeChunk(this.output, '],"annotations":[');
      await pipeline(createReadStream(spool.path as string), this.output, { end: false });
      await writeChunk(this.output, ']}\n');
      return { imageCount: this.imageCount, annotationCount: this.annotationCount };
    } finally {
      await this.discard();
    }
  }

  async discard(): Promise<void> {
    this.spool?.destroy();
    if (this.spoolDir) await rm(this.spoolDir, { recursive: true, force: true });
    this.spoolDir = null;
  }

  private async flushImages(): Promise<void> {
    if (this.images) await writeChunk(this.output, this.images);
    this.images = '';
  }

  private async flushAnnotations(): Promise<void> {
    if (this.annotations) await writeChunk(this.spool!, this.annotations);
    this.annotations = '';
  }

  /**
   * One annotation as COCO JSON, or null when COCO cannot hold it (counted in the WriteStats). Conversions: a rotated
   * box is its envelope `bbox` with its four corners as `segmentation` and `attributes.rotation` (CVAT's COCO key; our
   * reader turns it back into the rotated box); a polygon in several parts is one annotation with several polygons;
   * one with holes, which COCO polygons cannot express, an RLE mask; an ellipse a 64-point polygon; keypoints of a
   * class without a skeleton their box. Polylines, point sets and classifications have no COCO form: left out.
   * Attribute values go in `attributes` (CVAT's COCO export does the same).
   */
  private annotationJson(annotation: Annotation, imageId: number, size: { width: number; height: number } | null, outline?: Annotation): string | null {
    if (annotation.type === 'classification' || annotation.type === 'polyline' || annotation.type === 'points') {
      // COCO has no image-level labels, open paths or point sets; classification projects export through `folders`, `csv` or `jsonl`.
      this.tally.shape(annotation, 'skipped', annotation.type, WROTE);
      return null;
    }
    const categoryId = this.categoryIds.get(annotation.className);
    if (categoryId === undefined) throw new FormatError(`annotation class "${annotation.className}" is not in the class list`);
    // Built without a closure or object per annotation: a million of them is a COCO export we time.
    const attributes = annotation.attributes;
    const head = `{"id":${this.annotationCount + 1},"image_id":${imageId},"category_id":${categoryId}`;
    switch (annotation.type) {
      case 'bbox': {
        const { x, y, width, height, rotation } = annotation.geometry;
        if (rotation) {
          const corners = rotatedCorners(annotation.geometry);
          this.tally.shape(annotation, 'converted', 'rotated bbox→bbox+polygon', WROTE);
          return `${head},${boxJson(pointsBox(corners))},"area":${r(width * height)},"segmentation":[${flatJson(corners)}]${tailJson(0, { ...attributes, rotation })}`;
        }
        this.tally.shape(annotation, 'kept', 'bbox', WROTE);
        return `${head},"bbox":[${r(x)},${r(y)},${r(width)},${r(height)}],"area":${r(width * height)},"segmentation":[]${tailJson(0, attributes)}`;
      }
      case 'polygon': {
        const { points, parts = [points], holes } = annotation.geometry;
        if (holes && holes.length > 0) {
          this.tally.shape(annotation, 'converted', 'polygon with holes→mask', WROTE);
          return maskJson(head, polygonRle(parts, holes, size!), 0, attributes);
        }
        const area = parts.reduce((sum, part) => sum + polygonArea(part), 0);
        this.tally.shape(annotation, 'kept', 'polygon', WROTE);
        return `${head},${boxJson(pointsBox(parts.flat()))},"area":${r(area)},"segmentation":[${parts.map(flatJson).join(',')}]${tailJson(0, attributes)}`;
      }
      case 'ellipse': {
        const ring = ellipsePolygon(annotation.geometry, 64);
        this.tally.shape(annotation, 'converted', 'ellipse→polygon', WROTE);
        return `${head},${boxJson(pointsBox(ring))},"area":${r(polygonArea(ring))},"segmentation":[${flatJson(ring)}]${tailJson(0, attributes)}`;
      }
      case 'mask':
        this.tally.shape(annotation, 'kept', 'mask', WROTE);
        return maskJson(head, annotation.geometry.rle, (annotation.geometry as { crowd?: boolean }).crowd === true ? 1 : 0, attributes);
      case 'keypoints': {
        const { points, bbox } = annotation.geometry;
        const box = bbox ?? geometryBox('keypoints', annotation.geometry) ?? { x: 0, y: 0, width: 0, height: 0 };
        const skeleton = this.classSpecs.get(annotation.className)?.skeleton;
        if (!skeleton || skeleton.points.length !== points.length) {
          this.tally.shape(annotation, 'converted', 'keypoints→bbox', WROTE);
          return `${head},${boxJson(box)},"area":${r(box.width * box.height)},"segmentation":[]${tailJson(0, attributes)}`;
        }
        this.tally.shape(annotation, 'kept', 'keypoints', outline ? MERGED : WROTE);
        let flat = '';
        let labelled = 0;
        for (let i = 0; i < points.length; i++) {
          const [x, y, v] = points[i];
          if (v > 0) labelled++;
          flat += `${i ? ',' : ''}${v ? r(x) : 0},${v ? r(y) : 0},${v}`;
        }
        let segmentation = '[]';
        let area = box.width * box.height;
        if (outline?.type === 'polygon') {
          const parts = outline.geometry.parts ?? [outline.geometry.points];
          segmentation = `[${parts.map(flatJson).join(',')}]`;
          area = parts.reduce((sum, part) => sum + polygonArea(part), 0);
        } else if (outline?.type === 'mask') {
          const rle = outline.geometry.rle;
          segmentation = `{"size":[${rle.size[0]},${rle.size[1]}],"counts":[${rle.counts.join(',')}]}`;
          area = rleArea(rle);
        }
        return `${head},${boxJson(box)},"area":${r(area)},"segmentation":${segmentation},"keypoints":[${flat}],"num_keypoints":${labelled}${tailJson(0, outline?.attributes ? { ...outline.attributes, ...attributes } : attributes)}`;
      }
      default:
        return null;
    }
  }

}

/**
 * A keypoints shape and an outline in one group (a person and its outline) are one COCO annotation: each grouped
 * keypoints shape → its outline; null when the item has no grouped keypoints (most items: nothing is allocated).
 */
function keypointOutlines(annotations: readonly Annotation[]): Map<Annotation, Annotation> | null {
  let outlineOf: Map<string, Annotation> | null = null;
  for (const a of annotations) if (a.groupId !== undefined && a.type === 'keypoints') (outlineOf ??= new Map()).set(`${a.groupId}\0${a.className}`, a);
  if (outlineOf === null) return null;
  const withOutline = new Map<Annotation, Annotation>();
  for (const a of annotations) {
    if ((a.type !== 'polygon' && a.type !== 'mask') || a.groupId === undefined) continue;
    const keypoints = outlineOf.get(`${a.groupId}\0${a.className}`);
    if (keypoints && !withOutline.has(keypoints)) withOutline.set(keypoints, a);
  }
  return withOutline;
}

function maskJson(head: string, rle: Rle, crowd: number, attributes: Annotation['attributes']): string {
  const box = rleBbox(rle) ?? { x: 0, y: 0, width: 0, height: 0 };
  // A drawn mask is one object: a normal instance (iscrowd 0) with its uncompressed RLE, which pycocotools,
  // detectron2 and mmdetection read for iscrowd 0 as well. Only a mask marked as a crowd region keeps iscrowd 1.
  return `${head},"bbox":[${box.x},${box.y},${box.width},${box.height}],"area":${rleArea(rle)},"segmentation":{"size":[${rle.size[0]},${rle.size[1]}],"counts":[${rle.counts.join(',')}]}${tailJson(crowd, attributes)}`;
}

function boxJson(box: Box): string {
  return `"bbox":[${r(box.x)},${r(box.y)},${r(box.width)},${r(box.height)}]`;
}

/** The end of an annotation: `iscrowd`, and its attribute values (and a rotated box's `rotation`) when it has any. */
function tailJson(crowd: number, attributes: Record<string, unknown> | undefined): string {
  return `,"iscrowd":${crowd}${attributes && Object.keys(attributes).length ? `,"attributes":${JSON.stringify(attributes)}` : ''}}`;
}

function flatJson(points: readonly Point[]): string {
  let flat = '';
  for (let i = 0; i < points.length; i++) flat += `${i ? ',' : ''}${r(points[i][0])},${r(points[i][1])}`;
  return `[${flat}]`;
}

/** An ellipse as a polygon of `n` points (the first at its rotated x axis, clockwise on screen). */
export function ellipsePolygon(e: EllipseGeometry, n: number): Point[] {
  const rad = (e.rotation * Math.PI) / 180;
  const cos = Math.cos(rad);
  const sin = Math.sin(rad);
  return Array.from({ length: n }, (_, i) => {
    const t = (2 * Math.PI * i) / n;
    const dx = e.rx * Math.cos(t);
    const dy = e.ry * Math.sin(t);
    return [e.cx + dx * cos - dy * sin, e.cy + dx * sin + dy * cos] as Point;
  });
}

/** Parts filled, holes cut out, as an RLE the size of the image (even-odd per ring, pixel centres). */
function polygonRle(parts: Point[][], holes: Point[][], size: { width: number; height: number }): Rle {
  const data = new Uint8Array(size.width * size.height);
  for (const part of parts) fillPolygon(data, size.width, size.height, part, 1);
  for (const hole of holes) fillPolygon(data, size.width, size.height, hole, 0);
  return encodeRle({ width: size.width, height: size.height, data });
}

function r(value: number): number {
  return Math.round(value * 100) / 100;
}

/** The whole dataset as one COCO JSON document (each image carries its `split`). */
export async function writeCocoJson(dataset: DatasetToWrite, output: Writable, tally = new ExportTally()): Promise<WriteStats> {
  const writer = new CocoDocumentWriter(output, dataset.classes, true, dataset.classSpecs, tally);
  try {
    await writer.start();
    for await (const item of dataset.items) await writer.add(item);
    const stats = await writer.finish();
    output.end();
    await finished(output);
    return stats;
  } catch (error) {
    await writer.discard();
    throw error;
  }
}

/**
 * Roboflow's COCO layout as a zip: `{train,valid,test}/_annotations.coco.json` with the images beside it. Each
 * split's document is spooled to a temporary file while the images stream into the zip, then added at the end.
 */
export async function writeCocoZip(dataset: DatasetToWrite, output: Writable, tally = new ExportTally()): Promise<WriteStats> {
  const dir = await mkdtemp(join(tmpdir(), 'versa-coco-zip-'));
  const splits = new Map<Split, { writer: CocoDocumentWriter; file: WriteStream }>();
  try {
    return await writeZip(output, async (zip) => {
      for await (const item of dataset.items) {
        const split = item.split ?? 'train';
        let entry = splits.get(split);
        if (!entry) {
          const file = createWriteStream(join(dir, `${split}.json`));
          entry = { writer: new CocoDocumentWriter(file, dataset.classes, false, dataset.classSpecs, tally), file };
          splits.set(split, entry);
          await entry.writer.start();
        }
        await entry.writer.add(item);
        await zip.addImage(`${split}/${item.fileName}`, item.source);
      }
      const stats: WriteStats = { imageCount: 0, annotationCount: 0 };
      for (const [split, { writer, file }] of splits) {
        const counts = await writer.finish();
        file.end();
        await new Promise<void>((resolve, reject) => file.once('close', resolve).once('error', reject));
        stats.imageCount += counts.imageCount;
        stats.annotationCount += counts.annotationCount;
        await zip.addImage(`${split}/_annotations.coco.json`, { path: join(dir, `${split}.json`) });
      }
      return stats;
    });
  } finally {
    for (const { writer, file } of splits.values()) {
      file.destroy();
      await writer.discard();
    }
    await rm(dir, { recursive: true, force: true });
  }
}
