import type { Annotation, ClassSpec, DatasetItem, DatasetSource, DatasetTrack, DatasetVideo, TrackKeyframe } from './dataset.js';
import { ImportLedger } from './import-ledger.js';
import { frameNumberOf } from './readers/cvat-video-reader.js';

/** Attributes that say how a shape belongs to its track, not what the object is. */
const TRACK_KEYS = new Set(['track_id', 'keyframe']);

interface Entry {
  frame: number;
  annotation: Annotation;
}

/** The video an item is a frame of: the one it names, else one per split. */
const videoOf = (item: DatasetItem) => item.video?.name ?? item.split ?? 'video';

/**
 * A per-frame dataset whose annotations carry the `track_id` attribute (CVAT's and Versa's Datumaro and COCO exports
 * of videos, a version's frames) read as video: the items of each video they name, else of each split, become its
 * frames, numbered by the frame the dataset gives (Datumaro's `attr.frame`) or else the number their names end in,
 * and each track id becomes a track: its shapes marked `keyframe` (or not marked) are its keyframes, with `occluded`
 * from the attribute; the next frame the dataset holds after one the track is on, where it is missing, gets an
 * `outside` keyframe (it left the view). Shapes marked
 * `keyframe: false` are what interpolation gives back: read and kept as such. The track's other attribute values
 * are those of its first shape. A dataset without track ids, or whose frames cannot be numbered one to one, is
 * returned as it is (the ids stay attributes).
 */
export async function withTracksFromFrames(source: DatasetSource): Promise<DatasetSource> {
  const perSplit = new Map<string, { frames: Set<number>; tracks: Map<number, Entry[]> }>();
  let tracked = false;
  for await (const item of source.items()) {
    const video = videoOf(item);
    const frame = item.video?.frame ?? item.frame ?? frameNumberOf(item.fileName);
    const state = perSplit.get(video) ?? { frames: new Set<number>(), tracks: new Map<number, Entry[]>() };
    perSplit.set(video, state);
    if (frame === null || state.frames.has(frame)) return source;
    state.frames.add(frame);
    for (const annotation of item.annotations) {
      const id = annotation.attributes?.track_id;
      if (typeof id !== 'number' || !Number.isInteger(id)) continue;
      tracked = true;
      state.tracks.set(id, [...(state.tracks.get(id) ?? []), { frame, annotation }]);
    }
  }
  if (!tracked) return source;

  const ledger = source.ledger ?? new ImportLedger();
  const videos: DatasetVideo[] = [];
  const tracks: DatasetTrack[] = [];
  for (const [name, { frames, tracks: byId }] of perSplit) {
    videos.push({ name, frameCount: Math.max(...frames) + 1 });
    const sorted = [...frames].sort((a, b) => a - b);
    const nextFrame = new Map(sorted.map((frame, i) => [frame, sorted[i + 1]]));
    for (const [id, entries] of [...byId].sort((a, b) => a[0] - b[0])) {
      entries.sort((a, b) => a.frame - b.frame);
      const { className, attributes } = entries[0].annotation;
      const own = Object.fromEntries(Object.entries(attributes ?? {}).filter(([key]) => !TRACK_KEYS.has(key) && key !== 'occluded'));
      const keyframes: TrackKeyframe[] = [];
      entries.forEach((entry, i) => {
        const { className: _, attributes: values, groupId: __, ...shape } = entry.annotation;
        const afterGap = i === 0 || !(entries[i - 1].frame + 1 === entry.frame);
        if (values?.keyframe === false && !afterGap) ledger.keep('annotations', `${shape.type} interpolated`);
        else keyframes.push({ ...shape, frame: entry.frame, outside: false, occluded: values?.occluded === true } as TrackKeyframe);
        const next = nextFrame.get(entry.frame);
        if (next !== undefined && entries[i + 1]?.frame !== next) keyframes.push({ ...shape, frame: next, outside: true, occluded: false } as TrackKeyframe);
      });
      tracks.push({ video: name, id, className, ...(Object.keys(own).length > 0 ? { attributes: own } : {}), keyframes });
    }
  }
  const classSpecs = new Map<string, ClassSpec>();
  for (const [name, spec] of source.classSpecs ?? []) {
    const attributes = spec.attributes?.filter((a) => !TRACK_KEYS.has(a.name));
    classSpecs.set(name, { ...spec, ...(spec.attributes ? { attributes } : {}) });
  }
  return {
    format: source.format,
    projectType: source.projectType,
    classes: source.classes,
    classSpecs,
    ledger,
    videos,
    tracks,
    async *items(): AsyncGenerator<DatasetItem> {
      for await (const item of source.items()) {
        const frame = item.video?.frame ?? item.frame ?? frameNumberOf(item.fileName)!;
        yield { ...item, annotations: item.annotations.filter((a) => typeof a.attributes?.track_id !== 'number'), video: { name: videoOf(item), frame } };
      }
    },
  };
}
