import type { Caller } from '../access/caller.js';
import type { ProjectAccess } from '../access/project-access.js';
import type { Db } from '../db/database.js';
import type { ReadinessCheck, ReadinessEvaluator, ReadinessOptions, ReadinessOut } from './readiness.js';

/** Images per class a classifier needs before training is worth starting. */
export const MIN_IMAGES_PER_CLASS = 3;
const DEFAULT_THRESHOLD = 60;

/**
 * A small stand-in for the data-quality module's readiness evaluator (replaced at merge): a detector needs boxes
 * and images to validate on; a classifier needs MIN_IMAGES_PER_CLASS labelled images of every class.
 */
export class ProvisionalReadiness implements ReadinessEvaluator {
  constructor(
    private readonly db: Db,
    private readonly access: ProjectAccess,
  ) {}

  async evaluate(caller: Caller, projectId: number, options: ReadinessOptions): Promise<ReadinessOut> {
    const project = await this.access.project(caller, projectId, 'project.read');
    const threshold = options.config?.min_readiness_score ?? DEFAULT_THRESHOLD;
    const checks: ReadinessCheck[] = [];
    const splits = await this.db.selectFrom('images').select(['split', (eb) => eb.fn.countAll<number>().as('n')]).where('project_id', '=', projectId).groupBy('split').execute();
    const count = (split: string | null) => Number(splits.find((s) => s.split === split)?.n ?? 0);
    const total = splits.reduce((sum, s) => sum + Number(s.n), 0);
    checks.push({ id: 'has_images', passed: total > 0, weight: 20, message: total > 0 ? `${total} images` : 'The project has no images' });
    if (project.project_type === 'classification') {
      const perClass = await this.db
        .selectFrom('classes')
        .leftJoin('annotations', (join) => join.onRef('annotations.class_id', '=', 'classes.id').on('annotations.annotation_type', '=', 'classification'))
        .select(['classes.name', (eb) => eb.fn.count<number>('annotations.image_id').distinct().as('n')])
        .where('classes.project_id', '=', projectId)
        .groupBy('classes.name')
        .execute();
      const short = perClass.filter((c) => Number(c.n) < MIN_IMAGES_PER_CLASS).map((c) => c.name);
      checks.push({ id: 'classes', passed: perClass.length >= 2, weight: 30, message: perClass.length >= 2 ? `${perClass.length} classes` : 'A classifier needs at least two classes' });
      checks.push({
        id: 'images_per_class',
        passed: perClass.length > 0 && short.length === 0,
        weight: 50,
        message: short.length === 0 ? `Every class has at least ${MIN_IMAGES_PER_CLASS} labelled images` : `Fewer than ${MIN_IMAGES_PER_CLASS} labelled images: ${short.slice(0, 10).join(', ')}`,
      });
    } else {
      const boxes = await this.db
        .selectFrom('annotations')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('project_id', '=', projectId)
        .where('annotation_type', 'in', ['bbox', 'polygon', 'mask'])
        .executeTakeFirstOrThrow();
      const boxCount = Number(boxes.n);
      checks.push({ id: 'has_boxes', passed: boxCount > 0, weight: 50, message: boxCount > 0 ? `${boxCount} boxes` : 'No image has a box, polygon or mask to learn from' });
      // Images without a split are split by each version's percentages, so enough of them can fill the valid split.
      const valid = count('valid') > 0 || count(null) >= 5;
      checks.push({ id: 'valid_split', passed: valid, weight: 30, message: valid ? 'Images to validate on' : 'The valid split is empty: assign images to it, or leave at least 5 unsplit for versions to split' });
    }
    const weights = checks.reduce((sum, c) => sum + c.weight, 0);
    const score = Math.round((100 * checks.filter((c) => c.passed).reduce((sum, c) => sum + c.weight, 0)) / weights);
    const blockers = checks.filter((c) => !c.passed && c.weight >= 30).map((c) => c.message);
    return { score, threshold, ready: score >= threshold, adapter: options.adapter ?? null, checks, blockers };
  }
}
