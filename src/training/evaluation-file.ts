import { readFile } from 'node:fs/promises';

/**
 * The detector's evaluation per split that versa-detect writes into its run folder (`evaluation.json`, see
 * trainer/versa_trainer/evaluate.py write_analysis): per class AP, F1-maximising threshold and PR curve; the
 * confusion matrix with background; per image its errors and the kept predictions (version pixels).
 */
export interface ClassEvaluation {
  class_index: number;
  name: string;
  instances: number;
  ap50: number | null;
  ap50_95: number | null;
  precision: number | null;
  recall: number | null;
  f1: number | null;
  conf_threshold: number | null;
  pr_curve: number[] | null;
}

export interface ImageErrors {
  /** `images/<split>/<version image filename>` in the materialised version. */
  file: string;
  false_positives: number;
  false_negatives: number;
  confusions: number;
  /** `[class_index, x, y, w, h, score]`. */
  predictions: [number, number, number, number, number, number][];
}

export interface SplitEvaluation {
  per_class: ClassEvaluation[];
  confusion: { labels: string[]; matrix: number[][] };
  images: ImageErrors[];
}

export interface EvaluationFile {
  class_names: string[];
  splits: Record<string, SplitEvaluation>;
}

/** The run folder's evaluation, or null when the run wrote none (classifiers, older runs) or it is gone. */
export async function readEvaluationFile(path: string): Promise<EvaluationFile | null> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as EvaluationFile;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}
