/**
 * Training readiness: a score 0–100 made of weighted checks, each passed or failed with a message, and the blockers
 * (failed checks that make training pointless whatever the score). The checks depend on what the adapter trains:
 * a detector needs boxes and a non-empty valid split, a classifier enough images per class, the sample adapters
 * (tabular, text) samples of their modality with a target. Pure: the facts come from ReadinessEvaluator
 * (readiness.service.ts), which the training module's gate and `POST /api/projects/{id}/readiness` both call.
 */
import type { SampleModality } from '../../db/schema.js';
import type { ReadinessOut } from '../../training/readiness.js';
import type { ReadinessConfig } from './readiness.schemas.js';
import { isSplitName, PROJECT_TYPE_SHAPES, type ProjectTypeName } from '../../lib/vocabulary.js';
import { fixOf, summarise } from './readiness-fixes.logic.js';

export const READINESS_DEFAULTS = { min_readiness_score: 60, min_images_per_class: 10, min_instances_per_class: 10, min_samples_per_class: 10 } as const;

/**
 * Below these a failed check blocks training whatever the score (issue 24: a project 33% annotated with no class in
 * valid scored 60 and passed). Most images (or samples) unlabelled, or a class with only a handful of instances in
 * train, teaches nothing; a configured `min_instances_per_class` lower than the handful lowers it too.
 */
export const BLOCKING = { labelled_fraction: 0.5, instances_per_class: 5 } as const;

/** What an adapter trains; each task has its own rule. */
export type ReadinessTask = 'detect' | 'segment' | 'classify' | 'tabular' | 'text' | 'keypoints' | 'oriented';

/** Known adapter names (the training module's and common aliases); others fall back to the project type's task. */
export const ADAPTER_TASKS: Record<string, ReadinessTask> = {
  'versa-detect': 'detect',
  ultralytics: 'detect',
  'ultralytics-detect': 'detect',
  'versa-segment': 'segment',
  'ultralytics-segment': 'segment',
  'versa-classify': 'classify',
  'ultralytics-classify': 'classify',
  tabular: 'tabular',
  text: 'text',
};

/** The sample modality each sample task trains on. */
export const SAMPLE_TASKS: Partial<Record<ReadinessTask, SampleModality>> = { tabular: 'tabular', text: 'text' };

export const DEFAULT_ADAPTER: Record<string, string> = {
  object_detection: 'versa-detect',
  instance_segmentation: 'versa-segment',
  semantic_segmentation: 'versa-segment',
  classification: 'versa-classify',
};

export const TASK_OF_PROJECT: Record<string, ReadinessTask> = {
  object_detection: 'detect',
  instance_segmentation: 'segment',
  semantic_segmentation: 'segment',
  classification: 'classify',
  keypoint_detection: 'keypoints',
  oriented_detection: 'oriented',
};

/** Tasks no adapter trains yet: readiness says so as a blocker rather than passing (issue 25). */
export const UNTRAINED_TASKS: Partial<Record<ReadinessTask, ProjectTypeName>> = { keypoints: 'keypoint_detection', oriented: 'oriented_detection' };

/** The facts every rule reads: SQL aggregates, no image is opened. */
export interface ReadinessStats {
  images: number;
  splits: { train: number; valid: number; test: number; unassigned: number };
  annotatedImages: number;
  annotationTypes: Record<string, number>;
  /** Per used class: instances and images in each split. */
  classes: { name: string; instances: Record<string, number>; images: Record<string, number>; totalInstances: number; totalImages: number }[];
  /** Keypoint instances whose class has no skeleton (their points have no names, no edges, no flips). */
  keypointsWithoutSkeleton?: number;
  /** Sample tasks: the samples of the task's modality. */
  samples?: SampleReadinessStats;
}

export interface SampleReadinessStats {
  modality: SampleModality;
  samples: number;
  splits: { train: number; valid: number; test: number; unassigned: number };
  /** Samples with a label, spans or a value. */
  labelled: number;
  /** Samples per class (a multi-label sample under its first class). */
  classes: { name: string; samples: number }[];
  /** Tabular: the target column the import named (none when the rows came without one). */
  target?: { name: string; task: 'classification' | 'regression' };
  /** Values that are numbers, and how many distinct ones (a regression target). */
  numbers: number;
  distinctNumbers: number;
}

type ReadinessCheck = ReadinessOut['checks'][number];

interface RuleCheck extends ReadinessCheck {
  /** A failed blocker makes the project not ready whatever the score (some checks block only below a lower bar). */
  blocker: boolean;
}

type Rule = (stats: ReadinessStats, config: Required<ReadinessConfig>) => RuleCheck[];

const check = (id: string, weight: number, blocker: boolean, passed: boolean, message: string): RuleCheck => ({ id, weight, blocker, passed, message });
const plural = (n: number, word: string, many = `${word}s`) => `${n} ${n === 1 ? word : many}`;
/** No image in a split yet: a version's split_config deals them all into train, valid and test when it is created. */
const pending = (stats: ReadinessStats) => stats.splits.train + stats.splits.valid + stats.splits.test === 0 && stats.splits.unassigned >= 2;
const unassignedMessage = (stats: ReadinessStats) => `${plural(stats.splits.unassigned, 'image')} in no split yet: a version's split_config assigns them`;

function common(stats: ReadinessStats): { hasImages: RuleCheck; train: RuleCheck; annotated: RuleCheck; balance: RuleCheck } {
  const inSplits = stats.splits.train + stats.splits.valid + stats.splits.test;
  const fraction = stats.images === 0 ? 0 : stats.annotatedImages / stats.images;
  const counts = stats.classes.map((c) => c.totalInstances).filter((n) => n > 0);
  const ratio = counts.length < 2 ? 1 : Math.max(...counts) / Math.min(...counts);
  return {
    hasImages: check('has_images', 10, true, stats.images > 0, stats.images > 0 ? `${plural(stats.images, 'image')}` : 'The project has no images'),
    train: check(
      'train_split',
      10,
      true,
      stats.splits.train > 0 || pending(stats),
      stats.splits.train > 0 ? `${plural(stats.splits.train, 'image')} in train` : pending(stats) ? unassignedMessage(stats) : inSplits === 0 ? 'No image is assigned to a split (POST /api/projects/{id}/splits)' : 'The train split is empty',
    ),
    annotated: check(
      'annotated_fraction',
      15,
      stats.images > 0 && fraction < BLOCKING.labelled_fraction,
      fraction >= 0.9,
      `${Math.round(fraction * 100)}% of images are annotated (90% wanted${fraction < BLOCKING.labelled_fraction ? `; under ${BLOCKING.labelled_fraction * 100}% there is too little to learn from` : ''})`,
    ),
    balance: check('class_balance', 5, false, ratio <= 20, counts.length < 2 ? 'Fewer than two classes in use' : `The largest class has ${ratio.toFixed(1)}× the instances of the smallest (at most 20× wanted)`),
  };
}

/** Enough instances of each class in train (unassigned images count: a version deals them); below a handful it blocks. */
function instancesInTrain(stats: ReadinessStats, config: Required<ReadinessConfig>): RuleCheck {
  const inTrain = (c: ReadinessStats['classes'][number]) => (c.instances.train ?? 0) + (c.instances.unassigned ?? 0);
  const few = stats.classes.filter((c) => inTrain(c) < config.min_instances_per_class).map((c) => c.name);
  const handful = Math.min(BLOCKING.instances_per_class, config.min_instances_per_class);
  const tooFew = stats.classes.filter((c) => inTrain(c) < handful).map((c) => c.name);
  return check(
    'min_instances_per_class',
    15,
    tooFew.length > 0,
    stats.classes.length > 0 && few.length === 0,
    few.length === 0
      ? `Every class has at least ${config.min_instances_per_class} instances in train`
      : tooFew.length > 0
        ? `Fewer than ${handful} instances in train, too few to learn from: ${tooFew.slice(0, 10).join(', ')}`
        : `Fewer than ${config.min_instances_per_class} instances in train: ${few.slice(0, 10).join(', ')}`,
  );
}

/** An empty valid split is valid_split's blocker; this one names the classes a non-empty valid split lacks. */
function classesInValid(stats: ReadinessStats): RuleCheck {
  const missingValid = stats.classes.filter((c) => (c.instances.train ?? 0) > 0 && (c.instances.valid ?? 0) === 0).map((c) => c.name);
  return check(
    'classes_in_valid',
    10,
    stats.splits.valid > 0,
    missingValid.length === 0,
    missingValid.length === 0 ? 'Every trained class appears in valid' : `Missing from valid, so the model cannot be measured on them: ${missingValid.slice(0, 10).join(', ')}`,
  );
}

function spatialRule(kind: 'detect' | 'segment'): Rule {
  return (stats, config) => {
    const { hasImages, train, annotated, balance } = common(stats);
    const types = kind === 'detect' ? ['bbox', 'polygon', 'mask'] : ['polygon', 'mask'];
    const shapes = types.reduce((sum, t) => sum + (stats.annotationTypes[t] ?? 0), 0);
    const what = kind === 'detect' ? 'boxes (bbox, polygon or mask annotations)' : 'polygon or mask annotations';
    return [
      hasImages,
      check(kind === 'detect' ? 'has_boxes' : 'has_masks', 20, true, shapes > 0, shapes > 0 ? `${plural(shapes, 'shape')} to learn from` : `The adapter needs ${what}; the project has none`),
      train,
      check('valid_split', 15, true, stats.splits.valid > 0 || pending(stats), stats.splits.valid > 0 ? `${plural(stats.splits.valid, 'image')} in valid` : pending(stats) ? unassignedMessage(stats) : 'The valid split is empty: nothing to measure the model on'),
      annotated,
      instancesInTrain(stats, config),
      classesInValid(stats),
      balance,
    ];
  };
}

const classifyRule: Rule = (stats, config) => {
  const { hasImages, train, annotated, balance } = common(stats);
  const labels = stats.annotationTypes.classification ?? 0;
  const used = stats.classes.filter((c) => c.totalImages > 0);
  const few = used.filter((c) => c.totalImages < config.min_images_per_class).map((c) => c.name);
  const missingValid = used.filter((c) => (c.images.train ?? 0) > 0 && (c.images.valid ?? 0) === 0).map((c) => c.name);
  return [
    hasImages,
    check('has_labels', 15, true, labels > 0, labels > 0 ? `${plural(labels, 'image label')}` : 'The adapter needs classification labels; the project has none'),
    check('two_classes', 10, true, used.length >= 2, `${plural(used.length, 'class')} in use (at least 2 needed)`),
    train,
    check(
      'valid_split',
      15,
      true,
      (stats.splits.valid > 0 || pending(stats)) && missingValid.length === 0,
      stats.splits.valid === 0
        ? pending(stats) ? unassignedMessage(stats) : 'The valid split is empty: nothing to measure the model on'
        : missingValid.length > 0
          ? `Missing from valid, so the model cannot be measured on them: ${missingValid.slice(0, 10).join(', ')}`
          : `${plural(stats.splits.valid, 'image')} in valid`,
    ),
    check(
      'min_images_per_class',
      25,
      true,
      used.length > 0 && few.length === 0,
      few.length === 0 ? `Every class has at least ${config.min_images_per_class} images` : `Fewer than ${config.min_images_per_class} images: ${few.slice(0, 10).join(', ')}`,
    ),
    { ...annotated, weight: 10 },
    balance,
  ];
};

/** The target: tabular samples need the import's target column; the others (and a classification target) labels. */
function sampleTarget(s: SampleReadinessStats, modality: SampleModality): RuleCheck {
  if (modality === 'tabular' && !s.target) {
    return check('has_target', 15, true, false, 'No target column: tabular samples need one (import the CSV with POST /api/projects/{id}/import/tabular and its `target`)');
  }
  if (s.target?.task === 'regression') {
    return check('has_target', 15, true, s.numbers > 0, s.numbers > 0 ? `Target "${s.target.name}" (regression) on ${s.numbers} of ${s.samples} samples` : `No sample has a value in the target column "${s.target.name}"`);
  }
  const labelled = s.classes.reduce((n, c) => n + c.samples, 0);
  const what = s.target ? `Target "${s.target.name}" (classification)` : 'Labels';
  return check(
    'has_target',
    15,
    true,
    labelled > 0,
    labelled > 0 ? `${what} on ${labelled} of ${s.samples} samples` : s.target ? `No sample has a value in the target column "${s.target.name}"` : `The ${modality} adapter needs labelled samples; none has a label`,
  );
}

/** A regression target: enough numbers, and more than one value. */
function numericTarget(s: SampleReadinessStats, config: Required<ReadinessConfig>): RuleCheck {
  const enough = s.numbers >= config.min_samples_per_class && s.distinctNumbers >= 2;
  return check(
    'numeric_target',
    25,
    true,
    enough,
    enough
      ? `${plural(s.numbers, 'numeric target value')} (${s.distinctNumbers} distinct)`
      : `The regression target needs at least ${config.min_samples_per_class} numbers with 2 or more distinct values; it has ${s.numbers} (${s.distinctNumbers} distinct)`,
  );
}

/** Classification: two classes at least, each with enough samples. */
function sampleClasses(used: SampleReadinessStats['classes'], config: Required<ReadinessConfig>): RuleCheck[] {
  const few = used.filter((c) => c.samples < config.min_samples_per_class).map((c) => c.name);
  return [
    check('two_classes', 10, true, used.length >= 2, `${plural(used.length, 'class', 'classes')} in use (at least 2 needed)`),
    check(
      'min_samples_per_class',
      15,
      true,
      used.length > 0 && few.length === 0,
      few.length === 0 ? `Every class has at least ${config.min_samples_per_class} samples` : `Fewer than ${config.min_samples_per_class} samples: ${few.slice(0, 10).join(', ')}`,
    ),
  ];
}

/**
 * The sample adapters: samples of their modality with a target — tabular: the import's target column; text: labels —
 * enough per class (classification) or enough numbers (regression), and a train and a valid split.
 */
function samplesRule(modality: SampleModality): Rule {
  return (stats, config) => {
    const s = stats.samples ?? { modality, samples: 0, splits: { train: 0, valid: 0, test: 0, unassigned: 0 }, labelled: 0, classes: [], numbers: 0, distinctNumbers: 0 };
    const things = `${modality} sample`;
    const inSplits = s.splits.train + s.splits.valid + s.splits.test;
    const waiting = inSplits === 0 && s.splits.unassigned >= 2;
    const waitingMessage = `${plural(s.splits.unassigned, things)} in no split yet: POST /api/projects/{id}/samples/splits assigns them`;
    const regression = s.target?.task === 'regression';
    const used = s.classes.filter((c) => c.samples > 0);
    const perClass = regression ? [numericTarget(s, config)] : sampleClasses(used, config);
    const fraction = s.samples === 0 ? 0 : s.labelled / s.samples;
    const counts = used.map((c) => c.samples);
    const ratio = counts.length < 2 ? 1 : Math.max(...counts) / Math.min(...counts);
    return [
      check('has_samples', 10, true, s.samples > 0, s.samples > 0 ? plural(s.samples, things) : `The ${modality} adapter trains on ${modality} samples; this project has none`),
      sampleTarget(s, modality),
      ...perClass,
      check(
        'train_split',
        10,
        true,
        s.splits.train > 0 || waiting,
        s.splits.train > 0 ? `${plural(s.splits.train, things)} in train` : waiting ? waitingMessage : inSplits === 0 ? `No ${things} is in a split (POST /api/projects/{id}/samples/splits)` : 'The train split is empty',
      ),
      check(
        'valid_split',
        15,
        true,
        s.splits.valid > 0 || waiting,
        s.splits.valid > 0 ? `${plural(s.splits.valid, things)} in valid` : waiting ? waitingMessage : 'The valid split is empty: nothing to measure the model on',
      ),
      check(
        'labelled_fraction',
        20,
        s.samples > 0 && fraction < BLOCKING.labelled_fraction,
        fraction >= 0.9,
        `${Math.round(fraction * 100)}% of ${things}s are labelled (90% wanted${fraction < BLOCKING.labelled_fraction ? `; under ${BLOCKING.labelled_fraction * 100}% there is too little to learn from` : ''})`,
      ),
      regression
        ? check('class_balance', 5, false, true, 'A regression target: no classes to balance')
        : check('class_balance', 5, false, ratio <= 20, counts.length < 2 ? 'Fewer than two classes in use' : `The largest class has ${ratio.toFixed(1)}× the samples of the smallest (at most 20× wanted)`),
    ];
  };
}

/**
 * Keypoint and oriented detection: the project type's shapes (PROJECT_TYPE_SHAPES; rotated boxes count as boxes) in
 * splits as a detector's, keypoints from a class with a skeleton; and, until an adapter trains the task, a blocker
 * that says there is no trainer for it.
 */
function untrainedRule(task: 'keypoints' | 'oriented'): Rule {
  const projectType = UNTRAINED_TASKS[task]!;
  return (stats, config) => {
    const { hasImages, train, annotated, balance } = common(stats);
    const types = PROJECT_TYPE_SHAPES[projectType];
    const shapes = types.reduce((sum, t) => sum + (stats.annotationTypes[t] ?? 0), 0);
    const what = task === 'keypoints' ? 'keypoint instances' : 'boxes (rotated or not)';
    const checks = [
      check('has_trainer', 0, true, false, `No trainer for ${projectType} yet: the project can be labelled, checked and exported (COCO keypoints, YOLO pose/OBB, DOTA…) but not trained here`),
      hasImages,
      check(task === 'keypoints' ? 'has_keypoints' : 'has_boxes', 20, true, shapes > 0, shapes > 0 ? `${plural(shapes, 'shape')} to learn from` : `A ${projectType} project needs ${what}; it has none`),
    ];
    if (task === 'keypoints') {
      const orphans = stats.keypointsWithoutSkeleton ?? 0;
      checks.push(check('skeleton_classes', 10, true, orphans === 0, orphans === 0 ? 'Every keypoint class has a skeleton' : `${plural(orphans, 'keypoint instance')} belong to classes without a skeleton: give each keypoint class its skeleton (points, edges, flip_pairs)`));
    }
    checks.push(
      train,
      check('valid_split', 15, true, stats.splits.valid > 0 || pending(stats), stats.splits.valid > 0 ? `${plural(stats.splits.valid, 'image')} in valid` : pending(stats) ? unassignedMessage(stats) : 'The valid split is empty: nothing to measure the model on'),
      annotated,
      instancesInTrain(stats, config),
      classesInValid(stats),
      balance,
    );
    return checks;
  };
}

/** One rule per task; a modality adds its own without touching the others. */
export const READINESS_RULES: Record<ReadinessTask, Rule> = {
  detect: spatialRule('detect'),
  segment: spatialRule('segment'),
  classify: classifyRule,
  tabular: samplesRule('tabular'),
  text: samplesRule('text'),
  keypoints: untrainedRule('keypoints'),
  oriented: untrainedRule('oriented'),
};

/** Pure: the readiness of a project with these stats for this task. */
export function evaluateReadiness(task: ReadinessTask, adapter: string, stats: ReadinessStats, config: ReadinessConfig = {}): ReadinessOut {
  const effective = { ...READINESS_DEFAULTS, ...stripUndefined(config) };
  const checks = READINESS_RULES[task](stats, effective);
  const score = Math.round(checks.reduce((sum, c) => sum + (c.passed ? c.weight : 0), 0));
  const blockers = checks.filter((c) => c.blocker && !c.passed).map((c) => c.message);
  const judged = { score, threshold: effective.min_readiness_score, ready: blockers.length === 0 && score >= effective.min_readiness_score, adapter };
  const failed = checks.filter((c) => !c.passed).map((check) => ({ check, fix: fixOf(check, stats) }));
  return {
    ...judged,
    checks: checks.map(({ id, passed, weight, message }) => {
      const fix = failed.find((f) => f.check.id === id)?.fix;
      return { id, passed, weight, message, ...(fix ? { fix } : {}) };
    }),
    blockers,
    summary: summarise(judged, failed),
  };
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
