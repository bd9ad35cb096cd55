/** Dataset import/export formats: readers (folder or zip → neutral items) and streaming writers (items → file). */
export * from './dataset.js';
export { FormatError } from './format-error.js';
export { readDataset, readDatasetZip, detectFormat, READABLE_FORMATS, type ExtractedDataset } from './readers/index.js';
export { WRITERS, type ExportFormat, type ExportWriter } from './writers/index.js';
export { safeExtractZip, DEFAULT_ZIP_LIMITS, type ZipLimits } from './zip/safe-extract.js';
