/**
 * Links a detector's boxes, frame by frame, into object tracks, as ByteTrack does (Zhang et al. 2022): each frame's
 * detections are split by score; confident ones are matched first to every track (its box predicted by a
 * constant-velocity Kalman filter), then the weak ones only to tracks still unmatched, which bridges a frame where the
 * detector was unsure (an occluded or blurred object) without starting tracks on noise. Matches are optimal
 * (Hungarian, on 1 − IoU) and only within a class. A track is born tentative and confirmed after `confirmHits`
 * consecutive matches (its tentative frames are kept: the tracker runs over a whole range, not live); a tentative
 * track that misses a frame is dropped, a confirmed one that goes unmatched for more than `maxLostFrames` frames ends.
 * Pure: detections in, tracks out.
 */
import { assign } from '../../lib/assignment.js';
import { boxIou } from '../../lib/mot-metrics.js';

export interface TrackBox {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface Detection extends TrackBox {
  score: number;
  /** Detections link only to tracks of the same class. */
  classKey: number | string;
}

export interface TrackerOptions {
  /** Detections from this score are matched in the first stage and may start tracks. */
  highScore: number;
  /** Detections from this score (below highScore) are matched, in the second stage, to tracks left unmatched; below it they are ignored. */
  lowScore: number;
  /** A confident detection no track took starts one only from this score. */
  newTrackScore: number;
  /** First stage (confident detections, all tracks): least IoU with the predicted box. */
  matchIou: number;
  /** Second stage (weak detections, tracks matched on the previous frame): least IoU. */
  lowMatchIou: number;
  /** Tentative tracks against the confident detections left: least IoU. */
  tentativeMatchIou: number;
  /** Consecutive matches that confirm a track (1: every confident detection starts a confirmed track). */
  confirmHits: number;
  /** A confirmed track unmatched for more frames than this ends. */
  maxLostFrames: number;
  /** False: a track's box is predicted where it was last seen (no velocity), for comparison. */
  motion: boolean;
}

/** ByteTrack's defaults (its track_thresh 0.5, det_thresh = track_thresh + 0.1, match_thresh 0.8, track_buffer 30). */
export const DEFAULT_TRACKER_OPTIONS: TrackerOptions = {
  highScore: 0.5,
  lowScore: 0.1,
  newTrackScore: 0.6,
  matchIou: 0.2,
  lowMatchIou: 0.5,
  tentativeMatchIou: 0.3,
  confirmHits: 2,
  maxLostFrames: 30,
  motion: true,
};

/** One frame of a track where a detection matched it: the filtered box (detection and motion combined), and the detection's score. */
export interface TrackObservation {
  frame: number;
  box: TrackBox;
  /** The detection as the detector gave it. */
  detected: TrackBox;
  score: number;
}

export interface TrackResult {
  /** 1, 2, … in order of birth. */
  id: number;
  classKey: number | string;
  /** By frame, only the frames where a detection matched (gaps are frames the track was predicted through). */
  observations: TrackObservation[];
}

// Kalman noise as fractions of the box height, as in SORT/ByteTrack: larger boxes move and jitter more in pixels.
const POSITION_NOISE = 1 / 20;
const VELOCITY_NOISE = 1 / 160;

/** A constant-velocity Kalman filter on one coordinate: position, velocity and their 2 × 2 covariance. */
interface Axis {
  p: number;
  v: number;
  ppp: number;
  ppv: number;
  pvv: number;
}

function newAxis(value: number, scale: number): Axis {
  return { p: value, v: 0, ppp: (2 * POSITION_NOISE * scale) ** 2, ppv: 0, pvv: (10 * VELOCITY_NOISE * scale) ** 2 };
}

function predictAxis(a: Axis, dt: number, scale: number): void {
  const qp = (POSITION_NOISE * scale) ** 2 * dt;
  const qv = (VELOCITY_NOISE * scale) ** 2 * dt;
  a.p += a.v * dt;
  a.ppp += 2 * dt * a.ppv + dt * dt * a.pvv + qp;
  a.ppv += dt * a.pvv;
  a.pvv += qv;
}

function updateAxis(a: Axis, measured: number, scale: number): void {
  const r = (POSITION_NOISE * scale) ** 2;
  const s = a.ppp + r;
  const kp = a.ppp / s;
  const kv = a.ppv / s;
  const innovation = measured - a.p;
  a.p += kp * innovation;
  a.v += kv * innovation;
  const { ppp, ppv, pvv } = a;
  a.ppp = (1 - kp) * ppp;
  a.ppv = (1 - kp) * ppv;
  a.pvv = pvv - kv * ppv;
}

type State = 'tentative' | 'tracked' | 'lost';

class LiveTrack {
  readonly axes: [Axis, Axis, Axis, Axis];
  state: State = 'tentative';
  hits = 1;
  lastFrame: number;
  predictedAt: number;
  readonly observations: TrackObservation[] = [];

  constructor(
    public id: number,
    readonly classKey: number | string,
    detection: Detection,
    frame: number,
  ) {
    const h = detection.height;
    this.axes = [
      newAxis(detection.x + detection.width / 2, h),
      newAxis(detection.y + detection.height / 2, h),
      newAxis(detection.width, h),
      newAxis(detection.height, h),
    ];
    this.lastFrame = frame;
    this.predictedAt = frame;
    this.observations.push({ frame, box: boxOf(detection), detected: boxOf(detection), score: detection.score });
  }

  get box(): TrackBox {
    const [cx, cy, w, h] = this.axes.map((a) => a.p);
    const width = Math.max(w, 1e-6);
    const height = Math.max(h, 1e-6);
    return { x: cx - width / 2, y: cy - height / 2, width, height };
  }

  predict(frame: number, motion: boolean): void {
    const dt = frame - this.predictedAt;
    if (dt <= 0) return;
    if (!motion) for (const a of this.axes) a.v = 0;
    const scale = Math.max(this.axes[3].p, 1);
    for (const a of this.axes) predictAxis(a, dt, scale);
    this.predictedAt = frame;
  }

  update(detection: Detection, frame: number): void {
    const scale = Math.max(detection.height, 1);
    const measured = [detection.x + detection.width / 2, detection.y + detection.height / 2, detection.width, detection.height];
    this.axes.forEach((a, i) => updateAxis(a, measured[i], scale));
    this.observations.push({ frame, box: roundBox(this.box), detected: boxOf(detection), score: detection.score });
    this.lastFrame = frame;
    this.hits++;
  }
}

const boxOf = (b: TrackBox): TrackBox => ({ x: b.x, y: b.y, width: b.width, height: b.height });
const roundBox = (b: TrackBox): TrackBox => ({ x: round(b.x), y: round(b.y), width: round(b.width), height: round(b.height) });
const round = (v: number) => Math.round(v * 100) / 100;

/** The pairs [track, detection] of an optimal match on 1 − IoU, within a class, at IoU ≥ minIou. */
function match(tracks: readonly LiveTrack[], detections: readonly Detection[], minIou: number): [number, number][] {
  const cost = tracks.map((t) => {
    const box = t.box;
    return detections.map((d) => (d.classKey === t.classKey ? 1 - boxIou(box, d) : Number.POSITIVE_INFINITY));
  });
  // A pair costs less than the limit exactly where its IoU is above minIou.
  return assign(cost, 1 - minIou);
}

/**
 * The ByteTrack tracker, fed one frame at a time in increasing frame order (frames may be skipped: a video decoded at
 * every Nth frame; motion is per frame number).
 */
export class ByteTracker {
  private readonly options: TrackerOptions;
  private live: LiveTrack[] = [];
  private readonly finished: LiveTrack[] = [];
  private nextId = 1;
  private lastFrame = Number.NEGATIVE_INFINITY;

  constructor(options: Partial<TrackerOptions> = {}) {
    this.options = { ...DEFAULT_TRACKER_OPTIONS, ...options };
  }

  step(frame: number, detections: readonly Detection[]): void {
    if (frame <= this.lastFrame) throw new Error(`frames must increase: ${frame} after ${this.lastFrame}`);
    this.lastFrame = frame;
    const o = this.options;
    const high = detections.filter((d) => d.score >= o.highScore);
    const low = detections.filter((d) => d.score >= o.lowScore && d.score < o.highScore);
    for (const t of this.live) t.predict(frame, o.motion);
    const confirmed = this.live.filter((t) => t.state !== 'tentative');
    const tentative = this.live.filter((t) => t.state === 'tentative');

    // Stage 1: confident detections against every confirmed track, lost ones included (they may come back).
    const matchedTracks = new Set<LiveTrack>();
    const usedHigh = new Set<number>();
    for (const [ti, di] of match(confirmed, high, o.matchIou)) {
      this.hit(confirmed[ti], high[di], frame);
      matchedTracks.add(confirmed[ti]);
      usedHigh.add(di);
    }
    // Stage 2: weak detections against tracks still unmatched that were seen on the previous frame.
    const waiting = confirmed.filter((t) => !matchedTracks.has(t) && t.state === 'tracked');
    for (const [ti, di] of match(waiting, low, o.lowMatchIou)) {
      this.hit(waiting[ti], low[di], frame);
      matchedTracks.add(waiting[ti]);
    }
    const ended = new Set<LiveTrack>();
    for (const t of confirmed) {
      if (matchedTracks.has(t)) continue;
      t.state = 'lost';
      if (frame - t.lastFrame > o.maxLostFrames) ended.add(t);
    }
    // Tentative tracks against the confident detections left; one that misses is dropped.
    const restHigh = high.map((d, i) => [d, i] as const).filter(([, i]) => !usedHigh.has(i));
    const tentativeMatched = new Set<LiveTrack>();
    for (const [ti, di] of match(tentative, restHigh.map(([d]) => d), o.tentativeMatchIou)) {
      this.hit(tentative[ti], restHigh[di][0], frame);
      tentativeMatched.add(tentative[ti]);
      usedHigh.add(restHigh[di][1]);
    }
    this.finished.push(...ended);
    this.live = this.live.filter((t) => !ended.has(t) && (t.state !== 'tentative' || tentativeMatched.has(t)));
    // Births: confident detections nobody took.
    high.forEach((d, i) => {
      if (usedHigh.has(i) || d.score < o.newTrackScore) return;
      const track = new LiveTrack(0, d.classKey, d, frame);
      if (o.confirmHits <= 1) this.confirm(track);
      this.live.push(track);
    });
  }

  /** Every confirmed track, by id (the order they were confirmed in). */
  tracks(): TrackResult[] {
    return [...this.finished, ...this.live]
      .filter((t) => t.id > 0)
      .sort((a, b) => a.id - b.id)
      .map((t) => ({ id: t.id, classKey: t.classKey, observations: t.observations }));
  }

  private hit(track: LiveTrack, detection: Detection, frame: number): void {
    track.update(detection, frame);
    if (track.state === 'tentative') {
      if (track.hits >= this.options.confirmHits) this.confirm(track);
    } else track.state = 'tracked';
  }

  private confirm(track: LiveTrack): void {
    track.state = 'tracked';
    track.id = this.nextId++;
  }
}

/** Runs the tracker over frames given in increasing order. */
export function trackDetections(frames: Iterable<{ frame: number; detections: readonly Detection[] }>, options: Partial<TrackerOptions> = {}): TrackResult[] {
  const tracker = new ByteTracker(options);
  for (const { frame, detections } of frames) tracker.step(frame, detections);
  return tracker.tracks();
}
