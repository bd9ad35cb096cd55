import { Type, type Static } from 'typebox';
import { Id, Timestamp } from '../../http/schemas.js';
import { Attributes, AnnotationType, Geometry } from '../annotations/annotations.schemas.js';

const Frame = Type.Integer({ minimum: 0, maximum: 2_147_483_647, description: "0-based frame of the track's video" });

export const KeyframeIn = Type.Object(
  {
    frame: Frame,
    annotation_type: AnnotationType,
    geometry: Geometry,
    outside: Type.Optional(Type.Boolean({ default: false, description: 'The object leaves the view here: the track is hidden from this frame until its next keyframe' })),
    occluded: Type.Optional(Type.Boolean({ default: false })),
  },
  { additionalProperties: false },
);
export type KeyframeIn = Static<typeof KeyframeIn>;

export const KeyframeOut = Type.Object({
  frame: Type.Integer(),
  annotation_type: AnnotationType,
  geometry: Geometry,
  outside: Type.Boolean(),
  occluded: Type.Boolean(),
});
export type KeyframeOut = Static<typeof KeyframeOut>;

const KEYFRAMES = { maxItems: 100_000, description: "One per frame at most; geometry as for an annotation, on the video's frame size" };

export const TrackCreate = Type.Object(
  {
    class_id: Id,
    attributes: Type.Optional(Attributes),
    keyframes: Type.Array(KeyframeIn, { ...KEYFRAMES, minItems: 1 }),
  },
  { additionalProperties: false },
);
export type TrackCreate = Static<typeof TrackCreate>;

export const TrackUpdate = Type.Object(
  {
    class_id: Type.Optional(Id),
    attributes: Type.Optional(Attributes),
    keyframes: Type.Optional(Type.Array(KeyframeIn, { ...KEYFRAMES, description: 'Keyframes to add, or to replace where the track has one on that frame' })),
    delete_frames: Type.Optional(Type.Array(Frame, { maxItems: 100_000, description: 'Frames whose keyframes are removed (frames between keyframes are interpolated again)' })),
  },
  { additionalProperties: false },
);
export type TrackUpdate = Static<typeof TrackUpdate>;

export const TrackOut = Type.Object({
  id: Type.Integer(),
  project_id: Type.Integer(),
  video_id: Type.Integer(),
  class_id: Type.Integer(),
  attributes: Attributes,
  keyframes: Type.Array(KeyframeOut, { description: 'By frame' }),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type TrackOut = Static<typeof TrackOut>;
