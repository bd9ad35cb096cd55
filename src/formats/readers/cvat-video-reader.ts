import { join, posix } from 'node:path';
import type { AttributeSpec, AttributeValue } from '../../imaging/class-specs.js';
import type { Keypoint } from '../../imaging/geometry.js';
import type { Annotation, DatasetItem, DatasetSource, DatasetTrack, DatasetVideo, TrackKeyframe } from '../dataset.js';
import { stemOf } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { ImportLedger } from '../import-ledger.js';
import { attributesOf, classSpecsOf, geometryOf, kid, kids, labelDecl, looksLikeCvatXml, parse, parsePoints, ShapeError, textOf, type El, type LabelDecl, type ShapeContext } from './cvat-reader.js';
import { addClass, head, projectTypeOf, scanDataset, type DatasetScan } from './scan.js';

/** A CVAT for video 1.1 document: `<annotations>` whose shapes are in `<track>`s, not `<image>`s. */
export async function looksLikeCvatVideoXml(path: string): Promise<boolean> {
  if (!(await looksLikeCvatXml(path))) return false;
  const text = await head(path);
  return !/<image\s[^>]*name=/.test(text) && (/<track\s[^>]*label=/.test(text) || /<mode>\s*interpolation\s*<\/mode>/.test(text) || /<original_size>/.test(text));
}

/** The frame number a frame's file name carries: `frame_000012.PNG` → 12 (the last run of digits of its stem). */
export function frameNumberOf(fileName: string): number | null {
  const match = /(\d+)(?!.*\d)/.exec(stemOf(fileName));
  return match ? Number(match[1]) : null;
}

const TRACK_SHAPES = new Set(['box', 'polygon', 'polyline', 'points', 'ellipse', 'mask']);

/**
 * CVAT for video 1.1 (`annotations.xml` with the task's frames under `images/`, as CVAT's "Export task dataset" with
 * images writes it; several documents in folders of their own are several videos). The frames are the images whose
 * names carry their frame number (`frame_000012.PNG`); the task's `<original_size>`, `<start_frame>`, `<stop_frame>`
 * and `frame_filter` step say the video's length and how exported frames are numbered. Each `<track>` becomes a
 * track: its shapes with `keyframe="1"` (and every `outside="1"` one) are its keyframes with their `outside` and
 * `occluded` flags; shapes CVAT wrote for the frames between (`keyframe="0"`) are what interpolation gives back and
 * are counted as read and kept. `<box>` (with `rotation`), `<polygon>`, `<polyline>`, `<points>`, `<ellipse>` and
 * `<mask>`; a `<skeleton>` track with one sub-track per point becomes keypoints. `<attribute>` values of a track's
 * first keyframe are the track's attributes (Versa keeps them per track: a value that changes later is skipped with
 * why). `<tag frame>` elements become a classification on their frame. Everything read is kept or skipped with why.
 */
/**
 * A document's frames: its images (under its `images/` folder when it has one), by the number in their names. CVAT
 * numbers the frames it writes from 0; the XML counts from the task's start with its step. When no written number is a
 * frame the XML names, the written ones are positions: frame = start + position × step.
 */
function framesOf(own: string[], dir: string, annotatedFrames: ReadonlySet<number>, start: number, step: number, ledger: ImportLedger): Map<number, string> {
  const inImages = own.filter((p) => p.slice(dir ? dir.length + 1 : 0).startsWith('images/'));
  const frameFiles = new Map<number, string>();
  const numbered = (inImages.length > 0 ? inImages : own).map((p) => ({ path: p, n: frameNumberOf(p.split('/').pop()!) }));
  const relative = (start > 0 || step > 1) && numbered.every((f) => f.n === null || !annotatedFrames.has(f.n)) && annotatedFrames.size > 0;
  for (const { path, n } of numbered) {
    if (n === null) {
      ledger.skip('images', '', { file: path, item: `image ${path}`, reason: 'not a frame: its name carries no frame number (frame_000012.png)' });
      continue;
    }
    const frame = relative ? start + n * step : n;
    if (frameFiles.has(frame)) {
      ledger.skip('images', '', { file: path, item: `image ${path}`, reason: `a second image of frame ${frame} (${frameFiles.get(frame)})` });
      continue;
    }
    frameFiles.set(frame, path);
  }
  return frameFiles;
}

/** A document's tracks (into `into`) and its per-frame tags (returned by frame); <image> elements are skipped. */
function readElements(doc: El, name: string, frameFiles: ReadonlyMap<number, string>, context: ShapeContext, into: { classes: string[]; tracks: DatasetTrack[]; types: Annotation['type'][] }): Map<number, Annotation[]> {
  const { classes, tracks, types } = into;
  const tags = new Map<number, Annotation[]>();
  for (const el of doc.children) {
    if (el.tag === 'track') {
      const track = el.children.some((c) => c.tag === 'track') || el.children.some((c) => c.tag === 'skeleton')
        ? skeletonTrack(el, name, context)
        : shapeTrack(el, name, context);
      const group = Number(el.attrs.group_id ?? 0);
      if (track && Number.isInteger(group) && group > 0) {
        // Tracks have no group in Versa: the grouping is said, the track kept on its own.
        context.ledger.skip('attributes', '', { file: context.file, item: `group_id ${group} of track ${el.attrs.id ?? '?'} (label "${track.className}")`, reason: 'Versa keeps no groups between tracks: the track is kept on its own' });
      }
      if (track) {
        tracks.push(track);
        addClass(classes, track.className);
        types.push(track.keyframes[0].type);
      }
    } else if (el.tag === 'tag') {
      const label = (el.attrs.label ?? '').trim();
      const frame = Number(el.attrs.frame);
      const item = `tag on frame ${el.attrs.frame ?? '?'} (label "${label}")`;
      if (!label || !frameFiles.has(frame)) {
        context.ledger.skip('annotations', 'tag', { file: context.file, item, reason: label ? 'its frame is not in the archive' : 'the tag has no label' });
        continue;
      }
      const attributes = attributesOf(el, label, context);
      const group = Number(el.attrs.group_id ?? 0);
      const groupId = Number.isInteger(group) && group > 0 ? { groupId: group } : {};
      tags.set(frame, [...(tags.get(frame) ?? []), { type: 'classification', geometry: {}, className: label, ...(attributes ? { attributes } : {}), ...groupId }]);
      addClass(classes, label);
    } else if (el.tag === 'image') {
      context.ledger.skip('images', '', { file: context.file, item: `image ${el.attrs.name ?? el.attrs.id}`, reason: 'an <image> in a CVAT for video document: import CVAT for images 1.1 exports with format=cvat' });
    }
  }
  return tags;
}

export async function readCvatVideo(root: string, scan?: DatasetScan): Promise<DatasetSource> {
  const s = scan ?? (await scanDataset(root));
  const files: string[] = [];
  for (const f of s.files.filter((p) => p.toLowerCase().endsWith('.xml'))) if (await looksLikeCvatVideoXml(join(root, f))) files.push(f);
  if (files.length === 0) throw new FormatError('no CVAT for video 1.1 XML (annotations.xml with <track> elements) found');
  const ledger = new ImportLedger();
  const classes: string[] = [];
  const labels = new Map<string, LabelDecl>();
  const skeletons = new Map<string, string[]>();
  const attributeSpecs = new Map<string, AttributeSpec[]>();
  const occludedClasses = new Set<string>();
  const videos: DatasetVideo[] = [];
  const tracks: DatasetTrack[] = [];
  const items: DatasetItem[] = [];
  const types: Annotation['type'][] = [];

  for (const file of files) {
    const doc = await parse(root, file);
    const meta = kid(doc, 'meta');
    const task = kid(meta, 'task') ?? kid(kid(meta, 'job'), 'task') ?? kid(meta, 'job');
    const holder = [kid(meta, 'project'), task, kid(meta, 'job')].find((h) => kid(h, 'labels'));
    for (const label of kids(kid(holder, 'labels'), 'label')) {
      const decl = labelDecl(label);
      if (!decl.name) continue;
      if (decl.parent) {
        const names = skeletons.get(decl.parent) ?? [];
        if (!names.includes(decl.name)) skeletons.set(decl.parent, [...names, decl.name]);
      } else if (!labels.has(decl.name)) {
        labels.set(decl.name, decl);
        attributeSpecs.set(decl.name, decl.attributes);
        addClass(classes, decl.name);
      }
    }

    const dir = posix.dirname(file) === '.' ? '' : posix.dirname(file);
    const under = (p: string) => (dir ? p.startsWith(`${dir}/`) : true);
    // The video's name: the source file CVAT read, else the task's name, else the document's folder.
    let name = textOf(meta, 'source') || textOf(task, 'name') || (dir ? dir.split('/').pop()! : 'video');
    for (let n = 2; videos.some((v) => v.name === name); n++) name = `${name} (${n})`;
    const start = Number(textOf(task, 'start_frame')) || 0;
    const stop = Number(textOf(task, 'stop_frame'));
    const step = Number(/step\s*=\s*(\d+)/.exec(textOf(task, 'frame_filter'))?.[1]) || 1;
    const size = kid(task, 'original_size');
    const width = Number(textOf(size, 'width')) || undefined;
    const height = Number(textOf(size, 'height')) || undefined;

    const annotatedFrames = new Set<number>();
    for (const el of doc.children) for (const shape of el.tag === 'track' ? el.children : [el]) if (shape.attrs.frame !== undefined) annotatedFrames.add(Number(shape.attrs.frame));
    const frameFiles = framesOf(s.images.filter(under), dir, annotatedFrames, start, step, ledger);
    const lastFrame = Math.max(...frameFiles.keys(), ...annotatedFrames, Number.isFinite(stop) ? stop : -1);
    videos.push({ name, frameCount: lastFrame + 1, width, height });

    const context: ShapeContext = { file, where: '', width: width ?? 0, height: height ?? 0, ledger, attributeSpecs, skeletons, occludedClasses };
    const tags = readElements(doc, name, frameFiles, context, { classes, tracks, types });
    for (const [frame, path] of [...frameFiles].sort((a, b) => a[0] - b[0])) {
      items.push({ split: null, fileName: path.split('/').pop()!, source: { path: join(s.root, path) }, annotations: tags.get(frame) ?? [], video: { name, frame } });
    }
  }

  const classSpecs = classSpecsOf(classes, attributeSpecs, skeletons, labels);
  return {
    format: 'cvat_video',
    projectType: projectTypeOf(types),
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

const flag = (el: El, name: string) => el.attrs[name] === '1' || el.attrs[name] === 'true';
const isKeyframe = (el: El) => el.attrs.keyframe === undefined || flag(el, 'keyframe') || flag(el, 'outside');

/** A track's attribute values: those of its first keyframe; a later keyframe's other value is skipped with why. */
function trackAttributes(elements: El[], label: string, context: ShapeContext, what: string): Record<string, AttributeValue> | undefined {
  let first: Record<string, AttributeValue> | undefined;
  for (const el of elements) {
    const values = attributesOf(el, label, context);
    const { occluded: _, ...rest } = values ?? {};
    if (first === undefined) {
      first = rest;
      continue;
    }
    for (const [name, value] of Object.entries(rest)) {
      if (first[name] !== value) {
        context.ledger.skip('attributes', '', {
          file: context.file,
          item: `attribute "${name}" = ${JSON.stringify(value)} of ${what} on frame ${el.attrs.frame}`,
          reason: `Versa keeps one value per track: the track keeps ${JSON.stringify(first[name])} from its first keyframe`,
        });
      }
    }
  }
  return first && Object.keys(first).length > 0 ? first : undefined;
}

/** A track of boxes, polygons, polylines, points, ellipses or masks. */
function shapeTrack(el: El, video: string, context: ShapeContext): DatasetTrack | null {
  const label = (el.attrs.label ?? '').trim();
  const what = `track ${el.attrs.id ?? '?'} (label "${label}")`;
  const { file, ledger } = context;
  const shapes = el.children.filter((c) => c.tag !== 'attribute');
  const keyframes: TrackKeyframe[] = [];
  const kept: El[] = [];
  for (const shape of shapes) {
    const item = `${what}: ${shape.tag} on frame ${shape.attrs.frame ?? '?'}`;
    const skip = (reason: string) => ledger.skip('annotations', `${shape.tag} keyframe`, { file, item, reason });
    if (!TRACK_SHAPES.has(shape.tag)) {
      skip(shape.tag === 'cuboid' ? 'Versa has no 3D cuboid shape' : `<${shape.tag}> is not a track shape Versa knows`);
      continue;
    }
    if (!label) {
      skip('the track has no label');
      continue;
    }
    if (shape.tag === 'mask' && !(context.width > 0 && context.height > 0)) {
      skip('the task declares no frame size (<original_size>) to place the mask in');
      continue;
    }
    const frame = Number(shape.attrs.frame);
    if (!Number.isInteger(frame) || frame < 0) {
      skip('the shape has no frame number');
      continue;
    }
    if (!isKeyframe(shape)) {
      // CVAT writes the shapes between keyframes too: interpolation gives them back.
      ledger.keep('annotations', `${shape.tag} interpolated`);
      continue;
    }
    try {
      const geometry = geometryOf(shape, label, { ...context, where: item }, item);
      if (!geometry) continue;
      keyframes.push({ ...(geometry as Annotation), frame, outside: flag(shape, 'outside'), occluded: flag(shape, 'occluded') } as TrackKeyframe);
      kept.push(shape);
    } catch (error) {
      if (!(error instanceof ShapeError)) throw error;
      skip(error.message);
    }
  }
  if (keyframes.length === 0) {
    ledger.skip('tracks', '', { file, item: what, reason: label ? 'it has no keyframe Versa can read' : 'the track has no label' });
    return null;
  }
  const attributes = trackAttributes(kept, label, context, what);
  return { video, id: Number(el.attrs.id), className: label, ...(attributes ? { attributes } : {}), keyframes: keyframes.sort((a, b) => a.frame - b.frame) };
}

/**
 * A skeleton track: `<skeleton frame>` elements and one sub-track per point (`<track label="<point>">` of `<points>`).
 * Keyframes are the frames where the skeleton or any point has a keyframe; each point there is its sub-track's
 * latest shape at or before the frame (outside: not labelled, v 0; occluded: v 1; else v 2).
 */
function skeletonTrack(el: El, video: string, context: ShapeContext): DatasetTrack | null {
  const label = (el.attrs.label ?? '').trim();
  const what = `track ${el.attrs.id ?? '?'} (skeleton "${label}")`;
  const { file, ledger } = context;
  const names = context.skeletons.get(label) ?? [];
  const own = el.children.filter((c) => c.tag === 'skeleton');
  const subTracks = el.children.filter((c) => c.tag === 'track');
  const byPoint = new Map<string, El[]>();
  for (const sub of subTracks) {
    const point = sub.attrs.label ?? '';
    if (!names.includes(point)) {
      for (const shape of sub.children) ledger.skip('annotations', 'skeleton point', { file, item: `${what}: point "${point}" on frame ${shape.attrs.frame}`, reason: `the skeleton "${label}" declares no point "${point}"` });
      continue;
    }
    byPoint.set(point, sub.children.filter((c) => c.tag === 'points').sort((a, b) => Number(a.attrs.frame) - Number(b.attrs.frame)));
  }
  const frames = new Set<number>();
  for (const shape of [...own, ...[...byPoint.values()].flat()]) if (isKeyframe(shape)) frames.add(Number(shape.attrs.frame));
  // Points are kept inside the keypoints keyframes (the import counts those); the frames between, by interpolation.
  for (const shape of [...byPoint.values()].flat()) ledger.keep('annotations', isKeyframe(shape) ? 'skeleton point' : 'points interpolated');
  for (const shape of own) if (!isKeyframe(shape)) ledger.keep('annotations', 'skeleton interpolated');
  const keyframes: TrackKeyframe[] = [];
  for (const frame of [...frames].filter(Number.isInteger).sort((a, b) => a - b)) {
    const skeleton = own.filter((s) => Number(s.attrs.frame) <= frame).pop();
    const points: Keypoint[] = names.map((name) => {
      const shape = (byPoint.get(name) ?? []).filter((p) => Number(p.attrs.frame) <= frame).pop();
      if (!shape) return [0, 0, 0];
      let xy: [number, number] | undefined;
      try {
        xy = parsePoints(shape)[0];
      } catch {
        xy = undefined;
      }
      if (!xy) return [0, 0, 0];
      return [xy[0], xy[1], flag(shape, 'outside') ? 0 : flag(shape, 'occluded') ? 1 : 2];
    });
    keyframes.push({ type: 'keypoints', geometry: { points }, frame, outside: skeleton ? flag(skeleton, 'outside') : false, occluded: skeleton ? flag(skeleton, 'occluded') : false });
  }
  if (keyframes.length === 0 || !label) {
    ledger.skip('tracks', '', { file, item: what, reason: 'it has no keyframe Versa can read' });
    return null;
  }
  const attributes = trackAttributes(own.filter(isKeyframe), label, context, what);
  return { video, id: Number(el.attrs.id), className: label, ...(attributes ? { attributes } : {}), keyframes };
}
