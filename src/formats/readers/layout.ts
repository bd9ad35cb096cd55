import { readFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { DatasetSource, FormatName, Split } from '../dataset.js';
import { splitFromName } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { DEFAULT_DATASET_LIMITS, readCoco, type CocoLayout, type DatasetLimits } from './coco-reader.js';
import { CREATEML_SUFFIX, readCreateMl } from './createml-reader.js';
import { looksLikeCvatXml, readCvat } from './cvat-reader.js';
import { looksLikeCvatVideoXml, readCvatVideo } from './cvat-video-reader.js';
import { readImageSequence } from './image-sequence-reader.js';
import { readMot } from './mot-reader.js';
import { readDarknet } from './darknet-reader.js';
import { looksLikeDatumaro, readDatumaro } from './datumaro-reader.js';
import { classFolders, readFolders } from './folders-reader.js';
import { readImages } from './images-reader.js';
import { looksLikeLabelMeJson, looksLikeLabelMeXml, readLabelMe } from './labelme-reader.js';
import { looksLikeLabelStudio, readLabelStudio } from './labelstudio-reader.js';
import { readMasks } from './masks-reader.js';
import { isMultiLabelHeader, readMultiLabelCsv } from './multilabel-csv-reader.js';
import { head, scanDataset, type DatasetScan } from './scan.js';
import { readVocMasks } from './voc-masks-reader.js';
import { readVoc } from './voc-reader.js';
import { readYolo, readYoloYaml, YOLO_YAML_NAMES } from './yolo-reader.js';
import { KITTI_LABEL_FILE, looksLikeKittiLine, readKitti } from './kitti-reader.js';
import { isOpenImagesHeader, readOpenImages } from './openimages-reader.js';
import { isVottCsvHeader, looksLikeVottJson, readVott } from './vott-reader.js';
import { readWiderFace, WIDER_FACE_FILE } from './widerface-reader.js';
import { looksLikeMpii, readMpii } from './mpii-reader.js';
import { looksLikeDota, readDota } from './dota-reader.js';
import { ImportLedger } from '../import-ledger.js';
import { looksLikeJsonl, readJsonl } from './jsonl-reader.js';

/** Every `format` value an import accepts, with what it reads (the 422 answers and the API document use these). */
export const FORMAT_DESCRIPTIONS: Record<FormatName, string> = {
  coco: 'COCO JSON (Roboflow per-split _annotations.coco.json, the official annotations/instances_<split>.json layout, CVAT COCO 1.0)',
  yolo: 'YOLO labels (Ultralytics/Roboflow data.yaml or images/+labels/ without one; Darknet/CVAT YOLO 1.1 obj.data/obj.names)',
  voc: 'Pascal VOC XML boxes (Roboflow layout or the VOC release / CVAT Pascal VOC 1.1 with ImageSets)',
  voc_masks: 'Pascal VOC segmentation PNGs (SegmentationClass/, CVAT Segmentation mask 1.1)',
  masks: 'PNG class-index masks with _classes.csv (Roboflow semantic segmentation)',
  cvat: 'CVAT for images 1.1 XML',
  datumaro: 'Datumaro JSON (CVAT Datumaro 1.0)',
  labelme: 'LabelMe JSON (labelme tool) or LabelMe 3.0 XML (CVAT)',
  labelstudio: 'Label Studio JSON export',
  createml: 'CreateML JSON (Roboflow CreateML)',
  multilabel_csv: 'multi-label classification CSV (Roboflow _classes.csv with one-hot columns)',
  kitti: 'KITTI object detection (label_2/*.txt beside image_2/; 3D columns kept as attributes)',
  openimages: 'Open Images boxes (<split>-annotations-bbox.csv with class-descriptions-boxable.csv; flags kept as attributes)',
  vott: 'VoTT 2 exports (CSV *-export.csv, or JSON vott-json-export/*-export.json: rectangles, polygons, polylines, points)',
  widerface: 'WIDER Face (wider_face_<split>_bbx_gt.txt; blur, expression, illumination, invalid, occlusion, pose as attributes)',
  mpii: 'MPII Human Pose JSON (mmpose mpii_<split>.json joints/joints_vis, or mpii_annotations.json joint_self): 16-point skeleton',
  folders: 'classification by folder: <split>/<class>/image (ImageNet style, Ultralytics classify)',
  images: 'plain images, no annotations',
  dota: 'DOTA oriented boxes: labelTxt/<image>.txt with "x1 y1 x2 y2 x3 y3 x4 y4 class difficult" lines (DOTA v1.0/v1.5/v2.0)',
  cvat_video: 'CVAT for video 1.1 XML (tracks with keyframes, outside, occluded) with its frames images/frame_NNNNNN.*: a video with its tracks',
  mot: 'MOT 1.1 / MOTChallenge sequences (gt/gt.txt, gt/labels.txt, seqinfo.ini, img1/): a video per sequence, a track per object id',
  image_sequence: 'a folder of ordered frames (each folder one video, frames numbered by their names), no annotations',
  jsonl: "Versa's jsonl export (one image a line with its annotations in the API's shapes) beside the images it names",
};

interface Candidate {
  format: FormatName;
  /** The files that made it match, for the 422 answer. */
  evidence: string[];
  read: () => Promise<DatasetSource>;
}

const COCO_OFFICIAL = /^(instances|person_keypoints|captions|panoptic|image_info|stuff|labels)_(.+)\.json$/i;
const NAMES_FILES = ['classes.txt', 'obj.names', 'names.txt', 'classes.names'];
/** Files that say nothing about annotations (tool READMEs, licences, OS noise). */
const NOT_ANNOTATIONS = /(^|\/)(readme[^/]*|license[^/]*|licence[^/]*|source\.(txt|md)|[^/]*\.md)$/i;
const ANNOTATION_EXTENSIONS = /\.(json|jsonl|xml|csv|ya?ml|txt|names|data)$/i;
const jsonlFiles = (scan: DatasetScan) => scan.files.filter((f) => f.toLowerCase().endsWith('.jsonl'));

/**
 * Reads a dataset folder. With `format`, that reader is used as asked. Without, the layout is decided from the
 * annotation files' content: exactly one reader must match; several or none is a FormatError (422) that lists what
 * was found and which `format` values apply. Class-per-folder and plain images are chosen only when the folder holds
 * no annotation file at all.
 */
export async function readLayout(root: string, format?: FormatName, limits: DatasetLimits = DEFAULT_DATASET_LIMITS): Promise<DatasetSource> {
  const scan: DatasetScan = { ...(await scanDataset(root)), limits };
  const candidates = await detectCandidates(scan);
  if (format) {
    const match = candidates.find((c) => c.format === format);
    return match ? match.read() : forced(scan, format);
  }
  return choose(scan, candidates).read();
}

/** The single format the folder's content names (same rules as `readLayout`). */
export async function detectLayout(root: string): Promise<FormatName> {
  const scan = await scanDataset(root);
  return choose(scan, await detectCandidates(scan)).format;
}

function choose(scan: DatasetScan, candidates: Candidate[]): Candidate {
  if (candidates.length === 1) return candidates[0];
  const list = (c: Candidate) => `${c.evidence.slice(0, 3).join(', ')}${c.evidence.length > 3 ? ` and ${c.evidence.length - 3} more` : ''} (format=${c.format})`;
  if (candidates.length > 1) {
    throw new FormatError(
      `ambiguous dataset layout: found ${candidates.map(list).join('; ')}. Send the format field to choose: ${candidates.map((c) => c.format).join(' or ')}`,
    );
  }
  const annotationLike = scan.files.filter((f) => ANNOTATION_EXTENSIONS.test(f) && !NOT_ANNOTATIONS.test(f));
  const what = annotationLike.length
    ? `found ${annotationLike.slice(0, 5).join(', ')}${annotationLike.length > 5 ? ` and ${annotationLike.length - 5} more` : ''}, which no reader recognises`
    : 'found no annotation files and no images';
  throw new FormatError(
    `unrecognised dataset layout: ${what} (${scan.images.length} images). Formats read: ${Object.keys(FORMAT_DESCRIPTIONS).join(', ')}` +
      (scan.images.length ? '; send format=images to import the images without annotations, or format=folders for class folders' : ''),
  );
}

/** A reader asked for by name that detection did not propose: run it as is, so its own error says what is missing. */
function forced(scan: DatasetScan, format: FormatName): Promise<DatasetSource> {
  const root = scan.root;
  switch (format) {
    case 'coco': return readCoco(root, scan.limits);
    case 'yolo': return readYolo(root);
    case 'voc': return readVoc(root);
    case 'voc_masks': return readVocMasks(root, scan);
    case 'masks': return readMasks(root);
    case 'cvat': return readCvat(root, scan);
    case 'datumaro': return readDatumaro(root, scan);
    case 'labelme': return readLabelMe(root, scan);
    case 'labelstudio': return readLabelStudio(root, scan);
    case 'createml': return readCreateMl(root, scan);
    case 'multilabel_csv': return readMultiLabelCsv(root, scan);
    case 'kitti': return readKitti(scan);
    case 'openimages': return readOpenImages(scan);
    case 'vott': return readVott(scan, scan.files.filter((f) => f.toLowerCase().endsWith('.json')), scan.files.filter((f) => /-export\.csv$/i.test(f)));
    case 'widerface': return readWiderFace(scan);
    case 'mpii': return readMpii(scan, scan.files.filter((f) => f.toLowerCase().endsWith('.json')));
    case 'folders': return readFolders(root);
    case 'images': return readImages(root, scan);
    case 'dota': return readDota(root, scan);
    case 'cvat_video': return readCvatVideo(root, scan);
    case 'mot': return readMot(root, scan);
    case 'image_sequence': return readImageSequence(root, scan);
    case 'jsonl': return readJsonl(scan, jsonlFiles(scan));
    default: throw new FormatError(`unknown dataset format "${String(format)}"`);
  }
}

async function detectCandidates(scan: DatasetScan): Promise<Candidate[]> {
  const root = scan.root;
  const candidates: Candidate[] = [];
  const add = (format: FormatName, evidence: string[], read: () => Promise<DatasetSource>) => {
    const existing = candidates.find((c) => c.format === format);
    if (!existing) candidates.push({ format, evidence, read });
  };
  const shallow = (f: string, depth: number) => f.split('/').length <= depth;

  // JSON documents, told apart by their first bytes.
  const coco: string[] = [];
  const json = { datumaro: [] as string[], labelme: [] as string[], labelstudio: [] as string[], createml: [] as string[] };
  const vottJson: string[] = [];
  const mpiiJson: string[] = [];
  // Per-image documents (LabelMe) come by the thousand in one folder: after 20 of them and nothing else there, the
  // rest of that folder is taken to be the same (bench/layout-detection.ts: 10,000 files read in full cost 70× a walk).
  const perFolder = new Map<string, number>();
  for (const file of scan.files.filter((f) => f.toLowerCase().endsWith('.json') && shallow(f, 5))) {
    const folder = file.slice(0, file.lastIndexOf('/') + 1);
    if ((perFolder.get(folder) ?? 0) >= 20) {
      json.labelme.push(file);
      continue;
    }
    const text = await head(join(root, file));
    if (looksLikeMpii(text)) mpiiJson.push(file);
    else if (looksLikeVottJson(text)) vottJson.push(file);
    else if (file.toLowerCase().endsWith(CREATEML_SUFFIX) || (/^\s*\[/.test(text) && /"coordinates"\s*:/.test(text))) json.createml.push(file);
    else if (looksLikeLabelStudio(text)) json.labelstudio.push(file);
    else if (looksLikeDatumaro(text)) json.datumaro.push(file);
    else if (looksLikeLabelMeJson(text)) json.labelme.push(file);
    else if (/^\s*\{/.test(text) && (/"images"\s*:/.test(text) || (/"annotations"\s*:/.test(text) && /"categories"\s*:/.test(text)))) coco.push(file);
    // Any other kind of file in the folder: keep reading every file there.
    perFolder.set(folder, json.labelme.at(-1) === file ? (perFolder.get(folder) ?? 0) + 1 : -Infinity);
  }
  if (coco.length) add('coco', coco, cocoReader(scan, coco));
  if (json.datumaro.length) add('datumaro', json.datumaro, () => readDatumaro(root, scan));
  if (json.labelme.length) add('labelme', json.labelme, () => readLabelMe(root, scan));
  if (json.labelstudio.length) add('labelstudio', json.labelstudio, () => readLabelStudio(root, scan));
  if (json.createml.length) add('createml', json.createml, () => readCreateMl(root, scan));
  if (mpiiJson.length) add('mpii', mpiiJson, () => readMpii(scan, mpiiJson));

  // XML: CVAT's one document, LabelMe 3.0 per image, or Pascal VOC per image.
  const xml = { cvat: [] as string[], labelme: [] as string[], voc: [] as string[] };
  const cvatVideo: string[] = [];
  for (const file of scan.files.filter((f) => f.toLowerCase().endsWith('.xml'))) {
    const text = await head(join(root, file));
    if (await looksLikeCvatVideoXml(join(root, file))) cvatVideo.push(file);
    else if (await looksLikeCvatXml(join(root, file))) xml.cvat.push(file);
    else if (looksLikeLabelMeXml(text)) xml.labelme.push(file);
    else if (/<annotation[\s>]/.test(text)) xml.voc.push(file);
    // One file of each kind decides for a folder of thousands: stop once all three are known.
    if (xml.voc.length > 20 && !xml.cvat.length && !xml.labelme.length) break;
  }
  if (xml.cvat.length) add('cvat', xml.cvat, () => readCvat(root, scan));
  if (cvatVideo.length) add('cvat_video', cvatVideo, () => readCvatVideo(root, scan));
  if (xml.labelme.length) add('labelme', xml.labelme, () => readLabelMe(root, scan));
  if (xml.voc.length) add('voc', xml.voc, () => readVoc(root));
  const segmentation = scan.files.filter((f) => /(^|\/)SegmentationClass\/[^/]+\.png$/i.test(f));
  // A VOC release with Annotations/ reads as boxes (format=voc_masks reads its masks instead).
  if (segmentation.length && !xml.voc.length) add('voc_masks', segmentation.slice(0, 1).concat(segmentation.length > 1 ? [`${segmentation.length - 1} more masks`] : []), () => readVocMasks(root, scan));

  // YOLO: a data.yaml anywhere near the top, Ultralytics images/ + labels/ without one, or Darknet's obj.names.
  const yamls = scan.files.filter((f) => shallow(f, 3) && /\.ya?ml$/i.test(f));
  const yoloYaml = yamls.find((f) => YOLO_YAML_NAMES.includes(f)) ?? yamls.find((f) => YOLO_YAML_NAMES.includes(f.split('/').pop()!));
  const namedYaml = yoloYaml ?? (await firstMatching(root, yamls, /^\s*names\s*:/m));
  const darknet = scan.files.filter((f) => /(^|\/)obj\.(names|data)$/.test(f));
  const labelFiles = scan.files.filter((f) => /(^|\/)labels(\/[^/]+)?\/[^/]+\.txt$/.test(f));
  if (namedYaml) add('yolo', [namedYaml], () => readYoloAt(scan, namedYaml));
  else if (darknet.length && scan.images.some((p) => /(^|\/)obj_[^/]+_data\//.test(p))) add('yolo', darknet, () => readDarknet(root, scan));
  else if (labelFiles.length && scan.images.some((p) => /(^|\/)images\//.test(p))) add('yolo', [labelFiles[0], `${labelFiles.length} label files, no data.yaml`], () => readYoloWithoutYaml(scan));

  // DOTA: per-image .txt files of "x1 y1 … x4 y4 class difficult" lines (labelTxt/), told apart by their content.
  const dota: string[] = [];
  for (const file of scan.files.filter((f) => f.toLowerCase().endsWith('.txt') && !NOT_ANNOTATIONS.test(f) && !labelFiles.includes(f)).slice(0, 20)) {
    if (looksLikeDota(await head(join(root, file), 4096))) dota.push(file);
  }
  if (dota.length) add('dota', dota, () => readDota(root, scan));

  // CSV: Roboflow's _classes.csv is either the masks' class table or a multi-label one-hot table.
  for (const file of scan.files.filter((f) => f.split('/').pop() === '_classes.csv' && shallow(f, 3))) {
    const first = (await head(join(root, file), 4096)).split(/\r?\n/, 1)[0] ?? '';
    if (isMultiLabelHeader(first)) add('multilabel_csv', [file], () => readMultiLabelCsv(root, scan));
    else add('masks', [file], () => readMasks(root));
  }

  // Table-like layouts named by their files and first lines: KITTI, Open Images, VoTT CSV, WIDER Face.
  const kitti = scan.files.filter((f) => KITTI_LABEL_FILE.test(f));
  if (kitti.length && (await firstLines(root, kitti.slice(0, 5))).some(looksLikeKittiLine)) add('kitti', [kitti[0], `${kitti.length} label files`], () => readKitti(scan));
  const csvs = scan.files.filter((f) => f.toLowerCase().endsWith('.csv') && shallow(f, 4));
  const csvHeads = await Promise.all(csvs.map(async (f) => ({ f, first: (await head(join(root, f), 4096)).split(/\r?\n/, 1)[0] ?? '' })));
  const openImages = csvHeads.filter((c) => isOpenImagesHeader(c.first)).map((c) => c.f);
  if (openImages.length) add('openimages', openImages, () => readOpenImages(scan));
  const vottCsv = csvHeads.filter((c) => isVottCsvHeader(c.first)).map((c) => c.f);
  if (vottCsv.length || vottJson.length) add('vott', [...vottCsv, ...vottJson], () => readVott(scan, vottJson, vottCsv));
  const wider = scan.files.filter((f) => WIDER_FACE_FILE.test(f));
  if (wider.length) add('widerface', wider, () => readWiderFace(scan));
  // MOT: `<sequence>/gt/gt.txt` (with seqinfo.ini, or the img1/ frames beside it).
  const mot = scan.files.filter((f) => /(^|\/)gt\/gt\.txt$/i.test(f));
  if (mot.length && scan.files.some((f) => /(^|\/)(seqinfo\.ini|img1\/[^/]+)$/i.test(f))) add('mot', mot, () => readMot(root, scan));
  // Versa's own jsonl export, told by its first line.
  const jsonl: string[] = [];
  for (const f of jsonlFiles(scan)) if (looksLikeJsonl((await head(join(root, f), 65536)).split(/\r?\n/, 1)[0] ?? '')) jsonl.push(f);
  if (jsonl.length) add('jsonl', jsonl, () => readJsonl(scan, jsonl));

  if (candidates.length === 0 && !scan.files.some((f) => ANNOTATION_EXTENSIONS.test(f) && !NOT_ANNOTATIONS.test(f))) {
    const folders = await classFolders(root);
    if (folders.length > 0) add('folders', folders.slice(0, 3).map((f) => posix.join(f.split ?? '', f.className) + '/'), () => readFolders(root));
    else if (scan.images.length > 0) add('images', [`${scan.images.length} images`], () => readImages(root, scan));
  }
  return candidates;
}

/** The first non-empty line of each file. */
async function firstLines(root: string, files: string[]): Promise<string[]> {
  return Promise.all(files.map(async (f) => (await head(join(root, f), 4096)).split(/\r?\n/).find((l) => l.trim()) ?? ''));
}

async function firstMatching(root: string, files: string[], pattern: RegExp): Promise<string | undefined> {
  for (const file of files) if (pattern.test(await readFile(join(root, file), 'utf8').catch(() => ''))) return file;
  return undefined;
}

/**
 * COCO files to read. Official layout (`annotations/<kind>_<split>.json`): per split, instances are read; keypoint
 * files (boxes, outlines and keypoints) when there is no instances file for that split; captions, panoptic,
 * image_info, stuff and labels files have no counterpart here and are left out, each listed in the import's skipped
 * items — a dataset with nothing else is refused with a message saying so. Other names (Roboflow's `_annotations.coco.json`,
 * `annotations.json`) are all read.
 */
function cocoReader(scan: DatasetScan, files: string[]): () => Promise<DatasetSource> {
  return async () => {
    const official = new Map<string, Map<string, string>>();
    const plain: string[] = [];
    for (const file of files) {
      const match = COCO_OFFICIAL.exec(file.split('/').pop()!);
      if (!match) plain.push(file);
      else {
        const [, kind, subset] = match;
        if (!official.has(subset)) official.set(subset, new Map());
        official.get(subset)!.set(kind.toLowerCase(), file);
      }
    }
    const layout: Required<CocoLayout> = { files: [...plain], splitOf: {}, imageDirs: {} };
    const skipped: string[] = [];
    // Files left out are accounted for in the import's answer, one entry per file.
    const ledger = new ImportLedger();
    for (const [subset, kinds] of official) {
      const used = kinds.get('instances') ?? kinds.get('person_keypoints');
      for (const [kind, file] of kinds) {
        if (file === used) continue;
        skipped.push(file);
        const reason = kind === 'person_keypoints'
          ? `the persons' boxes and outlines are those of ${used}; import ${file} on its own to keep their keypoints`
          : `${kind} annotations have no counterpart in Versa`;
        ledger.skip('annotations', kind, { file, item: `the ${kind} file`, reason });
      }
      if (!used) continue;
      layout.files.push(used);
      layout.splitOf[used] = splitOfSubset(subset);
      const dir = used.split('/').slice(0, -2).join('/');
      const at = (p: string) => (dir ? `${dir}/${p}` : p);
      layout.imageDirs[used] = [at(`images/${subset}`), at(subset), at('images'), at(`images/${subset.replace(/\d{4}$/, '')}`), at(subset.replace(/\d{4}$/, ''))];
    }
    if (layout.files.length === 0) {
      throw new FormatError(
        `COCO files found (${skipped.join(', ')}), but none with object annotations: captions, panoptic, image_info, stuff and ` +
          'label files are not imported. Add the instances_<split>.json (or person_keypoints_<split>.json) files',
      );
    }
    return readCoco(scan.root, scan.limits, layout, ledger);
  };
}

function splitOfSubset(subset: string): Split | null {
  return splitFromName(subset) ?? splitFromName(subset.replace(/\d{4}$/, ''));
}

/** A data.yaml somewhere in the dataset (not only at its root); class names may also come from a names file. */
async function readYoloAt(scan: DatasetScan, yamlPath: string): Promise<DatasetSource> {
  const config = await readYoloYaml(scan.root, yamlPath);
  if (config.names === undefined) {
    const names = await namesFile(scan);
    if (names) config.names = names;
  }
  return readYolo(scan.root, { config, source: yamlPath });
}

/** Ultralytics `images/<split>/` + `labels/<split>/` without a data.yaml: names from a names file, else the indices. */
async function readYoloWithoutYaml(scan: DatasetScan): Promise<DatasetSource> {
  const config: Record<string, unknown> = {};
  for (const key of ['train', 'val', 'valid', 'test']) {
    const dir = [`images/${key}`, `${key}/images`].find((d) => scan.images.some((p) => p.startsWith(`${d}/`)));
    if (dir) config[key] = dir;
  }
  let names = await namesFile(scan);
  if (!names) {
    let highest = -1;
    for (const file of scan.files.filter((f) => /(^|\/)labels(\/[^/]+)?\/[^/]+\.txt$/.test(f))) {
      for (const line of (await readFile(join(scan.root, file), 'utf8')).split('\n')) {
        const index = Number(line.trim().split(/\s+/)[0]);
        if (line.trim() && Number.isInteger(index) && index > highest) highest = index;
      }
    }
    names = Array.from({ length: highest + 1 }, (_, i) => String(i));
  }
  return readYolo(scan.root, { config: { ...config, names }, source: 'labels/ (no data.yaml)' });
}

async function namesFile(scan: DatasetScan): Promise<string[] | null> {
  const file = scan.files.find((f) => NAMES_FILES.includes(f.split('/').pop()!) && f.split('/').length <= 2);
  if (!file) return null;
  const text = await readFile(join(scan.root, file), 'utf8');
  if (/^\s*names\s*:/m.test(text)) {
    const parsed = parseYaml(text) as { names?: unknown };
    return Array.isArray(parsed?.names) ? parsed.names.map(String) : null;
  }
  return text.split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
}
