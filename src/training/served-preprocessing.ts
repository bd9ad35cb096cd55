import { appendFile, readFile } from 'node:fs/promises';
import { resolvePreprocessing, type PreprocessingInput } from '../imaging/recipe/index.js';
import { encodeOnnxMetadata, readOnnxMetadata } from '../inference/onnx-metadata.js';
import { PREPROCESSING_METADATA_KEY, pixelPreprocessing } from '../inference/served-input.js';

/**
 * Writes into a trained ONNX model how its training images were made (the version's preprocessing), so that every
 * inference path makes its inputs the same way (src/inference/served-input.ts). A model that already records one,
 * or a file that is not ONNX, is left as it is.
 */
export async function recordServedPreprocessing(modelPath: string, preprocessing: PreprocessingInput | null): Promise<void> {
  if (!modelPath.endsWith('.onnx')) return;
  if (PREPROCESSING_METADATA_KEY in readOnnxMetadata(await readFile(modelPath))) return;
  const pixels = pixelPreprocessing(resolvePreprocessing(preprocessing));
  await appendFile(modelPath, encodeOnnxMetadata({ [PREPROCESSING_METADATA_KEY]: JSON.stringify(pixels) }));
}
