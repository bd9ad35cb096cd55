import { readFile } from 'node:fs/promises';

/**
 * The last epoch's metrics of an Ultralytics run from its results.csv (header `epoch,train/box_loss,…,
 * metrics/mAP50(B),metrics/mAP50-95(B),…`; older versions pad names with spaces), under Versa's metric names where
 * one exists (`map50`, `map50_95`, `precision`, `recall`, `accuracy`, `top5`) and the CSV's own names otherwise.
 * Null when there is no readable results.csv.
 */
export async function runMetrics(path: string): Promise<Record<string, number> | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return null;
  }
  return parseResultsCsv(text);
}

const RENAMES: Record<string, string> = {
  'metrics/mAP50(B)': 'map50',
  'metrics/mAP50-95(B)': 'map50_95',
  'metrics/precision(B)': 'precision',
  'metrics/recall(B)': 'recall',
  'metrics/mAP50(M)': 'mask_map50',
  'metrics/mAP50-95(M)': 'mask_map50_95',
  'metrics/accuracy_top1': 'accuracy',
  'metrics/accuracy_top5': 'top5',
};

export function parseResultsCsv(text: string): Record<string, number> | null {
  const rows = text.split(/\r?\n/).filter((l) => l.trim() !== '');
  if (rows.length < 2) return null;
  const header = rows[0].split(',').map((h) => h.trim());
  const last = rows[rows.length - 1].split(',').map((v) => v.trim());
  const out: Record<string, number> = {};
  header.forEach((name, i) => {
    const value = Number(last[i]);
    if (name && last[i] !== undefined && last[i] !== '' && Number.isFinite(value)) out[RENAMES[name] ?? name] = value;
  });
  return out;
}
