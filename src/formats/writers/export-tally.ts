import type { Annotation, ShapeOutcome, Tallies, WriteStats } from '../dataset.js';

/**
 * What a writer did with everything it was given, as it did it (issue 25): every shape once (kept, converted or
 * skipped), and with each shape what the writer wrote of its attribute values, its group and its track's identity.
 * A shape left out takes its attribute values with it; a group none of whose shapes is written, or a track none of
 * whose frame shapes is, is left out. Nothing here is a format's policy: a writer says what it wrote, shape by shape.
 *
 * Units: one attribute value of one annotation; one group of one image; one track (by its id). A frame shape's
 * `track_id` and `keyframe` values are its track's identity, counted under tracks and not as attributes.
 */
export interface Wrote {
  /** The shape's attribute values written with it: all of them, or those named (the others are left out). */
  attributes?: 'all' | readonly string[];
  /** Its group id written as a group (true), or the group written as something else (how). */
  group?: true | string;
  /** Its track's identity written as a track (true), or as something else (how). */
  track?: true | string;
  /** Why the attribute values not written were left out, when it is not the writer's usual reason (`LeftOut`). */
  why?: string;
}

/** Why a writer leaves out the attribute values, group ids and track ids of the shapes it writes without them. */
export interface LeftOut {
  attributes: string;
  groups: string;
  tracks: string;
}

/** Shapes written with every attribute value and their group id, a frame shape's track as its `track_id` attribute. */
export const WITH_ATTRIBUTES: Wrote = { attributes: 'all', group: true, track: "track_id attribute on each frame's shape" };

/** A format with no place for attribute values, groups or tracks. */
export function nothingKept(format: string): LeftOut {
  return { attributes: `${format} has no attributes`, groups: `${format} has no groups`, tracks: `${format} has no track identity` };
}

type Extra = 'attributes' | 'groups' | 'tracks';
/** How far an extra got: written (true, or how it was converted), its shape written without it (false), or no shape written (null). */
type Fate = true | string | false | null;

const TRACK_KEYS = new Set(['track_id', 'keyframe']);

export class ExportTally {
  private readonly shapes: Tallies = {};
  private readonly extras: Record<Extra, Tallies> = { attributes: {}, groups: {}, tracks: {} };
  private readonly groups = new Map<string, Fate>();
  private readonly tracks = new Map<number, Fate>();
  private image = 0;

  constructor(private readonly leftOut: LeftOut = nothingKept('this format')) {}

  /** The next image's shapes follow (a group is one image's). Writers tally an image's shapes before taking the next. */
  nextImage(): void {
    this.image++;
  }

  /** Something given that is not a shape of an image (`"image (not a video frame)"`, a track's keyframe). */
  count(outcome: ShapeOutcome, what: string): void {
    add(this.shapes, outcome, what);
  }

  /** One shape the writer was given, what it did with it (`what` says what became what, or why it is left out), and what it wrote with it. */
  shape(a: Annotation, outcome: ShapeOutcome, what: string, wrote: Wrote = {}): void {
    add(this.shapes, outcome, what);
    const written = outcome !== 'skipped';
    if (a.attributes) {
      const track = typeof a.attributes.track_id === 'number' ? a.attributes.track_id : undefined;
      for (const name in a.attributes) {
        if (track !== undefined && TRACK_KEYS.has(name)) continue;
        if (!written) add(this.extras.attributes, 'skipped', `${name} (its shape is not written)`);
        else if (wrote.attributes === 'all' || wrote.attributes?.includes(name)) add(this.extras.attributes, 'kept', name);
        else add(this.extras.attributes, 'skipped', `${name} (${wrote.why ?? this.leftOut.attributes})`);
      }
      if (track !== undefined) settle(this.tracks, track, written ? (wrote.track ?? false) : null);
    }
    if (a.groupId) settle(this.groups, `${this.image}/${a.groupId}`, written ? (wrote.group ?? false) : null);
  }

  /** The shapes' tallies and the extras' (WriteStats). */
  result(): Pick<WriteStats, 'kept' | 'converted' | 'skipped' | 'extras'> {
    const extras = structuredClone(this.extras);
    for (const fate of this.groups.values()) add(extras.groups, ...outcome('group', fate, this.leftOut.groups, 'its shapes are not written'));
    for (const fate of this.tracks.values()) add(extras.tracks, ...outcome('track', fate, this.leftOut.tracks, 'none of its shapes is written'));
    return { ...this.shapes, extras };
  }
}

function add(tallies: Tallies, outcome: ShapeOutcome, what: string): void {
  const counts = (tallies[outcome] ??= {});
  counts[what] = (counts[what] ?? 0) + 1;
}

/** The furthest any of its shapes got: written beats written without it, which beats not written. */
function settle<K>(fates: Map<K, Fate>, key: K, fate: Fate): void {
  const was = fates.get(key);
  if (was === undefined || rank(fate) > rank(was)) fates.set(key, fate);
}

const rank = (fate: Fate) => (fate === null ? 0 : fate === false ? 1 : 2);

function outcome(what: string, fate: Fate, leftOut: string, notWritten: string): [ShapeOutcome, string] {
  if (fate === true) return ['kept', what];
  if (typeof fate === 'string') return ['converted', `${what}→${fate}`];
  return ['skipped', `${what} (${fate === false ? leftOut : notWritten})`];
}
