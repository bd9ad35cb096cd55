/**
 * Near-duplicate precision and recall (issue 30, item 5): which dHash distance tells copies of one photo from
 * different photos of one scene. Positives are made from each source photo by the edits a copy goes through
 * (re-encoded at JPEG quality 50, resized to half, cropped to the central 90 %, brightened 10 %, converted to WebP);
 * negatives are pairs of different source photos of the same dataset — in a single-scene set (toy cars on one play
 * mat, one webcam) these are the "photos of the same scene" that must not count as duplicates. Roboflow's augmented
 * variants of one photo (`…_jpg.rf.<hash>`) count as one source. The hashes are the service's own (`dHash`).
 * Usage: npx tsx bench/near-duplicates.ts [dataset folders…] (default: the shared toy-cars and indian-vehicles sets)
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp, { type Sharp } from 'sharp';
import { fitPixels, greyLevels, opaqueRgb } from '../src/imaging/fitted-pixels.js';
import { dHashOfGrey, fineHashOfGrey, hashDistance, hashHalves, NEAR_DUPLICATE_MAX_DISTANCE } from '../src/imaging/perceptual-hash.js';
import { nearDuplicateGroups } from '../src/modules/quality/near-duplicates.logic.js';

const roots = process.argv.slice(2);
if (roots.length === 0) roots.push('../shared/datasets/toy-cars-yolo-seg', '../shared/datasets/indian-vehicles-yolo');

const EDITS: Record<string, (s: Sharp, w: number, h: number) => Sharp> = {
  'jpeg q50': (s) => s.jpeg({ quality: 50 }),
  'half size': (s, w) => s.resize(Math.round(w / 2)).jpeg({ quality: 85 }),
  'crop 90%': (s, w, h) => s.extract({ left: Math.round(w * 0.05), top: Math.round(h * 0.05), width: Math.round(w * 0.9), height: Math.round(h * 0.9) }).jpeg({ quality: 85 }),
  'brighter 10%': (s) => s.modulate({ brightness: 1.1 }).jpeg({ quality: 85 }),
  webp: (s) => s.webp({ quality: 75 }),
};


async function sources(root: string): Promise<string[]> {
  const files = (await readdir(root, { recursive: true })).filter((f) => /\.(jpe?g|png)$/i.test(f) && f.includes('images')).sort();
  const seen = new Set<string>();
  return files.filter((f) => {
    const source = f.split('/').pop()!.replace(/\.rf\.[0-9a-f]+\.\w+$/, '');
    if (seen.has(source)) return false;
    seen.add(source);
    return true;
  }).map((f) => join(root, f));
}

/** Both hashes of a file, from the pixels ingest fits (as the service measures them). */
async function hashes(bytes: Buffer): Promise<{ coarse: string; fine: string }> {
  const pixels = await fitPixels(bytes);
  const grey = greyLevels(opaqueRgb(pixels), pixels.width * pixels.height);
  return { coarse: dHashOfGrey(grey, pixels.width, pixels.height), fine: fineHashOfGrey(grey, pixels.width, pixels.height) };
}

const positives: { edit: string; d: number; f: number }[] = [];
const negatives: { set: string; d: number; f: number }[] = [];
/** Per set, the source photos' hashes: with no copy among them, every image the checks group is a false alarm. */
const hashesOf = new Map<string, string[]>();
const finesOf = new Map<string, string[]>();
for (const root of roots) {
  const set = root.split('/').pop()!;
  const files = await sources(root);
  const coarse: string[] = [];
  const fine: string[] = [];
  for (const file of files) {
    const bytes = await readFile(file);
    const hash = await hashes(bytes);
    coarse.push(hash.coarse);
    fine.push(hash.fine);
    const { width, height } = await sharp(bytes).metadata();
    for (const [edit, apply] of Object.entries(EDITS)) {
      const copy = await hashes(await apply(sharp(bytes), width!, height!).toBuffer());
      positives.push({ edit, d: hashDistance(hash.coarse, copy.coarse), f: hashDistance(hash.fine, copy.fine) });
    }
  }
  hashesOf.set(set, coarse);
  finesOf.set(set, fine);
  for (let i = 0; i < coarse.length; i++) for (let j = i + 1; j < coarse.length; j++) negatives.push({ set, d: hashDistance(coarse[i], coarse[j]), f: hashDistance(fine[i], fine[j]) });
  console.log(`${set}: ${files.length} source photos, ${(files.length * (files.length - 1)) / 2} different-photo pairs`);
}

const edits = Object.keys(EDITS);
const sets = [...new Set(negatives.map((n) => n.set))];
console.log(`\n| max distance | recall (all copies) | ${edits.map((e) => `recall ${e}`).join(' | ')} | ${sets.map((s) => `false pairs ${s}`).join(' | ')} | ${sets.map((s) => `photos wrongly grouped ${s}`).join(' | ')} |`);
console.log(`|---:|---:|${edits.map(() => '---:').join('|')}|${sets.map(() => '---:').join('|')}|${sets.map(() => '---:').join('|')}|`);
for (let t = 0; t <= 14; t++) {
  const tp = positives.filter((p) => p.d <= t).length;
  const byEdit = edits.map((e) => {
    const of = positives.filter((p) => p.edit === e);
    return (of.filter((p) => p.d <= t).length / of.length).toFixed(3);
  });
  const bySet = sets.map((s) => {
    const of = negatives.filter((n) => n.set === s);
    return `${of.filter((n) => n.d <= t).length} / ${of.length}`;
  });
  const grouped = sets.map((s) => {
    const hashes = hashesOf.get(s)!;
    const items = hashes.map((h, index) => {
      const [high, low] = hashHalves(h);
      return { index, high: high | 0, low: low | 0 };
    });
    return `${nearDuplicateGroups(items, t).flat().length} / ${hashes.length}`;
  });
  console.log(`| ${t} | ${(tp / positives.length).toFixed(3)} | ${byEdit.join(' | ')} | ${bySet.join(' | ')} | ${grouped.join(' | ')} |`);
}

// The service's test: within the 64-bit default, confirmed by the fine hash within `t` of 256 bits.
const D = NEAR_DUPLICATE_MAX_DISTANCE;
console.log(`\nTwo stages: 64-bit dHash within ${D}, then the 256-bit fine hash within t`);
console.log(`| fine t | recall (all copies) | ${edits.map((e) => `recall ${e}`).join(' | ')} | ${sets.map((s) => `false pairs ${s}`).join(' | ')} | ${sets.map((s) => `photos wrongly grouped ${s}`).join(' | ')} |`);
console.log(`|---:|---:|${edits.map(() => '---:').join('|')}|${sets.map(() => '---:').join('|')}|${sets.map(() => '---:').join('|')}|`);
for (const t of [4, 8, 10, 12, 14, 16, 20, 24]) {
  const hit = (p: { d: number; f: number }) => p.d <= D && p.f <= t;
  const byEdit = edits.map((e) => {
    const of = positives.filter((p) => p.edit === e);
    return (of.filter(hit).length / of.length).toFixed(3);
  });
  const bySet = sets.map((s) => {
    const of = negatives.filter((n) => n.set === s);
    return `${of.filter(hit).length} / ${of.length}`;
  });
  const grouped = sets.map((s) => {
    const coarse = hashesOf.get(s)!;
    const fine = finesOf.get(s)!;
    const items = coarse.map((h, index) => {
      const [high, low] = hashHalves(h);
      return { index, high: high | 0, low: low | 0 };
    });
    return `${nearDuplicateGroups(items, D, (a, b) => hashDistance(fine[a], fine[b]) <= t).flat().length} / ${coarse.length}`;
  });
  console.log(`| ${t} | ${(positives.filter(hit).length / positives.length).toFixed(3)} | ${byEdit.join(' | ')} | ${bySet.join(' | ')} | ${grouped.join(' | ')} |`);
}
