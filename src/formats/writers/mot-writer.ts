import type { Writable } from 'node:stream';
import type { DatasetToWrite, WriteStats } from '../dataset.js';
import { videoFolders } from './cvat-video-writer.js';
import { sizeOf } from './item-size.js';
import { writeZip } from './zip-output.js';
import { ExportTally } from './export-tally.js';

/** The flags a MOT row holds (`not_ignored`, visibility). */
const MOT_COLUMNS = ['ignored', 'occluded'];

const num = (v: number) => String(Math.round(v * 100) / 100);

/**
 * MOT 1.1 as CVAT writes it: per video (the archive's root for one, a folder each for several) `gt/gt.txt` with a row
 * `frame, id, x, y, w, h, not_ignored, class_id, visibility` for every frame a track's box is visible on (frames
 * from 1; the id is the track's `track_id`; `not_ignored` 0 for a track whose `ignored` attribute is true; visibility
 * 0 when occluded, else 1), `gt/labels.txt` (the classes, `class_id` counting from 1), `seqinfo.ini` and the frames as
 * `img1/000001.<ext>`. A box of a frame that is in no track is a row with id -1 (MOT's untracked box). MOT holds boxes
 * only: other shapes, rotated boxes and images that are no frame of a video are left out and tallied.
 */
export async function writeMot(dataset: DatasetToWrite, output: Writable, tally = new ExportTally()): Promise<WriteStats> {
  const videos = dataset.videos ?? [];
  const folders = videoFolders(videos);
  const classIndex = new Map(dataset.classes.map((c, i) => [c, i + 1]));
  return writeZip(output, async (zip) => {
    const stats: WriteStats = { imageCount: 0, annotationCount: 0 };
    const rows = new Map<string, string[]>();
    const sizes = new Map<string, { width: number; height: number; ext: string }>();
    const ids = new Set<string>();
    for await (const item of dataset.items) {
      if (!item.video || !folders.has(item.video.name)) {
        tally.count('skipped', 'image (not a video frame)');
        for (const a of item.annotations) tally.shape(a, 'skipped', `${a.type} (not on a video frame)`);
        continue;
      }
      const { name, frame } = item.video;
      const dot = item.fileName.lastIndexOf('.');
      const ext = dot > 0 ? item.fileName.slice(dot).toLowerCase() : '.jpg';
      if (!sizes.has(name)) sizes.set(name, { ...(await sizeOf(item)), ext });
      const list = rows.get(name) ?? [];
      for (const a of item.annotations) {
        if (a.type !== 'bbox' || a.geometry.rotation) {
          tally.shape(a, 'skipped', a.type === 'bbox' ? 'rotated bbox' : a.type);
          continue;
        }
        tally.shape(a, 'kept', 'bbox', { attributes: MOT_COLUMNS.filter((name) => typeof a.attributes?.[name] === 'boolean'), track: true });
        // A box in no track is MOT's untracked row (id -1).
        const trackId = typeof a.attributes?.track_id === 'number' ? a.attributes.track_id : -1;
        const { x, y, width, height } = a.geometry;
        const ignored = a.attributes?.ignored === true ? 0 : 1;
        const visibility = a.attributes?.occluded === true ? 0 : 1;
        list.push(`${frame + 1},${trackId},${num(x)},${num(y)},${num(width)},${num(height)},${ignored},${classIndex.get(a.className) ?? -1},${visibility}`);
        if (trackId === -1 || !ids.has(`${name}/${trackId}`)) {
          ids.add(`${name}/${trackId}`);
          stats.annotationCount++;
        }
      }
      rows.set(name, list);
      await zip.addImage(`${folders.get(name)}img1/${String(frame + 1).padStart(6, '0')}${ext}`, item.source);
      stats.imageCount++;
    }
    for (const video of videos) {
      const folder = folders.get(video.name)!;
      const size = sizes.get(video.name) ?? { width: video.width ?? 0, height: video.height ?? 0, ext: '.jpg' };
      const sorted = (rows.get(video.name) ?? []).sort((a, b) => {
        const [fa, ia] = a.split(',', 2).map(Number);
        const [fb, ib] = b.split(',', 2).map(Number);
        return fa - fb || ia - ib;
      });
      await zip.addBuffer(`${folder}gt/gt.txt`, sorted.map((r) => `${r}\n`).join(''));
      await zip.addBuffer(`${folder}gt/labels.txt`, dataset.classes.map((c) => `${c}\n`).join(''));
      const ini = `[Sequence]\nname=${video.name.replace(/[\r\n]/g, ' ')}\nimDir=img1\nframeRate=${video.fps ?? 25}\nseqLength=${video.frameCount ?? 0}\n`
        + `imWidth=${size.width}\nimHeight=${size.height}\nimExt=${size.ext}\n`;
      await zip.addBuffer(`${folder}seqinfo.ini`, ini);
    }
    return stats;
  });
}
