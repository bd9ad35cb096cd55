import { open, rm } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import type { DatasetToWrite, WriteStats } from '../dataset.js';
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
import { withExtrasAccounting } from './extras-accounting.js';
import { EXTRAS_POLICIES } from './extras-policies.js';

export type { ExportFormat } from './export-format.js';
import type { ExportFormat } from './export-format.js';

export interface ExportWriter {
  /** File extension of what the writer produces. */
  extension: 'json' | 'jsonl' | 'csv' | 'zip';
  contentType: string;
  write(dataset: DatasetToWrite, output: Writable): Promise<WriteStats>;
}

const ZIP = 'application/zip';

const WRITE: Record<ExportFormat, ExportWriter> = {
  coco: { extension: 'json', contentType: 'application/json', write: writeCocoJson },
  coco_zip: { extension: 'zip', contentType: ZIP, write: writeCocoZip },
  yolo: { extension: 'zip', contentType: ZIP, write: writeYolo },
  jsonl: { extension: 'jsonl', contentType: 'application/x-ndjson', write: writeJsonl },
  csv: { extension: 'csv', contentType: 'text/csv', write: writeCsv },
  voc: { extension: 'zip', contentType: ZIP, write: writeVoc },
  masks: { extension: 'zip', contentType: ZIP, write: writeMasks },
  folders: { extension: 'zip', contentType: ZIP, write: writeFolders },
  yolo_ultralytics: { extension: 'zip', contentType: ZIP, write: writeUltralytics },
  cvat: { extension: 'zip', contentType: ZIP, write: writeCvat },
  datumaro: { extension: 'zip', contentType: ZIP, write: writeDatumaro },
  labelme: { extension: 'zip', contentType: ZIP, write: writeLabelMe },
  createml: { extension: 'zip', contentType: ZIP, write: writeCreateMl },
  dota: { extension: 'zip', contentType: ZIP, write: writeDota },
  labelstudio: { extension: 'zip', contentType: ZIP, write: writeLabelStudio },
  multilabel_csv: { extension: 'zip', contentType: ZIP, write: writeMultiLabelCsv },
  cvat_video: { extension: 'zip', contentType: ZIP, write: writeCvatVideo },
  mot: { extension: 'zip', contentType: ZIP, write: writeMot },
};

/**
 * Every writer streams to `output` and ends it when done, and answers what it did with every shape (kept, converted,
 * skipped) and, by its format's policy, with every attribute value, group and track (`WriteStats.extras`).
 */
export const WRITERS = Object.fromEntries(
  (Object.entries(WRITE) as [ExportFormat, ExportWriter][]).map(([format, writer]) => [format, { ...writer, write: withExtrasAccounting(writer.write, EXTRAS_POLICIES[format]) }]),
) as Record<ExportFormat, ExportWriter>;

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
