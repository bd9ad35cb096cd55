import { Type, type Static } from 'typebox';
import { Id, Nullable, StringEnum } from '../../http/schemas.js';
import { ImageOut } from '../images/images.schemas.js';
import { AGGREGATIONS, UNCERTAINTY_MEASURES } from './uncertainty.logic.js';

export const STRATEGIES = [...UNCERTAINTY_MEASURES, 'diversity', 'random'] as const;
export type Strategy = (typeof STRATEGIES)[number];
export const BALANCES = ['none', 'classes'] as const;

/** Most images one answer ranks, and deepest page. */
export const MAX_LIMIT = 1000;
export const MAX_OFFSET = 10_000;
/** Unlabelled images the model is run on by default (a seeded sample when there are more). */
export const DEFAULT_POOL = 2000;
export const MAX_POOL = 10_000;

export const NextToLabelQuery = Type.Object(
  {
    strategy: StringEnum(STRATEGIES, {
      default: 'entropy',
      description: 'least_confidence, margin or entropy: the model\'s uncertainty, most unsure first; diversity: greedy k-centre '
        + 'on the model\'s embeddings (farthest from the labelled images and the earlier picks first); random: a seeded shuffle',
    }),
    aggregate: StringEnum(AGGREGATIONS, {
      default: 'sum',
      description: 'How a detector\'s per-detection uncertainty makes the image\'s: all of them added (sum, the default: crowded, unsure images '
        + 'first; it beat max in bench/active-learning.ts), its least certain detection (max) or their mean',
    }),
    balance: StringEnum(BALANCES, {
      default: 'none',
      description: 'classes: each detection\'s uncertainty is weighted by how rare its predicted class is among the labelled boxes '
        + '(√ of inverse frequency; 1 when the classes are even), so unsure objects of scarce classes come first; none: unweighted',
    }),
    spread: Type.Boolean({
      default: true,
      description: 'Uncertainty strategies: spread the ranking over the model\'s view of the images (the default): greedy k-centre from the labelled images, '
        + 'each pick the largest uncertainty × distance to the nearest labelled or earlier pick, so near-copies of one unsure scene do not fill a batch '
        + '(it raised every uncertainty measure\'s mean in bench/active-learning.ts); false: by uncertainty alone',
    }),
    limit: Type.Integer({ minimum: 1, maximum: MAX_LIMIT, default: 50 }),
    offset: Type.Integer({ minimum: 0, maximum: MAX_OFFSET, default: 0, description: 'Ranks skipped (paging through the same ranking)' }),
    seed: Type.Optional(Type.Integer({ minimum: 0, maximum: 2_147_483_647, description: 'The random order (drawn when absent: pass the reported one back to page through it) and the model strategies\' pool sample (0 when absent)' })),
    model_id: Type.Optional(Id),
    pool: Type.Integer({
      minimum: 1,
      maximum: MAX_POOL,
      default: DEFAULT_POOL,
      description: 'Model strategies run the model on at most this many unlabelled images (a sample drawn with `seed` when there are more), '
        + 'and use as many labelled images as diversity\'s starting centres',
    }),
  },
  { additionalProperties: false },
);
export type NextToLabelQuery = Static<typeof NextToLabelQuery>;

export const RankedImageOut = Type.Object({
  rank: Type.Integer({ description: '1 for the image to label first' }),
  score: Type.Number({
    description: 'Uncertainty (higher is less sure; in [0, 1] but for sum); diversity: distance to the nearest labelled or earlier-picked image; random: the image\'s draw',
  }),
  image: ImageOut,
});

export const NextToLabelOut = Type.Object({
  strategy: StringEnum(STRATEGIES),
  aggregate: StringEnum(AGGREGATIONS),
  balance: StringEnum(BALANCES),
  spread: Type.Boolean(),
  class_weights: Nullable(Type.Record(Type.String(), Type.Number(), { description: 'With balance=classes, the weight of each of the model\'s classes (by name) from the labelled boxes' })),
  model: Nullable(Type.Object({ id: Type.Integer(), name: Type.String(), lifecycle: Type.String() }, { description: 'The model that ranked them (null for random)' })),
  seed: Type.Integer({ description: 'The seed used (random order and pool sample)' }),
  unlabelled: Type.Integer({ description: 'Unlabelled images the caller may see' }),
  candidates: Type.Integer({ description: 'Unlabelled images ranked (all for random, at most `pool` for the model strategies)' }),
  predicted: Type.Integer({ description: 'Images the model ran on for this answer; the others came from the prediction cache' }),
  items: Type.Array(RankedImageOut),
});
export type NextToLabelOut = Static<typeof NextToLabelOut>;
