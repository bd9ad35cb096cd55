import { Type, type Static } from 'typebox';
import type { Selectable } from 'kysely';
import type { ExportsTable } from '../../db/schema.js';
import { Id, Nullable, StringEnum, Timestamp } from '../../http/schemas.js';

/** `coco_zip` (beyond the spec) is COCO with the images: per-split `_annotations.coco.json` beside them, Roboflow-style. */
export const EXPORT_FORMATS = [
  'coco', 'coco_zip', 'yolo', 'yolo_ultralytics', 'jsonl', 'csv', 'voc', 'masks', 'folders', 'cvat', 'datumaro', 'labelme', 'createml',
  'dota',
  'labelstudio', 'multilabel_csv', 'cvat_video', 'mot',
] as const;
export type ExportFormatName = (typeof EXPORT_FORMATS)[number];

export const ExportRequest = Type.Object(
  {
    format: StringEnum(EXPORT_FORMATS, {
      description: '`coco` (one COCO JSON, each image with its `split`), `coco_zip` (COCO JSON per split with the images), '
        + '`yolo` (zip: data.yaml, images/ and labels/ per split), `jsonl`, `csv`, `voc` (zip of Pascal VOC XML and images), '
        + '`masks` (zip of PNG class-index masks), `folders` (zip, a folder per class, for classification), '
        + '`yolo_ultralytics` (zip: images/{train,val,test}, labels/…, a data.yaml `yolo train data=data.yaml` reads as is), '
        + '`cvat` (CVAT for images 1.1 XML + images), `datumaro` (Datumaro JSON + images), `labelme` (LabelMe JSON per image), '
        + '`labelstudio` (Label Studio JSON tasks + images), `multilabel_csv` (one-hot `_classes.csv` per split + images), '
        + '`createml` (CreateML JSON per split + images)'
        + ', `dota` (zip: {split}/images and {split}/labelTxt, DOTA oriented boxes "x1 y1 … x4 y4 class difficult")'
        + ', `cvat_video` (CVAT for video 1.1: annotations.xml with tracks and keyframes + images/frame_NNNNNN.*, a folder per video when several)'
        + ', `mot` (MOT 1.1: gt/gt.txt, gt/labels.txt, seqinfo.ini, img1/ per video). Every other format writes a frame\'s track shapes '
        + 'as annotations: `coco`, `coco_zip`, `cvat`, `datumaro`, `labelme` and `labelstudio` with the `track_id` (and `keyframe`) attributes, '
        + '`yolo` and `yolo_ultralytics` with the ids in a `tracks/` file beside the labels; the others write no attributes, so the track is not kept',
    }),
    version_id: Type.Optional(Nullable(Id)),
    include_unannotated: Type.Boolean({ default: true, description: 'Whether images without annotations are exported (default true)' }),
    include_predictions: Type.Optional(
      Type.Boolean({
        default: false,
        description: 'Also export model suggestions nobody has accepted yet (`status: "suggested"`); default false. '
          + 'A version export holds what the version froze.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ExportRequest = Static<typeof ExportRequest>;

const Counts = (description: string) => Type.Optional(Type.Record(Type.String(), Type.Integer({ minimum: 0 }), { description }));
const Outcomes = (unit: string, examples: [string, string | null, string]) => Type.Object(
  {
    kept: Counts(`${unit} written as they are, by what (e.g. \`${examples[0]}\`)`),
    converted: Counts(`${unit} written as something else, by what became what${examples[1] ? ` (e.g. \`${examples[1]}\`)` : ' (no format converts them yet)'}`),
    skipped: Counts(`${unit} left out, by what and why (e.g. \`${examples[2]}\`)`),
  },
  { description: `What the format did with every one of the ${unit.toLowerCase()} it was given: each counted once` },
);

/** Export accounting: what the format kept, converted and left out of everything the export was given, per kind. */
export const ExportAccountingOut = Type.Object(
  {
    shapes: Outcomes('Shapes', ['bbox', 'ellipse→polygon', 'polyline']),
    attributes: Outcomes('Attribute values', ['occluded', null, 'color (VOC objects hold only difficult, truncated and occluded flags)']),
    groups: Outcomes('Groups (shapes sharing a group_id in one image)', ['group', 'group→one COCO annotation (keypoints with their outline)', 'group (YOLO has no groups)']),
    tracks: Outcomes("Tracks (a video frame's shapes naming their track by track_id)", ['track', "track→track_id attribute on each frame's shape", 'track (CSV has no track identity)']),
  },
  { description: 'In the answer to the export only: everything the export was given, per kind, kept + converted + skipped' },
);
export type ExportAccountingOut = Static<typeof ExportAccountingOut>;

export const ExportOut = Type.Object({
  filename: Type.String(),
  url: Type.String({ description: 'The download route, GET /api/exports/{filename}' }),
  format: StringEnum(EXPORT_FORMATS),
  size_bytes: Type.Integer(),
  image_count: Type.Integer(),
  annotation_count: Type.Integer(),
  version_id: Nullable(Type.Integer()),
  created_at: Timestamp,
  shapes_kept: Type.Optional(Type.Object({}, {
    additionalProperties: Type.Integer(),
    description: 'In the answer to the export only: shapes written as they are, by type (e.g. `"bbox": 12`); with `shapes_converted` and `shapes_skipped` every shape given, each once',
  })),
  shapes_converted: Type.Optional(Type.Object({}, {
    additionalProperties: Type.Integer(),
    description: 'In the answer to the export only: shapes the format has no equivalent for, written as another, by what became what (e.g. `"ellipse→polygon": 3`)',
  })),
  shapes_skipped: Type.Optional(Type.Object({}, {
    additionalProperties: Type.Integer(),
    description: 'In the answer to the export only: shapes the format cannot hold, left out, by type (e.g. `"polyline": 2`)',
  })),
  accounting: Type.Optional(ExportAccountingOut),
});
export type ExportOut = Static<typeof ExportOut>;

export const ExportFileParams = Type.Object({ filename: Type.String({ minLength: 1, maxLength: 255 }) });

export type ExportRow = Selectable<ExportsTable>;

export function toExportOut(row: ExportRow): ExportOut {
  return {
    filename: row.filename,
    url: `/api/exports/${encodeURIComponent(row.filename)}`,
    format: row.format as ExportFormatName,
    size_bytes: Number(row.size_bytes),
    image_count: row.image_count,
    annotation_count: row.annotation_count,
    version_id: row.version_id,
    created_at: row.created_at,
  };
}
