import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import { rleArea, rleBbox } from '../../imaging/rle.js';
import type { Annotation, DatasetItem, DatasetToWrite, Split, WriteStats } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { polygonArea } from '../../imaging/geometry.js';
import { pointsBox } from '../../imaging/geometry.js';
import { writeChunk, writeZip } from './zip-output.js';

/** Strings are gathered up to this many characters before one write: one write per annotation would dominate. */
const BATCH_CHARS = 1 << 16;

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
  ) {
    classes.forEach((name, index) => this.categoryIds.set(name, index + 1));
  }

  async start(): Promise<void> {
    this.spoolDir = await mkdtemp(join(tmpdir(), 'versa-coco-'));
    this.spool = createWriteStream(join(this.spoolDir, 'annotations.json'));
    const categories = this.classes.map((name, index) => `{"id":${index + 1},"name":${JSON.stringify(name)},"supercategory":"none"}`);
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
    for (const annotation of item.annotations) {
      const json = this.annotationJson(annotation, imageId);
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

  private annotationJson(annotation: Annotation, imageId: number): string | null {
    // COCO has no image-level labels; classification projects export through `folders`, `csv` or `jsonl`.
    if (annotation.type === 'classification') return null;
    const categoryId = this.categoryIds.get(annotation.className);
    if (categoryId === undefined) throw new FormatError(`annotation class "${annotation.className}" is not in the class list`);
    const head = `{"id":${this.annotationCount + 1},"image_id":${imageId},"category_id":${categoryId}`;
    switch (annotation.type) {
      case 'bbox': {
        const { x, y, width, height } = annotation.geometry;
        return `${head},"bbox":[${r(x)},${r(y)},${r(width)},${r(height)}],"area":${r(width * height)},"segmentation":[],"iscrowd":0}`;
      }
      case 'polygon': {
        const points = annotation.geometry.points;
        const box = pointsBox(points);
        let flat = '';
        for (let i = 0; i < points.length; i++) flat += `${i ? ',' : ''}${r(points[i][0])},${r(points[i][1])}`;
        return `${head},"bbox":[${r(box.x)},${r(box.y)},${r(box.width)},${r(box.height)}],"area":${r(polygonArea(points))},"segmentation":[[${flat}]],"iscrowd":0}`;
      }
      case 'mask': {
        const rle = annotation.geometry.rle;
        const box = rleBbox(rle) ?? { x: 0, y: 0, width: 0, height: 0 };
        // A drawn mask is one object: a normal instance (iscrowd 0) with its uncompressed RLE, which pycocotools,
        // detectron2 and mmdetection read for iscrowd 0 as well. Only a mask marked as a crowd region keeps iscrowd 1.
        const crowd = (annotation.geometry as { crowd?: boolean }).crowd === true ? 1 : 0;
        return `${head},"bbox":[${box.x},${box.y},${box.width},${box.height}],"area":${rleArea(rle)},"segmentation":{"size":[${rle.size[0]},${rle.size[1]}],"counts":[${rle.counts.join(',')}]},"iscrowd":${crowd}}`;
      }
      default:
        return null;
    }
  }
}

function r(value: number): number {
  return Math.round(value * 100) / 100;
}

/** The whole dataset as one COCO JSON document (each image carries its `split`). */
export async function writeCocoJson(dataset: DatasetToWrite, output: Writable): Promise<WriteStats> {
  const writer = new CocoDocumentWriter(output, dataset.classes, true);
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
export async function writeCocoZip(dataset: DatasetToWrite, output: Writable): Promise<WriteStats> {
  const dir = await mkdtemp(join(tmpdir(), 'versa-coco-zip-'));
  const splits = new Map<Split, { writer: CocoDocumentWriter; file: WriteStream }>();
  try {
    return await writeZip(output, async (zip) => {
      for await (const item of dataset.items) {
        const split = item.split ?? 'train';
        let entry = splits.get(split);
        if (!entry) {
          const file = createWriteStream(join(dir, `${split}.json`));
          entry = { writer: new CocoDocumentWriter(file, dataset.classes, false), file };
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
