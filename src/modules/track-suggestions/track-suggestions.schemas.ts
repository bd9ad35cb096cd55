import { Type, type Static } from 'typebox';
import { Id, StringEnum, Timestamp } from '../../http/schemas.js';
import { DEFAULT_TRACKER_OPTIONS } from '../tracks/tracker.logic.js';
import { KEYFRAME_MIN_IOU } from '../tracks/track-keyframes.logic.js';

const Frame = (description: string) => Type.Integer({ minimum: 0, maximum: 2_147_483_647, description });
const Score = (description: string, value: number) => Type.Number({ minimum: 0, maximum: 1, default: value, description });

export const TrackRunRequest = Type.Object(
  {
    model: Type.Union([Id, Type.String({ minLength: 1, maxLength: 200 })], {
      description: "A registered detect, segment, obb or pose model: its id (any project you can read) or its name in this project",
    }),
    first_frame: Type.Optional(Frame('First frame to track (default 0)')),
    last_frame: Type.Optional(Frame("Last frame to track (default the video's last)")),
    high_score: Type.Optional(Score('Detections from this score are matched first and may start tracks', DEFAULT_TRACKER_OPTIONS.highScore)),
    low_score: Type.Optional(Score('Detections from this score up to `high_score` only extend tracks already followed (the second stage); lower ones are ignored', DEFAULT_TRACKER_OPTIONS.lowScore)),
    max_lost_frames: Type.Optional(Type.Integer({
      minimum: 0, maximum: 10_000, default: DEFAULT_TRACKER_OPTIONS.maxLostFrames, description: 'Frames a track may go undetected (predicted by its motion) before it ends',
    })),
  },
  { additionalProperties: false },
);
export type TrackRunRequest = Static<typeof TrackRunRequest>;

export const TrackRunOut = Type.Object({
  job_id: Type.Integer(),
  status: StringEnum(['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const),
  url: Type.String({ description: 'Follow the job here; its result says how many tracks were suggested' }),
  model_id: Type.Integer(),
  first_frame: Type.Integer(),
  last_frame: Type.Integer(),
  frame_count: Type.Integer({ description: 'Decoded frames (images) in the range the detector will run on' }),
});
export type TrackRunOut = Static<typeof TrackRunOut>;

export const SuggestedBoxOut = Type.Object({
  frame: Type.Integer(),
  x: Type.Number(),
  y: Type.Number(),
  width: Type.Number(),
  height: Type.Number(),
  score: Type.Number({ description: "The detection's score" }),
});

export const TrackSuggestionOut = Type.Object({
  id: Type.Integer(),
  project_id: Type.Integer(),
  video_id: Type.Integer(),
  class_id: Type.Integer(),
  source: Type.String({ description: '`model:<id>`' }),
  score: Type.Number({ description: 'Mean detection score over its frames' }),
  first_frame: Type.Integer(),
  last_frame: Type.Integer(),
  boxes: Type.Array(SuggestedBoxOut, {
    description: 'By frame: the frames where a detection matched the track (box smoothed by its motion model); frames between are frames it was followed through unseen',
  }),
  created_at: Timestamp,
});
export type TrackSuggestionOut = Static<typeof TrackSuggestionOut>;

export const AcceptRequest = Type.Object(
  {
    every_frame: Type.Optional(Type.Boolean({
      default: false,
      description: `Keyframes on every frame with a box; by default only where the motion departs from linear interpolation (every box left out stays at IoU ≥ ${KEYFRAME_MIN_IOU} with the interpolated one)`,
    })),
  },
  { additionalProperties: false },
);
export type AcceptRequest = Static<typeof AcceptRequest>;
