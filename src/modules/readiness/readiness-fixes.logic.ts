/**
 * What to do about a failed readiness check, in plain words, with the fix a page can offer as a link or button
 * (issue 30, item 5: "readiness fell below the gate" after 29 unlabelled images were uploaded, for a reason the user
 * could not connect). Pure: from the check and the same facts the rules read.
 */
import type { ReadinessFix, ReadinessFixAction, ReadinessOut } from '../../training/readiness.js';

/** The facts a fix reads (a part of the rules' ReadinessStats). */
interface ReadinessStats {
  images: number;
  annotatedImages: number;
  /** Present for the sample adapters (tabular, text). */
  samples?: unknown;
}

type Check = ReadinessOut['checks'][number];

const plural = (n: number, word: string, many = `${word}s`) => `${n} ${n === 1 ? word : many}`;
const fix = (text: string, ...actions: ReadinessFixAction[]): ReadinessFix => ({ text, actions });

const SPLITS = 'assign splits in the Splits tab, or let a new version deal the images into train, valid and test';

/** Per check id: the fix of a failed check (the check's message says what was measured). */
const FIXES: Record<string, (check: Check, stats: ReadinessStats) => ReadinessFix> = {
  has_images: () => fix('The project has no images — upload some', 'upload'),
  has_boxes: () => fix('No image has a box yet — label images with boxes, or run a detector and accept its suggestions', 'label'),
  has_masks: () => fix('No image has a polygon or mask yet — outline objects in the editor', 'label'),
  has_keypoints: () => fix('No keypoint instance yet — label images with keypoints', 'label'),
  has_labels: () => fix('No image has a class yet — classify images in the editor (a class key per image)', 'label'),
  two_classes: (_, s) => fix(s.samples ? 'A classifier needs at least two classes — label samples with a second class' : 'A classifier needs at least two classes — label images with a second class', s.samples ? 'label_samples' : 'label'),
  train_split: (_, s) => fix(s.samples ? 'No sample is in train — assign sample splits' : `No image is in train — ${SPLITS}`, s.samples ? 'label_samples' : 'assign_splits'),
  valid_split: (c, s) =>
    s.samples
      ? fix('No sample is in valid, so the model cannot be measured — assign sample splits', 'label_samples')
      : c.message.startsWith('Missing from valid')
        ? fix(`${c.message} — move some of their images into valid`, 'assign_splits')
        : fix(`No image is in valid, so the model cannot be measured — ${SPLITS}`, 'assign_splits'),
  classes_in_valid: (c) => fix(`${c.message} — move some of their images into valid`, 'assign_splits'),
  annotated_fraction: (_, s) => {
    const missing = s.images - s.annotatedImages;
    return fix(`${plural(missing, 'image')} of ${s.images} ${missing === 1 ? 'has' : 'have'} no labels — label them, or remove them from the project (Clean → remove unannotated images)`, 'label_unannotated', 'remove_unannotated');
  },
  min_instances_per_class: (c) => fix(`${c.message} — label more images with these classes`, 'label'),
  min_images_per_class: (c) => fix(`${c.message} — classify more images with them`, 'label'),
  class_balance: () => fix('The classes are very unbalanced — label more of the rare classes (or merge them)', 'label'),
  skeleton_classes: () => fix('Some keypoint classes have no skeleton — give each its points and edges in the Classes tab', 'classes'),
  has_trainer: () => fix('No trainer here for this project type — export the data and train elsewhere', 'export'),
  has_samples: () => fix('No samples of this modality — import some', 'label_samples'),
  has_target: (c) => fix(`${c.message} — label the samples`, 'label_samples'),
  numeric_target: (c) => fix(`${c.message} — fill in more target values`, 'label_samples'),
  min_samples_per_class: (c) => fix(`${c.message} — label more samples with these classes`, 'label_samples'),
  labelled_fraction: (c) => fix(`${c.message.replace(/ \(90% wanted.*$/, '')} — label the rest`, 'label_samples'),
};

/** The fix of a failed check; a passed one (or an unknown id) has none. */
export function fixOf(check: Check, stats: ReadinessStats): ReadinessFix | undefined {
  return check.passed ? undefined : FIXES[check.id]?.(check, stats);
}

/**
 * Why a project is or is not ready, in one sentence: the blockers' fixes when something blocks, else the failed
 * checks' (heaviest first) when the score is below the gate.
 */
export function summarise(report: Pick<ReadinessOut, 'score' | 'threshold' | 'ready' | 'adapter'>, failed: { check: Check & { blocker: boolean }; fix?: ReadinessFix }[]): string {
  if (report.ready) return `Ready to train with ${report.adapter}: readiness ${report.score} meets the gate of ${report.threshold} and nothing blocks`;
  const words = (f: (typeof failed)[number]) => f.fix?.text ?? f.check.message;
  const blocking = failed.filter((f) => f.check.blocker);
  if (blocking.length > 0) return `Training is blocked: ${blocking.map(words).join('; ')}`;
  const heaviest = [...failed].sort((a, b) => b.check.weight - a.check.weight);
  return `Readiness ${report.score} is below the gate of ${report.threshold}: ${heaviest.map(words).join('; ')}`;
}
