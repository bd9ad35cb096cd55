/** shapes-quality: the new project types' readiness rule and the shapes each project type expects. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PROJECT_TYPES, PROJECT_TYPE_SHAPES } from '../../src/lib/vocabulary.js';
import { PROJECT_TYPES as SCHEMA_TYPES } from '../../src/modules/projects/projects.schemas.js';
import { evaluateReadiness, TASK_OF_PROJECT, type ReadinessStats } from '../../src/modules/readiness/readiness-rules.logic.js';
import { ADAPTERS } from '../../src/training/adapters.js';

const stats = (types: Record<string, number>, extra: Partial<ReadinessStats> = {}): ReadinessStats => ({
  images: 20,
  splits: { train: 14, valid: 4, test: 2, unassigned: 0 },
  annotatedImages: 20,
  annotationTypes: types,
  classes: [{ name: 'person', instances: { train: 30, valid: 8 }, images: { train: 14, valid: 4 }, totalInstances: 38, totalImages: 18 }],
  ...extra,
});

describe('shapes-quality: project types', () => {
  it('shapes-quality: keypoint and oriented detection are project types, each with the shapes it expects', () => {
    assert.deepEqual([...SCHEMA_TYPES], [...PROJECT_TYPES]);
    assert.deepEqual(PROJECT_TYPE_SHAPES.keypoint_detection, ['keypoints']);
    assert.deepEqual(PROJECT_TYPE_SHAPES.oriented_detection, ['bbox']);
    for (const type of PROJECT_TYPES) assert.ok(TASK_OF_PROJECT[type], `${type} has a readiness task`);
  });

  it('shapes-quality: no adapter claims to train keypoint or oriented detection', () => {
    for (const adapter of ADAPTERS) {
      assert.ok(!adapter.tasks.includes('keypoint_detection') && !adapter.tasks.includes('oriented_detection'), adapter.name);
    }
  });

  it('shapes-quality: a well-labelled keypoint project is still blocked: no trainer for keypoint_detection yet', () => {
    const out = evaluateReadiness('keypoints', 'none', stats({ keypoints: 38 }));
    assert.equal(out.ready, false);
    assert.ok(out.blockers.some((b) => b.includes('No trainer for keypoint_detection yet')), JSON.stringify(out.blockers));
    assert.equal(out.checks.find((c) => c.id === 'has_keypoints')?.passed, true);
  });

  it('shapes-quality: keypoints need keypoint annotations and a skeleton class; oriented detection needs boxes', () => {
    const none = evaluateReadiness('keypoints', 'none', stats({ bbox: 38 }));
    assert.equal(none.checks.find((c) => c.id === 'has_keypoints')?.passed, false);
    const orphans = evaluateReadiness('keypoints', 'none', stats({ keypoints: 38 }, { keypointsWithoutSkeleton: 3 }));
    assert.ok(orphans.blockers.some((b) => b.includes('without a skeleton')), JSON.stringify(orphans.blockers));
    const oriented = evaluateReadiness('oriented', 'none', stats({ bbox: 38 }));
    assert.ok(oriented.blockers.some((b) => b.includes('No trainer for oriented_detection yet')));
    assert.equal(oriented.checks.find((c) => c.id === 'has_boxes')?.passed, true);
  });
});
