import type { Annotation, DatasetItem } from '../dataset.js';
import { rleArea } from '../../imaging/rle.js';
import { converted, KEPT, nothingKept, skipped, uniformPolicy, type ExtraOutcome, type ExtrasPolicy } from './extras-accounting.js';
import type { ExportFormat } from './export-format.js';
import { boxWithItsPoints } from './labelstudio-writer.js';

/**
 * What each export format does with attribute values, groups and track identity (see extras-accounting.ts). These
 * say what the writers do; test/unit/export-accounting.test.ts reads the files back to hold them to it.
 */
const TRACK_AS_ATTRIBUTE = converted("track_id attribute on each frame's shape");

/** The attributes of a shape the writer leaves out go with it. */
const shapeLeftOut = (types: readonly Annotation['type'][], reason: string) => (a: Annotation) => (types.includes(a.type) ? skipped(reason) : null);

const coco: ExtrasPolicy = {
  attribute: (a) => shapeLeftOut(['classification', 'polyline', 'points'], 'its shape has no COCO form')(a) ?? KEPT,
  group: (members) => {
    const keypoints = members.filter((m) => m.type === 'keypoints');
    const outlines = members.filter((m) => m.type === 'polygon' || m.type === 'mask');
    if (members.length === 2 && keypoints.length === 1 && outlines.length === 1 && keypoints[0].className === outlines[0].className) {
      return converted('one COCO annotation (keypoints with their outline)');
    }
    return skipped('COCO has no groups');
  },
  track: TRACK_AS_ATTRIBUTE,
};

const yolo = uniformPolicy(skipped('YOLO label lines hold no attributes'), skipped('YOLO has no groups'), converted('track ids in tracks/ beside the labels'));

const VOC_FLAGS = new Set(['difficult', 'truncated', 'occluded']);
const voc: ExtrasPolicy = {
  attribute: (a, name) => {
    if (a.type === 'classification') return skipped('its shape has no VOC form');
    return VOC_FLAGS.has(name) && typeof a.attributes?.[name] === 'boolean' ? KEPT : skipped('VOC objects hold only difficult, truncated and occluded flags');
  },
  group: () => skipped('VOC has no groups'),
  track: skipped('VOC has no track identity'),
};

const dota: ExtrasPolicy = {
  attribute: (_a, name) => (name === 'difficult' ? KEPT : skipped('DOTA lines hold only difficult')),
  group: () => skipped('DOTA has no groups'),
  track: skipped('DOTA has no track identity'),
};

/** Shapes CVAT, LabelMe and Label Studio leave out as drawing nothing: a mask without a pixel, keypoints none labelled. */
function drawsNothing(a: Annotation): boolean {
  return (a.type === 'mask' && rleArea(a.geometry.rle) === 0) || (a.type === 'keypoints' && a.geometry.points.every((p) => p[2] === 0));
}
const NOT_DRAWN = skipped('its shape draws nothing and is not written');

/** LabelMe and Label Studio put image-level labels where no attribute goes (image flags, image-level choices). */
function perShapeAttributes(classificationReason: string, group: ExtraOutcome, notWritten: (a: Annotation) => boolean): ExtrasPolicy {
  return {
    attribute: (a) => (a.type === 'classification' ? skipped(classificationReason) : notWritten(a) ? NOT_DRAWN : KEPT),
    group: () => group,
    track: TRACK_AS_ATTRIBUTE,
  };
}

/** Video writers hold the frames of a video only, and no image-level labels. */
function videoAttribute(kept: (a: Annotation, name: string) => ExtraOutcome) {
  return (a: Annotation, name: string, item: DatasetItem): ExtraOutcome => {
    if (!item.video) return skipped('its image is not a video frame');
    if (a.type === 'classification') return skipped('its shape is not written');
    return kept(a, name);
  };
}

const MOT_COLUMNS = new Set(['ignored', 'occluded']);

export const EXTRAS_POLICIES: Record<ExportFormat, ExtrasPolicy> = {
  coco,
  coco_zip: coco,
  yolo,
  yolo_ultralytics: yolo,
  jsonl: uniformPolicy(KEPT, KEPT, TRACK_AS_ATTRIBUTE),
  csv: nothingKept('CSV'),
  voc,
  masks: nothingKept('a class-index mask'),
  folders: nothingKept('a class folder'),
  cvat: {
    attribute: (a) => (a.type === 'mask' && drawsNothing(a) ? NOT_DRAWN : KEPT),
    group: () => KEPT,
    track: converted("track_id attribute on each frame's shape, declared in <meta>"),
  },
  datumaro: uniformPolicy(KEPT, KEPT, TRACK_AS_ATTRIBUTE),
  labelme: perShapeAttributes('an image flag holds no attributes', KEPT, drawsNothing),
  createml: nothingKept('CreateML'),
  dota,
  labelstudio: {
    // An empty mask is still a brush region; keypoints none labelled are not written.
    ...perShapeAttributes('an image-level choice holds no attributes', KEPT, (a) => a.type === 'keypoints' && drawsNothing(a)),
    group: (members) => (boxWithItsPoints(members) ? converted('points hanging on their box (parentID)') : skipped('Label Studio relates only points to the box they hang on')),
  },
  multilabel_csv: nothingKept('a multi-label CSV'),
  cvat_video: {
    attribute: videoAttribute(() => KEPT),
    group: () => skipped('CVAT for video tracks have no groups'),
    track: KEPT,
  },
  mot: {
    attribute: videoAttribute((a, name) => (a.type === 'bbox' && MOT_COLUMNS.has(name) ? KEPT : skipped('MOT rows hold only the ignored and occluded flags'))),
    group: () => skipped('MOT has no groups'),
    track: KEPT,
  },
};
