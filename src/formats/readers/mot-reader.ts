import { readFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import type { Annotation, ClassSpec, DatasetItem, DatasetSource, DatasetTrack, DatasetVideo, TrackKeyframe } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { ImportLedger } from '../import-ledger.js';
import { frameNumberOf } from './cvat-video-reader.js';
import { addClass, scanDataset, type DatasetScan } from './scan.js';

/** MOTChallenge's class ids (MOT16/17 ground truth), for sequences without a labels.txt. */
export const MOT_CLASSES = [
  'pedestrian', 'person_on_vehicle', 'car', 'bicycle', 'motorbike', 'non_motorized_vehicle', 'static_person', 'distractor', 'occluder',
  'occluder_on_ground', 'occluder_full', 'reflection',
];

/** A sequence's `seqinfo.ini` `[Sequence]` keys. */
function parseIni(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const match = /^\s*([A-Za-z]+)\s*=\s*(.*?)\s*$/.exec(line);
    if (match) out[match[1]] = match[2];
  }
  return out;
}

/**
 * MOT 1.1 (MOTChallenge ground truth, as CVAT and Datumaro write it): per sequence `gt/gt.txt` rows
 * `frame, id, x, y, w, h, not_ignored, class_id, visibility` (frames from 1), `gt/labels.txt` (class names, one a line,
 * `class_id` counting from 1; without it MOTChallenge's pedestrian, car… ids), `seqinfo.ini` (name, frameRate,
 * seqLength, imWidth, imHeight, imDir) and the frames `img1/000001.jpg`…, frame n being Versa's frame n − 1. Each
 * object id becomes a track of boxes with a keyframe per row (`occluded` when visibility < 0.5); a frame where the
 * object is missing after a row gets an `outside` keyframe (it left the view), as does the frame after its last row
 * when the sequence goes on. `not_ignored` = 0 on an object's first row becomes its `ignored` attribute. Several
 * sequences (folders each with `gt/gt.txt`) are several videos. Rows that cannot be read are skipped with why.
 */
export async function readMot(root: string, scan?: DatasetScan): Promise<DatasetSource> {
  const s = scan ?? (await scanDataset(root));
  const gts = s.files.filter((f) => /(^|\/)gt\/gt\.txt$/i.test(f));
  if (gts.length === 0) throw new FormatError('no MOT ground truth (gt/gt.txt) found');
  const ledger = new ImportLedger();
  const classes: string[] = [];
  const videos: DatasetVideo[] = [];
  const tracks: DatasetTrack[] = [];
  const items: DatasetItem[] = [];
  let ignoredUsed = false;
  for (const gt of gts) {
    const seq = posix.dirname(posix.dirname(gt));
    const at = (p: string) => (seq === '.' ? p : `${seq}/${p}`);
    const iniFile = s.files.find((f) => f.toLowerCase() === at('seqinfo.ini').toLowerCase());
    const ini = iniFile ? parseIni(await readFile(join(root, iniFile), 'utf8')) : {};
    const labelsFile = [at('gt/labels.txt'), 'labels.txt'].find((f) => s.files.includes(f));
    const names = labelsFile ? (await readFile(join(root, labelsFile), 'utf8')).split(/\r?\n/).map((l) => l.trim()).filter(Boolean) : MOT_CLASSES;
    let name = ini.name || (seq === '.' ? 'sequence' : seq.split('/').pop()!);
    for (let n = 2; videos.some((v) => v.name === name); n++) name = `${name} (${n})`;
    const imDir = at(ini.imDir || 'img1');
    const frames = new Map<number, string>();
    for (const path of s.images.filter((p) => p.startsWith(`${imDir}/`))) {
      const n = frameNumberOf(path.split('/').pop()!);
      if (n === null || n < 1) {
        ledger.skip('images', '', { file: path, item: `image ${path}`, reason: 'not a frame: MOT names frames by their number from 1 (000001.jpg)' });
        continue;
      }
      if (frames.has(n - 1)) {
        ledger.skip('images', '', { file: path, item: `image ${path}`, reason: `a second image of frame ${n} (${frames.get(n - 1)})` });
        continue;
      }
      frames.set(n - 1, path);
    }

    if (labelsFile) for (const label of names) addClass(classes, label);
    const loose = new Map<number, (Annotation & { item: string })[]>();
    const byId = new Map<number, { className: string; ignored: boolean; rows: { frame: number; x: number; y: number; w: number; h: number; occluded: boolean }[] }>();
    const lines = (await readFile(join(root, gt), 'utf8')).split(/\r?\n/);
    lines.forEach((line, i) => {
      if (!line.trim()) return;
      const item = `line ${i + 1}`;
      const skip = (reason: string) => ledger.skip('annotations', 'bbox', { file: gt, item, reason });
      const cols = line.split(/[,\s]+/).filter(Boolean).map(Number);
      if (cols.length < 6 || cols.slice(0, 6).some((v) => !Number.isFinite(v))) return skip('a row needs numeric frame, id, x, y, w, h');
      const [frame1, id, x, y, w, h] = cols;
      if (!Number.isInteger(frame1) || frame1 < 1) return skip('frames count from 1');
      if (!Number.isInteger(id) || id < -1) return skip('the object id must be a whole number (-1: a box in no track)');
      if (!(w > 0 && h > 0)) return skip('the box has no area');
      const classId = cols.length >= 8 ? cols[7] : -1;
      const className = classId >= 1 && Number.isInteger(classId) && classId <= names.length ? names[classId - 1] : classId === -1 || cols.length < 8 ? 'object' : null;
      if (className === null) return skip(`class_id ${classId} is not a label of ${labelsFile ?? "MOTChallenge's classes"}`);
      const visibility = cols.length >= 9 ? cols[8] : -1;
      if (id === -1) {
        // A box in no track (detections, and Datumaro's rows without an id): an annotation of its frame.
        const list = loose.get(frame1 - 1) ?? [];
        list.push({ type: 'bbox', geometry: { x, y, width: w, height: h }, className, item });
        loose.set(frame1 - 1, list);
        return;
      }
      let track = byId.get(id);
      if (!track) {
        track = { className, ignored: cols.length >= 7 && cols[6] === 0, rows: [] };
        byId.set(id, track);
      } else if (track.className !== className) {
        ledger.skip('attributes', '', { file: gt, item: `${item}: class "${className}" of object ${id}`, reason: `a track has one class: object ${id} keeps "${track.className}" from its first row` });
      }
      if (track.rows.some((r) => r.frame === frame1 - 1)) return skip(`object ${id} already has a box on frame ${frame1}`);
      track.rows.push({ frame: frame1 - 1, x, y, w, h, occluded: visibility >= 0 && visibility < 0.5 });
    });
    let length = Number(ini.seqLength) || 0;
    for (const f of frames.keys()) length = Math.max(length, f + 1);
    for (const t of byId.values()) for (const r of t.rows) length = Math.max(length, r.frame + 1);
    videos.push({ name, fps: Number(ini.frameRate) || undefined, frameCount: length, width: Number(ini.imWidth) || undefined, height: Number(ini.imHeight) || undefined });
    for (const [id, track] of [...byId].sort((a, b) => a[0] - b[0])) {
      addClass(classes, track.className);
      ignoredUsed ||= track.ignored;
      const rows = track.rows.sort((a, b) => a.frame - b.frame);
      const keyframes: TrackKeyframe[] = [];
      rows.forEach((r, i) => {
        const geometry = { x: r.x, y: r.y, width: r.w, height: r.h };
        keyframes.push({ type: 'bbox', geometry, frame: r.frame, outside: false, occluded: r.occluded });
        const next = rows[i + 1];
        // Missing from the next frame: it left the view there (MOT has no row for a frame the object is not in).
        if ((next ? next.frame : length) > r.frame + 1) keyframes.push({ type: 'bbox', geometry, frame: r.frame + 1, outside: true, occluded: false });
      });
      tracks.push({ video: name, id, className: track.className, ...(track.ignored ? { attributes: { ignored: true } } : {}), keyframes });
    }
    for (const [frame, list] of loose) {
      if (frames.has(frame)) continue;
      for (const a of list) ledger.skip('annotations', 'bbox', { file: gt, item: a.item, reason: `a box in no track on frame ${frame + 1}, whose image is not in the archive` });
    }
    for (const [frame, path] of [...frames].sort((a, b) => a[0] - b[0])) {
      const annotations = (loose.get(frame) ?? []).map(({ item: _, ...a }) => a as Annotation);
      for (const a of annotations) addClass(classes, a.className);
      items.push({ split: null, fileName: path.split('/').pop()!, source: { path: join(s.root, path) }, annotations, video: { name, frame } });
    }
  }
  const classSpecs = new Map<string, ClassSpec>();
  if (ignoredUsed) for (const c of classes) classSpecs.set(c, { attributes: [{ name: 'ignored', type: 'checkbox', default: false }] });
  return {
    format: 'mot',
    projectType: 'object_detection',
    classes,
    classSpecs,
    ledger,
    videos,
    tracks,
    async *items() {
      yield* items;
    },
  };
}
