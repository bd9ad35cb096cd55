import { Type, type Static } from 'typebox';
import { StringEnum } from '../../http/schemas.js';
import { NEAR_DUPLICATE_MAX_DISTANCE } from '../../imaging/perceptual-hash.js';

export const SPLIT_STRATEGIES = ['random', 'stratified', 'grouped'] as const;
export type SplitStrategy = (typeof SPLIT_STRATEGIES)[number];

const Percent = (value: number, description: string) => Type.Integer({ minimum: 0, maximum: 100, default: value, description });

export const SplitQuery = Type.Object({
  train: Percent(70, 'Percentage of images in train'),
  valid: Percent(20, 'Percentage of images in valid'),
  test: Percent(10, 'Percentage of images in test (train + valid + test must be 100)'),
  strategy: Type.Optional(
    StringEnum(SPLIT_STRATEGIES, {
      default: 'random',
      description:
        'random: shuffled and cut; stratified: every class keeps its proportions in each split (iterative stratification ' +
        `over each image's class set); grouped: near-duplicate images (dHash within ${NEAR_DUPLICATE_MAX_DISTANCE} of 64 bits, ` +
        'transitively) always land in the same split',
    }),
  ),
  seed: Type.Optional(Type.Integer({ minimum: 0, maximum: 4_294_967_295, description: 'Same seed, same images → same split; drawn at random when left out' })),
});
export type SplitQuery = Static<typeof SplitQuery>;

const Counts = Type.Object({ train: Type.Integer(), valid: Type.Integer(), test: Type.Integer() });

export const SplitResultOut = Type.Object({
  counts: Counts,
  per_class: Type.Optional(
    Type.Record(Type.String(), Counts, { description: 'stratified only: images containing each class, per split' }),
  ),
  groups: Type.Optional(Type.Integer({ description: 'grouped only: groups of two or more near-duplicate images kept together' })),
  seed: Type.Integer(),
  strategy: StringEnum(SPLIT_STRATEGIES),
});
export type SplitResultOut = Static<typeof SplitResultOut>;

export const SplitCountsOut = Type.Object({
  counts: Counts,
  unassigned: Type.Integer({ description: 'Images with no split' }),
  total: Type.Integer(),
});
export type SplitCountsOut = Static<typeof SplitCountsOut>;
