import { open, rm } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import type { DatasetItem, DatasetToWrite, WriteStats } from '../dataset.js';
import { writeCocoJson, writeCocoZip } from './coco-writer.js';
import { writeCreateMl } from './createml-writer.js';
import { writeCsv } from './csv-writer.js';
import { writeCvat } from './cvat-writer.js';
import { writeDatumaro } from './datumaro-writer.js';
import { writeLabelMe } from './labelme-writer.js';
import { writeLabelStudio } from './labelstudio-writer.js';
import { writeMultiLabelCsv } from './multilabel-csv-writer.js';
import { writeUltralytics } from './ultralytics-writer.js';
import { writeFolders } from './folders-writer.js';
import { writeJsonl } from './jsonl-writer.js';
import { writeMasks } from './masks-writer.js';
import { writeVoc } from './voc-writer.js';
import { writeYolo } from './yolo-writer.js';
import { writeDota } from './dota-writer.js';
import { writeCvatVideo } from './cvat-video-writer.js';
import { writeMot } from './mot-writer.js';
import { ExportTally, nothingKept, type LeftOut } from './export-tally.js';

export type { ExportFormat } from './export-format.js';
import type { ExportFormat } from './export-format.js';

export interface ExportWriter {
  /** File extension of what the writer produces. */
  extension: 'json' | 'jsonl' | 'csv' | 'zip';
  contentType: string;
  write(dataset: DatasetToWrite, output: Writable): Promise<WriteStats>;
}

type Write = (dataset: DatasetToWrite, output: Writable, tally: ExportTally) => Promise<WriteStats>;

const ZIP = 'application/zip';
const COCO = nothingKept('COCO');
const YOLO: LeftOut = { ...nothingKept('YOLO'), attributes: 'YOLO label lines hold no attributes' };

/** Each format's writer, and why it leaves out the attribute values, group ids and track ids of shapes it writes without them. */
const WRITE: Record<ExportFormat, Omit<ExportWriter, 'write'> & { write: Write; leftOut: LeftOut }> = {
  coco: { extension: 'json', contentType: 'application/json', write: writeCocoJson, leftOut: COCO },
  coco_zip: { extension: 'zip', contentType: ZIP, write: writeCocoZip, leftOut: COCO },
  yolo: { extension: 'zip', contentType: ZIP, write: writeYolo, leftOut: YOLO },
  jsonl: { extension: 'jsonl', contentType: 'application/x-ndjson', write: writeJsonl, leftOut: nothingKept('jsonl') },
  csv: { extension: 'csv', contentType: 'text/csv', write: writeCsv, leftOut: nothingKept('CSV') },
  voc: { extension: 'zip', contentType: ZIP, write: writeVoc, leftOut: { ...nothingKept('VOC'), attributes: 'VOC objects hold only difficult, truncated and occluded flags' } },
  masks: { extension: 'zip', contentType: ZIP, write: writeMasks, leftOut: nothingKept('a class-index mask') },
  folders: { extension: 'zip', contentType: ZIP, write: writeFolders, leftOut: nothingKept('a class folder') },
  yolo_ultralytics: { extension: 'zip', contentType: ZIP, write: writeUltralytics, leftOut: YOLO },
  cvat: { extension: 'zip', contentType: ZIP, write: writeCvat, leftOut: nothingKept('CVAT') },
  datumaro: { extension: 'zip', contentType: ZIP, write: writeDatumaro, leftOut: nothingKept('Datumaro') },
  labelme: { extension: 'zip', contentType: ZIP, write: writeLabelMe, leftOut: { ...nothingKept('LabelMe'), attributes: 'an image flag holds no attributes' } },
  createml: { extension: 'zip', contentType: ZIP, write: writeCreateMl, leftOut: nothingKept('CreateML') },
  dota: { extension: 'zip', contentType: ZIP, write: writeDota, leftOut: { ...nothingKept('DOTA'), attributes: 'DOTA lines hold only difficult' } },
  labelstudio: {
    extension: 'zip', contentType: ZIP, write: writeLabelStudio,
    leftOut: { attributes: 'an image-level choice holds no attributes', groups: 'a group of one region has nothing to relate', tracks: 'Label Studio has no track identity' },
  },
  multilabel_csv: { extension: 'zip', contentType: ZIP, write: writeMultiLabelCsv, leftOut: nothingKept('a multi-label CSV') },
  cvat_video: { extension: 'zip', contentType: ZIP, write: writeCvatVideo, leftOut: { ...nothingKept('CVAT for video'), groups: 'CVAT for video tracks have no groups' } },
  mot: { extension: 'zip', contentType: ZIP, write: writeMot, leftOut: { ...nothingKept('MOT'), attributes: 'MOT rows hold only the ignored and occluded flags' } },
};

/**
 * Every writer streams to `output` and ends it when done, and answers what it did with every shape (kept, converted,
 * skipped) and, with each shape, with its attribute values, group and track (`WriteStats.extras`), as it wrote them.
 */
export const WRITERS = Object.fromEntries(
  (Object.entries(WRITE) as [ExportFormat, (typeof WRITE)[ExportFormat]][]).map(([format, { write, leftOut, ...writer }]) => [format, { ...writer, write: tallied(write, leftOut) }]),
) as Record<ExportFormat, ExportWriter>;

/** `write`, given a tally of its own that learns where each image begins, with the tally's counts in its answer. */
function tallied(write: Write, leftOut: LeftOut): ExportWriter['write'] {
  return async (dataset, output) => {
    const tally = new ExportTally(leftOut);
    const source = dataset.items;
    async function* counted(): AsyncGenerator<DatasetItem> {
      for await (const item of source) {
        tally.nextImage();
        yield item;
      }
    }
    const stats = await write({ ...dataset, items: counted() }, output, tally);
    return { ...stats, ...tally.result() };
  };
}

/**
 * Writes `dataset` in `format` to a new file at `path` (refused if one exists) and answers the counts and the
 * file's size. A write that fails midway leaves nothing behind: the partial file is closed and removed, so a
 * half-written export can never be mistaken for a finished one.
 */
export async function writeExportFile(format: ExportFormat, dataset: DatasetToWrite, path: string): Promise<WriteStats & { bytes: number }> {
  const output = (await open(path, 'wx')).createWriteStream();
  try {
    const stats = await WRITERS[format].write(dataset, output);
    return { ...stats, bytes: output.bytesWritten };
  } catch (error) {
    if (!output.closed) {
      const closed = new Promise<void>((resolve) => output.once('close', () => resolve()));
      output.destroy();
      await closed;
    }
    await rm(path, { force: true });
    throw error;
  }
}

export { writeCocoJson, writeCocoZip, writeCsv, writeFolders, writeJsonl, writeMasks, writeVoc, writeYolo };
