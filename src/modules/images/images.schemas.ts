import { Type, type Static } from 'typebox';
import type { Selectable } from 'kysely';
import type { ImagesTable } from '../../db/schema.js';
import { PageQuery } from '../../http/pagination.js';
import { Id, Nullable, StringEnum, Timestamp, ValidationErrorOut } from '../../http/schemas.js';
import { REVIEW_STATES, SPLIT_NAMES, type SplitName } from '../../lib/vocabulary.js';

export const Split = StringEnum(SPLIT_NAMES);
export type Split = SplitName;

export const ImageOut = Type.Object({
  id: Type.Integer(),
  project_id: Type.Integer(),
  filename: Type.String({ description: 'Stored name, unique in the project; used by the file route' }),
  original_name: Type.String({ description: 'The name the file was uploaded with' }),
  width: Type.Integer({ description: 'As displayed (EXIF orientation applied)' }),
  height: Type.Integer({ description: 'As displayed (EXIF orientation applied)' }),
  split: Nullable(Split),
  annotation_count: Type.Integer(),
  sha256: Type.String({ description: 'SHA-256 of the original bytes, hex' }),
  size_bytes: Type.Integer(),
  mime_type: Type.String(),
  file_url: Type.String({ description: 'The original bytes' }),
  thumbnail_url: Type.String({ description: 'WebP thumbnail, longest side 256' }),
  review_state: StringEnum(REVIEW_STATES, {
    description: 'Where the image stands in the review loop: never submitted, waiting, or the last decision',
  }),
  created_at: Timestamp,
  video_id: Nullable(Type.Integer({ description: 'The video this image is a frame of; null for an uploaded image' })),
  frame: Nullable(Type.Integer({ description: "0-based frame number in its video" })),
  timestamp_s: Nullable(Type.Number({ description: 'Seconds from the start of its video' })),
});
export type ImageOut = Static<typeof ImageOut>;

/** An image as the project's listing gives it: what the grid draws on its thumbnail needs the open suggestions too. */
export const ImageListItem = Type.Object({
  ...ImageOut.properties,
  suggestion_count: Type.Integer({
    description: 'Open suggestions on the image (model output awaiting a decision; not in `annotation_count`)',
  }),
});
export type ImageListItem = Static<typeof ImageListItem>;

export { ImageParams } from '../../http/schemas.js';
export const ImageFileParams = Type.Object({ id: Id, filename: Type.String({ minLength: 1, maxLength: 255 }) });

export const ImageListQuery = Type.Object({
  ...PageQuery.properties,
  split: Type.Optional(Split),
  review_state: Type.Optional(StringEnum(REVIEW_STATES)),
  class_id: Type.Optional(Type.Integer({
    minimum: 1,
    maximum: 2_147_483_647,
    description: 'Only images with at least one annotation of this class (a class of another project is 404)',
  })),
  annotated: Type.Optional(Type.Boolean({ description: 'true: only images with accepted annotations; false: only images without (open suggestions do not count)' })),
  attribute: Type.Optional(Type.String({
    pattern: '^[^":]{1,100}:[\\s\\S]{0,2000}$',
    description: 'Only images with an annotation whose attribute has this value, as `name:value` (e.g. `occluded:true`, '
      + '`colour:red`, `speed:40`): `true`/`false` match a checkbox, a number a number attribute, any text a select or text one',
  })),
  video_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: "Only the frames of this video, in frame order (its upload order)" })),
  ids: Type.Optional(Type.String({
    pattern: '^[0-9]{1,10}(,[0-9]{1,10}){0,999}$',
    description: 'Only these images: up to 1,000 comma-separated ids (the quality report\'s `image_ids`, a page at a time)',
  })),
});
export type ImageListQuery = Static<typeof ImageListQuery>;

export const ImageUpdate = Type.Object({ split: Nullable(Split) }, { additionalProperties: false });
export type ImageUpdate = Static<typeof ImageUpdate>;

/** Documents the multipart body; the route reads the parts as a stream, so this is never validated. */
export const ImageUploadBody = Type.Object({
  files: Type.Array(Type.Unsafe<unknown>({ type: 'string', format: 'binary' }), {
    description: 'One or more image files (JPEG, PNG, WebP, TIFF, GIF, AVIF), each in a part named `files`',
  }),
});

export const UPLOAD_OUTCOMES = ['created', 'duplicate', 'rejected'] as const;
export type UploadOutcome = (typeof UPLOAD_OUTCOMES)[number];

export const UploadResult = Type.Object({
  original_name: Type.String(),
  outcome: StringEnum(UPLOAD_OUTCOMES),
  status: Type.Integer({ description: '201 created, 200 duplicate, 413/415/422 rejected' }),
  detail: Type.Optional(Type.String({ description: 'Why the file was rejected, or what it duplicates' })),
  image_id: Type.Optional(Type.Integer({ description: 'The created image, or the existing one it duplicates' })),
});
export type UploadResult = Static<typeof UploadResult>;

export const UploadOut = Type.Object({
  images: Type.Array(ImageOut, { description: 'Created images and the existing images of duplicates, in request order' }),
  results: Type.Array(UploadResult, { description: 'One entry per uploaded file, in request order' }),
  created: Type.Integer(),
  duplicates: Type.Integer(),
  rejected: Type.Integer(),
});
export type UploadOut = Static<typeof UploadOut>;

/** When every file is rejected: the first rejection's status and detail, and every file's result. */
export const UploadRejectedOut = Type.Object({
  detail: Type.String(),
  results: Type.Optional(Type.Array(UploadResult)),
});
/** 422 is either a rejected upload (string detail) or a malformed request (FastAPI-style list). */
export const UploadInvalidOut = Type.Object({
  detail: Type.Union([Type.String(), ValidationErrorOut.properties.detail]),
  results: Type.Optional(Type.Array(UploadResult)),
});

export const ImagesBulkDeleteBody = Type.Object(
  {
    ids: Type.Array(Id, { minItems: 1, maxItems: 1000 }),
    project_id: Type.Optional(Id),
  },
  { additionalProperties: false },
);
export type ImagesBulkDeleteBody = Static<typeof ImagesBulkDeleteBody>;

export const ImagesBulkDeleteOut = Type.Object({
  deleted: Type.Integer(),
  deleted_annotations: Type.Integer(),
  not_found: Type.Array(Type.Integer(), {
    description: 'Requested ids that do not exist, are outside `project_id`, or that you may not delete',
  }),
});
export type ImagesBulkDeleteOut = Static<typeof ImagesBulkDeleteOut>;

export type ImageRow = Selectable<ImagesTable>;
/** The columns an ImageOut is made from (listings do not read the blob keys). */
export type ImageOutRow = Pick<
  ImageRow,
  'id' | 'project_id' | 'filename' | 'original_name' | 'width' | 'height' | 'split' | 'annotation_count' | 'sha256' | 'size_bytes' | 'mime_type' | 'created_at' | 'review_state' | 'video_id' | 'frame' | 'timestamp_s'
>;
/** A listed row: the ImageOut columns and the image's open suggestions (a count, text on PostgreSQL). */
export type ImageListRow = ImageOutRow & { suggestion_count: number | string | null };
export const IMAGE_OUT_COLUMNS = [
  'id', 'project_id', 'filename', 'original_name', 'width', 'height', 'split', 'annotation_count', 'sha256', 'size_bytes', 'mime_type', 'created_at', 'review_state', 'video_id', 'frame', 'timestamp_s',
] as const satisfies readonly (keyof ImageOutRow)[];

export const imageFileUrl = (projectId: number, filename: string) =>
  `/api/projects/${projectId}/images/file/${encodeURIComponent(filename)}`;
export const imageThumbnailUrl = (imageId: number) => `/api/images/${imageId}/thumbnail`;

/** An image as shown to a caller it hides ground truth from (issue 29): unreviewed and unlabelled, like the pool's. */
export function untouchedImageOut(row: ImageOutRow): ImageOut {
  return { ...toImageOut(row), annotation_count: 0, review_state: 'unreviewed' };
}

/** A listed image; hidden ground truth (issue 29) shows no suggestions, as it shows no annotations. */
export function toImageListItem(row: ImageListRow, hidden: boolean): ImageListItem {
  return hidden ? { ...untouchedImageOut(row), suggestion_count: 0 } : { ...toImageOut(row), suggestion_count: Number(row.suggestion_count ?? 0) };
}

export function toImageOut(row: ImageOutRow): ImageOut {
  return {
    id: row.id,
    project_id: row.project_id,
    filename: row.filename,
    original_name: row.original_name,
    width: row.width,
    height: row.height,
    split: row.split as Split | null,
    annotation_count: row.annotation_count,
    sha256: row.sha256,
    size_bytes: Number(row.size_bytes),
    mime_type: row.mime_type,
    file_url: imageFileUrl(row.project_id, row.filename),
    thumbnail_url: imageThumbnailUrl(row.id),
    review_state: row.review_state,
    created_at: row.created_at,
    video_id: row.video_id,
    frame: row.frame,
    timestamp_s: row.timestamp_s,
  };
}
