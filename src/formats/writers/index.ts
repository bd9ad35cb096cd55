import type { Writable } from 'node:stream';
import type { DatasetToWrite, WriteStats } from '../dataset.js';
import { writeCocoJson, writeCocoZip } from './coco-writer.js';
import { writeCsv } from './csv-writer.js';
import { writeFolders } from './folders-writer.js';
import { writeJsonl } from './jsonl-writer.js';
import { writeMasks } from './masks-writer.js';
import { writeVoc } from './voc-writer.js';
import { writeYolo } from './yolo-writer.js';

export type ExportFormat = 'coco' | 'coco_zip' | 'yolo' | 'jsonl' | 'csv' | 'voc' | 'masks' | 'folders';

export interface ExportWriter {
  /** File extension of what the writer produces. */
  extension: 'json' | 'jsonl' | 'csv' | 'zip';
  contentType: string;
  write(dataset: DatasetToWrite, output: Writable): Promise<WriteStats>;
}

const ZIP = 'application/zip';

/** Every writer streams to `output` and ends it when done. */
export const WRITERS: Record<ExportFormat, ExportWriter> = {
  coco: { extension: 'json', contentType: 'application/json', write: writeCocoJson },
  coco_zip: { extension: 'zip', contentType: ZIP, write: writeCocoZip },
  yolo: { extension: 'zip', contentType: ZIP, write: writeYolo },
  jsonl: { extension: 'jsonl', contentType: 'application/x-ndjson', write: writeJsonl },
  csv: { extension: 'csv', contentType: 'text/csv', write: writeCsv },
  voc: { extension: 'zip', contentType: ZIP, write: writeVoc },
  masks: { extension: 'zip', contentType: ZIP, write: writeMasks },
  folders: { extension: 'zip', contentType: ZIP, write: writeFolders },
};

export { writeCocoJson, writeCocoZip, writeCsv, writeFolders, writeJsonl, writeMasks, writeVoc, writeYolo };
