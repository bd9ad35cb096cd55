import type { Writable } from 'node:stream';
import type { AttributeValue, Skeleton } from '../../imaging/class-specs.js';
import { encodeRle } from '../../imaging/rle.js';
import type { DatasetToWrite, DatasetTrack, DatasetVideo, Point, TrackKeyframe, WriteStats } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { fillPolygon } from '../geometry.js';
import { f2, labelXml, pointsText, valueText } from './cvat-writer.js';
import { maskCrop, rowRuns } from './interop-shared.js';
import { safeEntryName, sizeOf } from './item-size.js';
import { escapeXml } from './voc-writer.js';
import { writeZip } from './zip-output.js';
import { ExportTally, type Wrote } from './export-tally.js';

/** A frame's own shape (in no track) is a track of one keyframe, with its attribute values. */
const LOOSE: Wrote = { attributes: 'all' };

/** `frame_000012.png`: CVAT's name for a frame it writes, the extension of the frame's own file. */
export function frameFileName(frame: number, fileName: string): string {
  const dot = fileName.lastIndexOf('.');
  return `frame_${String(frame).padStart(6, '0')}${dot > 0 ? fileName.slice(dot).toLowerCase() : '.jpg'}`;
}

/** Folder names for videos (one video: the archive's root; several: one folder each, named after the video). */
export function videoFolders(videos: readonly DatasetVideo[]): Map<string, string> {
  const out = new Map<string, string>();
  if (videos.length === 1) return out.set(videos[0].name, '');
  const used = new Set<string>();
  for (const video of videos) {
    let folder = safeEntryName(video.name.replace(/\.[a-z0-9]+$/i, ''));
    for (let n = 2; used.has(folder.toLowerCase()); n++) folder = `${safeEntryName(video.name)}-${n}`;
    used.add(folder.toLowerCase());
    out.set(video.name, `${folder}/`);
  }
  return out;
}

/**
 * CVAT for video 1.1, as CVAT's task export with images writes it: per video an `annotations.xml` (its `<meta><task>`
 * with `mode` interpolation, the frame range, `<original_size>`, the labels, and `<source>` the video's name) and the
 * frames as `images/frame_NNNNNN.<ext>`; one video at the archive's root, several in a folder each. Each track is a
 * `<track id label>` of its keyframes (`keyframe="1"`, `outside`, `occluded`, the track's attribute values on every
 * shape): `<box>` (with `rotation`), `<polygon>` (a polygon with holes as a `<mask>`), `<polyline>`, `<points>`,
 * `<ellipse>`, `<mask>`; keypoints as a `<skeleton>` track with a sub-track per point. Images that are no frame of a
 * video cannot be held (tallied as skipped); a frame's own annotations (not in a track) become a track of one keyframe
 * with an `outside` keyframe on the next frame, as CVAT itself writes shapes in this format.
 */
export async function writeCvatVideo(dataset: DatasetToWrite, output: Writable, tally = new ExportTally()): Promise<WriteStats> {
  const videos = dataset.videos ?? [];
  const folders = videoFolders(videos);
  return writeZip(output, async (zip) => {
    const classes = new Set(dataset.classes);
    const stats: WriteStats = { imageCount: 0, annotationCount: 0 };
    const sizes = new Map<string, { width: number; height: number }>();
    /** Shapes of frames not in tracks, as one-keyframe tracks. */
    const loose = new Map<string, DatasetTrack[]>();
    for await (const item of dataset.items) {
      if (!item.video || !folders.has(item.video.name)) {
        tally.count('skipped', 'image (not a video frame)');
        for (const a of item.annotations) tally.shape(a, 'skipped', `${a.type} (not on a video frame)`);
        continue;
      }
      const { name, frame } = item.video;
      if (!sizes.has(name)) sizes.set(name, await sizeOf(item));
      for (const a of item.annotations) {
        if (!classes.has(a.className)) throw new FormatError(`annotation class "${a.className}" is not in the class list`);
        // A track's shape on this frame (`track_id`): written with its track.
        if (a.attributes?.track_id !== undefined) {
          tally.shape(a, 'kept', a.type, { attributes: 'all', track: true });
          continue;
        }
        if (a.type === 'classification') {
          tally.shape(a, 'skipped', 'classification');
          continue;
        }
        if (a.type === 'polygon' && (a.geometry.holes?.length || (a.geometry.parts?.length ?? 1) > 1)) tally.shape(a, 'converted', 'polygon in parts or with holes→mask', LOOSE);
        else tally.shape(a, 'kept', a.type, LOOSE);
        const { className, attributes, groupId: _, ...shape } = a;
        const list = loose.get(name) ?? [];
        list.push({ video: name, className, ...(attributes ? { attributes } : {}), keyframes: [{ ...shape, frame, outside: false, occluded: false }, { ...shape, frame: frame + 1, outside: true, occluded: false }] as TrackKeyframe[] });
        loose.set(name, list);
      }
      await zip.addImage(`${folders.get(name)}images/${frameFileName(frame, item.fileName)}`, item.source);
      stats.imageCount++;
    }
    const now = new Date().toISOString().replace('T', ' ').replace('Z', '+00:00');
    const labels = dataset.classes.map((name) => labelXml(name, dataset.classSpecs?.get(name)?.attributes ?? [], dataset.classSpecs?.get(name)?.skeleton)).join('');
    for (const [index, video] of videos.entries()) {
      const size = sizes.get(video.name) ?? { width: video.width ?? 0, height: video.height ?? 0 };
      const frames = video.frameCount ?? 0;
      let id = 0;
      const tracks: string[] = [];
      for (const track of [...(dataset.tracks ?? []).filter((t) => t.video === video.name), ...(loose.get(video.name) ?? [])]) {
        if (!classes.has(track.className)) throw new FormatError(`track class "${track.className}" is not in the class list`);
        const xml = trackXml(track, id, size, dataset.classSpecs?.get(track.className)?.skeleton, tally);
        if (xml) {
          tracks.push(xml);
          id++;
          stats.annotationCount++;
        }
      }
      const xml =
        `<?xml version="1.0" encoding="utf-8"?>\n<annotations>\n  <version>1.1</version>\n  <meta>\n    <task>\n      <id>${index + 1}</id>\n` +
        `      <name>${escapeXml(video.name)}</name>\n      <size>${frames}</size>\n      <mode>interpolation</mode>\n      <overlap>0</overlap>\n` +
        `      <bugtracker></bugtracker>\n      <created>${now}</created>\n      <updated>${now}</updated>\n      <subset>default</subset>\n` +
        `      <start_frame>0</start_frame>\n      <stop_frame>${Math.max(0, frames - 1)}</stop_frame>\n      <frame_filter></frame_filter>\n` +
        `      <labels>\n${labels}      </labels>\n      <original_size>\n        <width>${size.width}</width>\n        <height>${size.height}</height>\n` +
        `      </original_size>\n    </task>\n    <dumped>${now}</dumped>\n    <source>${escapeXml(video.name)}</source>\n  </meta>\n${tracks.join('')}</annotations>\n`;
      await zip.addBuffer(`${folders.get(video.name)}annotations.xml`, xml);
    }
    return stats;
  });
}

function attributeChildren(attributes: Record<string, AttributeValue> | undefined, indent: string): string {
  return Object.entries(attributes ?? {})
    .filter(([name, value]) => !(name === 'occluded' && typeof value === 'boolean'))
    .map(([name, value]) => `${indent}<attribute name="${escapeXml(name)}">${escapeXml(valueText(value))}</attribute>\n`)
    .join('');
}

const shapeHead = (k: TrackKeyframe) => `frame="${k.frame}" keyframe="1" outside="${k.outside ? 1 : 0}" occluded="${k.occluded ? 1 : 0}"`;

/** A keyframe's element, or null for a shape CVAT's tracks cannot hold. */
function keyframeXml(k: TrackKeyframe, size: { width: number; height: number }, children: string): string | null {
  const el = (tag: string, attrs: string) => `    <${tag} ${shapeHead(k)} ${attrs} z_order="0">\n${children}    </${tag}>\n`;
  switch (k.type) {
    case 'bbox': {
      const g = k.geometry;
      return el('box', `xtl="${f2(g.x)}" ytl="${f2(g.y)}" xbr="${f2(g.x + g.width)}" ybr="${f2(g.y + g.height)}"${g.rotation ? ` rotation="${f2(g.rotation)}"` : ''}`);
    }
    case 'polygon': {
      if (k.geometry.holes?.length || (k.geometry.parts?.length ?? 1) > 1) {
        const data = new Uint8Array(size.width * size.height);
        for (const part of k.geometry.parts ?? [k.geometry.points]) fillPolygon(data, size.width, size.height, part as Point[], 1);
        for (const hole of k.geometry.holes ?? []) fillPolygon(data, size.width, size.height, hole as Point[], 0);
        return maskElement(encodeRle({ width: size.width, height: size.height, data }), el);
      }
      return el('polygon', `points="${pointsText(k.geometry.points)}"`);
    }
    case 'polyline':
      return el('polyline', `points="${pointsText(k.geometry.points)}"`);
    case 'points':
      return el('points', `points="${pointsText(k.geometry.points)}"`);
    case 'ellipse': {
      const g = k.geometry;
      return el('ellipse', `cx="${f2(g.cx)}" cy="${f2(g.cy)}" rx="${f2(g.rx)}" ry="${f2(g.ry)}"${g.rotation ? ` rotation="${f2(g.rotation)}"` : ''}`);
    }
    case 'mask':
      return maskElement(k.geometry.rle, el);
    default:
      return null;
  }
}

function maskElement(rle: Parameters<typeof maskCrop>[0], el: (tag: string, attrs: string) => string): string | null {
  const crop = maskCrop(rle);
  if (!crop) return null;
  return el('mask', `rle="${rowRuns(crop.data).join(', ')}" left="${crop.left}" top="${crop.top}" width="${crop.width}" height="${crop.height}"`);
}

function trackXml(track: DatasetTrack, id: number, size: { width: number; height: number }, skeleton: Skeleton | undefined, tally: ExportTally): string | null {
  const label = escapeXml(track.className);
  if (track.keyframes[0]?.type === 'keypoints') return skeletonTrackXml(track, id, label, skeleton);
  const children = attributeChildren(track.attributes, '      ');
  const shapes: string[] = [];
  for (const k of track.keyframes) {
    const xml = keyframeXml(k, size, children);
    if (xml) shapes.push(xml);
    else tally.count('skipped', `${k.type} keyframe`);
  }
  return shapes.length > 0 ? `  <track id="${id}" label="${label}" source="manual">\n${shapes.join('')}  </track>\n` : null;
}

/** Keypoints: a `<skeleton>` per keyframe, and a sub-track per point (not labelled: outside; not visible: occluded). */
function skeletonTrackXml(track: DatasetTrack, id: number, label: string, skeleton: Skeleton | undefined): string {
  const keyframes = track.keyframes.filter((k) => k.type === 'keypoints') as (TrackKeyframe & { type: 'keypoints' })[];
  const n = Math.max(0, ...keyframes.map((k) => k.geometry.points.length));
  const names = Array.from({ length: n }, (_, i) => skeleton?.points[i] ?? String(i + 1));
  const children = attributeChildren(track.attributes, '      ');
  const own = keyframes.map((k) => `    <skeleton ${shapeHead(k)} z_order="0">\n${children}    </skeleton>\n`).join('');
  const subs = names.map((name, i) => {
    const points = keyframes.map((k) => {
      const [x, y, v] = k.geometry.points[i] ?? [0, 0, 0];
      return `      <points frame="${k.frame}" keyframe="1" outside="${k.outside || v === 0 ? 1 : 0}" occluded="${v === 1 ? 1 : 0}" points="${f2(x)},${f2(y)}" z_order="0">\n      </points>\n`;
    });
    return `    <track id="${i}" label="${escapeXml(name)}" source="manual">\n${points.join('')}    </track>\n`;
  });
  return `  <track id="${id}" label="${label}" source="manual">\n${own}${subs.join('')}  </track>\n`;
}
