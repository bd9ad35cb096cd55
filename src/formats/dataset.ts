import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { AttributeSpec, AttributeValue, Skeleton } from '../imaging/class-specs.js';
import type { EllipseGeometry, KeypointsGeometry, PolygonGeometry, RotatedBox } from '../imaging/geometry.js';
import type { Rle } from '../imaging/rle.js';
import type { ImportLedger } from './import-ledger.js';
import { type SplitName } from '../lib/vocabulary.js';

/**
 * The neutral dataset model every reader produces and every writer consumes. Geometry is in pixels of the image,
 * origin top-left, in the same shapes the annotations API stores (`bbox` (maybe rotated), `polygon` (maybe in parts,
 * with holes), `mask`, `classification`, `keypoints`, `polyline`, `points`, `ellipse`).
 */
export type Split = SplitName;

export type ProjectType = 'object_detection' | 'instance_segmentation' | 'classification' | 'semantic_segmentation' | 'keypoint_detection' | 'oriented_detection';

export type FormatName =
  | 'coco'
  | 'yolo'
  | 'voc'
  | 'folders'
  | 'masks'
  | 'voc_masks'
  | 'cvat'
  | 'datumaro'
  | 'labelme'
  | 'labelstudio'
  | 'createml'
  | 'multilabel_csv'
  | 'kitti'
  | 'openimages'
  | 'vott'
  | 'widerface'
  | 'mpii'
  | 'images'
  | 'dota'
  | 'cvat_video'
  | 'mot'
  | 'image_sequence'
  | 'jsonl';

export type Point = [x: number, y: number];

/** What any annotation may carry besides its shape: attribute values, and the group of a multi-shape object. */
export interface AnnotationExtras {
  className: string;
  attributes?: Record<string, AttributeValue>;
  /** Shapes with the same group id in one image form one object (CVAT groups). */
  groupId?: number;
}

/** The shapes, as the annotations API stores them (geometry.ts validates each). */
export type Shape =
  | { type: 'bbox'; geometry: RotatedBox }
  | { type: 'polygon'; geometry: PolygonGeometry }
  | { type: 'mask'; geometry: { rle: Rle } }
  | { type: 'classification'; geometry: Record<string, never> }
  | { type: 'keypoints'; geometry: KeypointsGeometry }
  | { type: 'polyline'; geometry: { points: Point[] } }
  | { type: 'points'; geometry: { points: Point[] } }
  | { type: 'ellipse'; geometry: EllipseGeometry };

export type Annotation = AnnotationExtras & Shape;

/** What a dataset declares about a class besides its name (CVAT labels, COCO categories' keypoints). */
export interface ClassSpec {
  skeleton?: Skeleton;
  attributes?: AttributeSpec[];
}

/** Where an image's bytes come from: a file on disk, or anything that opens a stream (a zip entry, a blob). */
export type ImageSource = { path: string } | { open: () => Readable | Promise<Readable> };

export interface DatasetItem {
  split: Split | null;
  /** The image's file name (no folders), unique within its split. */
  fileName: string;
  source: ImageSource;
  width?: number;
  height?: number;
  annotations: Annotation[];
  /** A frame of a video the dataset holds (`DatasetSource.videos`): the video's name and the 0-based frame number. */
  video?: { name: string; frame: number };
  /** The frame number a per-frame dataset gives the image (Datumaro's `attr.frame`), for tracks its annotations name by `track_id`. */
  frame?: number;
}

/** A video of a dataset (CVAT for video, a MOT sequence, an image sequence): its frames are the items naming it. */
export interface DatasetVideo {
  name: string;
  fps?: number;
  /** Frames the video has (its frames in the dataset may be fewer: every Nth, or a range). */
  frameCount?: number;
  width?: number;
  height?: number;
}

/** One keyframe of a track: a shape on one frame, with CVAT's `outside` (hidden from here) and `occluded` flags. */
export type TrackKeyframe = Shape & { frame: number; outside: boolean; occluded: boolean };

/** An object with one identity across a video's frames, made of keyframes (in frame order, one per frame). */
export interface DatasetTrack {
  video: string;
  /** The track's id in its file (CVAT `<track id>`, MOT's object id), for messages and writers that number tracks. */
  id?: number;
  className: string;
  attributes?: Record<string, AttributeValue>;
  keyframes: TrackKeyframe[];
}

/** A dataset found by a reader; `items()` may be iterated more than once and never loads the whole set at once. */
export interface DatasetSource {
  format: FormatName;
  projectType: ProjectType;
  /** Class names in order (the order writers use for class indices). */
  classes: string[];
  /** Skeletons and attribute specs the dataset declares, by class name. */
  classSpecs?: Map<string, ClassSpec>;
  /**
   * What the reader read but cannot keep (a shape type it has no equivalent for, an image its labels name that is not
   * in the archive...), each with its file and reason. An import adds what it read and kept; read = kept + skipped.
   */
  ledger?: ImportLedger;
  items(): AsyncIterable<DatasetItem>;
  /** Videos whose frames the items are (items name them by `video.name`), and the tracks over those frames. */
  videos?: DatasetVideo[];
  tracks?: DatasetTrack[];
  /**
   * Readers whose labels are not stored beside each image (COCO: one list for the whole dataset) also offer them
   * apart, so that a consumer never holds every label at once: `items` without annotations, each with a key, and
   * `annotations` streamed one at a time under those keys.
   */
  labelsApart?(): {
    items(): AsyncIterable<DatasetItem & { key: string }>;
    annotations(): AsyncIterable<{ itemKey: string; annotation: Annotation }>;
  };
}

/** What writers consume. */
export interface DatasetToWrite {
  classes: string[];
  classSpecs?: Map<string, ClassSpec>;
  projectType?: ProjectType;
  items: AsyncIterable<DatasetItem> | Iterable<DatasetItem>;
  /**
   * Videos and their tracks, for writers of video formats (CVAT for video, MOT), which write tracks as tracks; other
   * writers get each frame's track shapes among its annotations, with the `track_id` (and `keyframe`) attributes.
   */
  videos?: DatasetVideo[];
  tracks?: DatasetTrack[];
}

export interface WriteStats {
  imageCount: number;
  annotationCount: number;
  /** Shapes the format has no equivalent for, written as another (`"ellipse→polygon": 3`), by what became what. */
  converted?: Record<string, number>;
  /** Shapes the format cannot hold at all and that were left out, by type. */
  skipped?: Record<string, number>;
  /**
   * Shapes written as they are, by type. Not in the export answer: with `converted` and `skipped` it accounts for
   * every shape a writer is given, each in exactly one of the three (a writer tallies every shape once).
   */
  kept?: Record<string, number>;
  /**
   * Attribute values (by name), groups and track identities, each kept, converted (`"track→track_id attribute"`) or
   * skipped (`"occluded (VOC has no attributes)"`), as the writer wrote them with its shapes (writers/export-tally.ts).
   */
  extras?: Record<'attributes' | 'groups' | 'tracks', Tallies>;
}

/** Counts by what, for each outcome. */
export type Tallies = Partial<Record<ShapeOutcome, Record<string, number>>>;

/** What a writer did with one shape: wrote it as it is, converted it, or left it out. */
export type ShapeOutcome = 'kept' | 'converted' | 'skipped';

export async function openImage(source: ImageSource): Promise<Readable> {
  return 'path' in source ? createReadStream(source.path) : source.open();
}

export async function readImage(source: ImageSource): Promise<Buffer> {
  // A file is read in one piece of its exact size: no chunks to join (imports read every image this way).
  if ('path' in source) return readFile(source.path);
  const chunks: Buffer[] = [];
  for await (const chunk of await openImage(source)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Folder names tools use for splits → our split names. */
export function splitFromName(name: string): Split | null {
  const lower = name.toLowerCase();
  if (lower === 'train' || lower === 'training') return 'train';
  if (lower === 'valid' || lower === 'val' || lower === 'validation') return 'valid';
  if (lower === 'test' || lower === 'testing') return 'test';
  return null;
}

export const IMAGE_EXTENSIONS = new Set(['.jpg', '.jpeg', '.png', '.webp', '.bmp', '.tif', '.tiff', '.gif', '.avif']);

export function isImageName(name: string): boolean {
  const dot = name.lastIndexOf('.');
  return dot > 0 && IMAGE_EXTENSIONS.has(name.slice(dot).toLowerCase());
}

/** The file name without its extension. */
export function stemOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(0, dot) : name;
}
