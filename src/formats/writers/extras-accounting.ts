import type { Annotation, DatasetItem, DatasetToWrite, ShapeOutcome, Tallies, WriteStats } from '../dataset.js';

/**
 * What an export does with what annotations carry besides their shapes: attribute values, groups (several shapes
 * making one object, `group_id`) and track identity (a video frame's shapes name their track by `track_id`). Each is
 * counted once as kept, converted (how) or skipped (why), beside the shapes' own tally, so that an export's answer
 * accounts for everything it was given — also in the formats that have no place for any of them.
 *
 * Units: one attribute value of one annotation; one group of one image; one track (by its id). A frame shape's
 * `track_id` and `keyframe` values are its track's identity, counted under tracks and not as attributes.
 */
export type ExtraOutcome = { kept: true } | { converted: string } | { skipped: string };

export interface ExtrasPolicy {
  /** What becomes of attribute `name` of `a` (on `item`). */
  attribute(a: Annotation, name: string, item: DatasetItem): ExtraOutcome;
  /** What becomes of the group `members` make (two or more shapes, or one, sharing a group id in one image). */
  group(members: readonly Annotation[], item: DatasetItem): ExtraOutcome;
  /** What becomes of a track's identity. */
  track: ExtraOutcome;
}

export const KEPT: ExtraOutcome = { kept: true };
export const skipped = (reason: string): ExtraOutcome => ({ skipped: reason });
export const converted = (how: string): ExtraOutcome => ({ converted: how });

const TRACK_KEYS = new Set(['track_id', 'keyframe']);
const isTrackKey = (a: Annotation, name: string) => TRACK_KEYS.has(name) && typeof a.attributes?.track_id === 'number';

/** A policy that keeps or drops every attribute and group alike (`reason` says why when it drops them). */
export function uniformPolicy(attributes: ExtraOutcome, groups: ExtraOutcome, track: ExtraOutcome): ExtrasPolicy {
  return { attribute: () => attributes, group: () => groups, track };
}

/** A format with no place for attributes, groups or tracks. */
export function nothingKept(format: string): ExtrasPolicy {
  return uniformPolicy(skipped(`${format} has no attributes`), skipped(`${format} has no groups`), skipped(`${format} has no track identity`));
}

type ExtraKind = 'attributes' | 'groups' | 'tracks';

/** Counts the extras of every item a writer is given, by its format's policy. */
export class ExtrasTally {
  private readonly counts: Record<ExtraKind, Tallies> = { attributes: {}, groups: {}, tracks: {} };
  private readonly tracks = new Set<number>();

  constructor(private readonly policy: ExtrasPolicy) {}

  item(item: DatasetItem): void {
    const groups = new Map<number, Annotation[]>();
    for (const a of item.annotations) {
      for (const name of Object.keys(a.attributes ?? {})) {
        if (!isTrackKey(a, name)) this.add('attributes', name, this.policy.attribute(a, name, item));
      }
      const track = a.attributes?.track_id;
      if (typeof track === 'number' && !this.tracks.has(track)) {
        this.tracks.add(track);
        this.add('tracks', 'track', this.policy.track);
      }
      if (a.groupId !== undefined && a.groupId !== 0) groups.set(a.groupId, [...(groups.get(a.groupId) ?? []), a]);
    }
    for (const members of groups.values()) this.add('groups', 'group', this.policy.group(members, item));
  }

  private add(kind: ExtraKind, what: string, outcome: ExtraOutcome): void {
    const [key, label] = 'kept' in outcome ? (['kept', what] as const)
      : 'converted' in outcome ? (['converted', `${what}→${outcome.converted}`] as const)
        : (['skipped', `${what} (${outcome.skipped})`] as const);
    const counts = (this.counts[kind][key as ShapeOutcome] ??= {});
    counts[label] = (counts[label] ?? 0) + 1;
  }

  result(): NonNullable<WriteStats['extras']> {
    return this.counts;
  }
}

type Write = (dataset: DatasetToWrite, output: import('node:stream').Writable) => Promise<WriteStats>;

/** `write`, with the extras of every item it is given counted by `policy` into its stats' `extras`. */
export function withExtrasAccounting(write: Write, policy: ExtrasPolicy): Write {
  return async (dataset, output) => {
    const tally = new ExtrasTally(policy);
    const source = dataset.items;
    async function* counted(): AsyncGenerator<DatasetItem> {
      for await (const item of source) {
        tally.item(item);
        yield item;
      }
    }
    const stats = await write({ ...dataset, items: counted() }, output);
    return { ...stats, extras: tally.result() };
  };
}
