/** The image modality's checks: files, pixels and near copies, read from the cached per-image features. */
import type { CheckDefinition, Findings, ParamValues } from './check-catalog.logic.js';
import type { DatasetSnapshot } from './dataset-snapshot.logic.js';
import { MAX_NEAR_DISTANCE } from './near-duplicates.logic.js';

type ImageCheck = CheckDefinition<DatasetSnapshot>;

const distance = { type: 'integer', default: 8, min: 0, max: MAX_NEAR_DISTANCE, description: 'Most dHash bits (of 64) two near duplicates differ in' } as const;
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** Each measured, readable image whose feature `value` is flagged. */
function featureCheck(
  s: DatasetSnapshot,
  findings: Findings,
  value: (i: number) => number | null,
  flagged: (v: number) => boolean,
  score: (v: number) => number,
  detail: (v: number) => string,
): void {
  for (let i = 0; i < s.images.length; i++) {
    const image = s.images[i];
    if (image.readable !== 1) continue;
    const v = value(i);
    if (v === null || !flagged(v)) continue;
    findings.add({ image_id: image.id }, () => detail(v), score(v));
  }
}

export const IMAGE_CHECKS: ImageCheck[] = [
  {
    id: 'exact_duplicates',
    title: 'Exact duplicates',
    modality: 'image',
    severity: 'warning',
    description: 'Images with identical pixels (the same picture in another file or encoding). Every copy but the first is listed.',
    params: {},
    message: (n) => `${plural(n, 'image')} duplicate an earlier image`,
    run(s, _p, findings) {
      for (const group of s.exactDuplicateGroups()) {
        const first = s.images[group[0]].id;
        for (const i of group.slice(1)) findings.add({ image_id: s.images[i].id }, () => `Same pixels as image ${first}`);
      }
    },
  },
  {
    id: 'near_duplicates',
    title: 'Near duplicates',
    modality: 'image',
    severity: 'warning',
    description: 'Groups of images whose 64-bit dHash (the hash grouped splits use) differ in at most max_distance bits, transitively. Every member but the first is listed.',
    params: { max_distance: distance },
    message: (n, p) => `${plural(n, 'image')} within ${p.max_distance} bits of another`,
    run(s, p, findings) {
      for (const group of s.nearDuplicateGroups(p.max_distance)) {
        const first = s.images[group[0]].id;
        for (const i of group.slice(1)) findings.add({ image_id: s.images[i].id }, () => `Near duplicate of image ${first} (group of ${group.length})`);
      }
    },
  },
  {
    id: 'split_leakage',
    title: 'Near duplicates across splits (leakage)',
    modality: 'image',
    severity: 'error',
    description: 'Near-duplicate groups whose images sit in different splits: the model is evaluated on what it trained on.',
    params: { max_distance: distance },
    message: (n) => `${plural(n, 'image')} in near-duplicate groups spanning splits`,
    run(s, p, findings) {
      for (const group of s.nearDuplicateGroups(p.max_distance)) {
        const splits = new Set(group.map((i) => s.images[i].split).filter((x) => x !== null));
        if (splits.size < 2) continue;
        const names = [...splits].join(', ');
        for (const i of group) findings.add({ image_id: s.images[i].id }, () => `In ${s.images[i].split ?? 'no split'}; its group spans ${names}`, group.length);
      }
    },
  },
  {
    id: 'unreadable',
    title: 'Unreadable or truncated files',
    modality: 'image',
    severity: 'error',
    description: 'Files whose thumbnail cannot be decoded, or JPEG/PNG files cut off before their end marker.',
    params: {},
    message: (n) => `${plural(n, 'file')} unreadable or truncated`,
    run(s, _p, findings) {
      for (const image of s.images) {
        if (image.readable === 0) findings.add({ image_id: image.id }, () => 'Cannot be decoded');
        else if (image.truncated === 1) findings.add({ image_id: image.id }, () => 'Truncated: the file ends before its end marker');
      }
    },
  },
  {
    id: 'blurry',
    title: 'Blurry images',
    modality: 'image',
    severity: 'warning',
    description: 'Variance of the Laplacian of the grey 256 px thumbnail below the threshold (lower is blurrier). Ranked blurriest first.',
    params: { threshold: { type: 'number', default: 50, min: 0, max: 100_000, description: 'Laplacian variance below which an image is blurry' } },
    message: (n, p) => `${plural(n, 'image')} with Laplacian variance < ${p.threshold}`,
    run(s, p, findings) {
      featureCheck(s, findings, (i) => s.images[i].blur, (v) => v < p.threshold, (v) => p.threshold - v, (v) => `Laplacian variance ${v.toFixed(1)}`);
    },
  },
  {
    id: 'too_dark',
    title: 'Too dark',
    modality: 'image',
    severity: 'warning',
    description: 'Mean grey level (0–255) below the threshold.',
    params: { threshold: { type: 'number', default: 30, min: 0, max: 255, description: 'Mean brightness below which an image is too dark' } },
    message: (n, p) => `${plural(n, 'image')} darker than ${p.threshold}/255`,
    run(s, p, findings) {
      featureCheck(s, findings, (i) => s.images[i].brightness, (v) => v < p.threshold, (v) => p.threshold - v, (v) => `Mean brightness ${v.toFixed(0)}/255`);
    },
  },
  {
    id: 'too_bright',
    title: 'Too bright',
    modality: 'image',
    severity: 'warning',
    description: 'Mean grey level (0–255) above the threshold.',
    params: { threshold: { type: 'number', default: 225, min: 0, max: 255, description: 'Mean brightness above which an image is too bright' } },
    message: (n, p) => `${plural(n, 'image')} brighter than ${p.threshold}/255`,
    run(s, p, findings) {
      featureCheck(s, findings, (i) => s.images[i].brightness, (v) => v > p.threshold, (v) => v - p.threshold, (v) => `Mean brightness ${v.toFixed(0)}/255`);
    },
  },
  {
    id: 'low_information',
    title: 'Low information',
    modality: 'image',
    severity: 'warning',
    description: 'Entropy of the grey histogram (0–8 bits) below the threshold: nearly uniform images.',
    params: { threshold: { type: 'number', default: 2, min: 0, max: 8, description: 'Entropy in bits below which an image carries little information' } },
    message: (n, p) => `${plural(n, 'image')} with entropy < ${p.threshold} bits`,
    run(s, p, findings) {
      featureCheck(s, findings, (i) => s.images[i].entropy, (v) => v < p.threshold, (v) => p.threshold - v, (v) => `Entropy ${v.toFixed(2)} bits`);
    },
  },
  {
    id: 'odd_size',
    title: 'Extreme aspect ratio or tiny images',
    modality: 'image',
    severity: 'warning',
    description: 'Images whose longer side is more than max_aspect times the shorter, or whose shorter side is below min_side pixels.',
    params: {
      max_aspect: { type: 'number', default: 4, min: 1, max: 1000, description: 'Largest accepted ratio of the longer to the shorter side' },
      min_side: { type: 'integer', default: 32, min: 1, max: 100_000, description: 'Smallest accepted shorter side, in pixels' },
    },
    message: (n) => `${plural(n, 'image')} tiny or with an extreme aspect ratio`,
    run(s, p, findings) {
      for (const image of s.images) {
        const short = Math.min(image.width, image.height);
        const aspect = Math.max(image.width, image.height) / Math.max(1, short);
        if (short < p.min_side) findings.add({ image_id: image.id }, () => `Tiny: ${image.width}×${image.height}`, p.min_side / Math.max(1, short));
        else if (aspect > p.max_aspect) findings.add({ image_id: image.id }, () => `Aspect ratio ${aspect.toFixed(1)}:1 (${image.width}×${image.height})`, aspect / p.max_aspect);
      }
    },
  },
  {
    id: 'grayscale',
    title: 'Grayscale in a colour set',
    modality: 'image',
    severity: 'info',
    description: 'Grayscale images, reported only when they are at most max_fraction of the set (a mostly grey set is not a colour set).',
    params: { max_fraction: { type: 'number', default: 0.5, min: 0, max: 1, description: 'Grayscale images are reported when they are at most this share' } },
    message: (n) => `${plural(n, 'grayscale image')} in a colour set`,
    run(s, p: ParamValues, findings) {
      const grey = s.images.filter((i) => i.readable === 1 && i.grayscale === 1);
      const measured = s.images.filter((i) => i.readable === 1).length;
      if (measured === 0 || grey.length / measured > p.max_fraction) return;
      for (const image of grey) findings.add({ image_id: image.id }, () => 'Grayscale');
    },
  },
];
