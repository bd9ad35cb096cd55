/** The profile's attribute and keypoint sections summed over image parts. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { emptyImagesPart, type ImagesPart } from '../../src/modules/profile/profile.repository.js';
import { attributeProfile, keypointProfile } from '../../src/modules/profile/shape-profile.logic.js';

const part = (extra: Partial<ImagesPart>): ImagesPart => ({ ...emptyImagesPart(), ...extra });
const classes = [
  { id: 1, name: 'car', skeleton: null, attributes: JSON.stringify([{ name: 'speed', type: 'number' }, { name: 'plate', type: 'text' }]) },
  { id: 2, name: 'person', skeleton: JSON.stringify({ points: ['head', 'foot'], edges: [], flip_pairs: [] }), attributes: null },
];

describe('profile of attributes and keypoints', () => {
  it('sums values over parts; a part that kept only its most frequent values makes distinct a lower bound', () => {
    const parts = [
      part({ attributes: [[1, 'plate', '"AB"', 3], [1, 'plate', null, 5], [1, 'speed', '10', 1]] }),
      part({ attributes: [[1, 'plate', '"AB"', 1], [1, 'plate', '"CD"', 2], [1, 'speed', '30', 3], [2, 'tired', 'true', 4]] }),
    ];
    const [speed, plate, tired] = attributeProfile(classes, parts);
    assert.deepEqual(speed, { class_id: 1, class: 'car', name: 'speed', type: 'number', annotations: 4, distinct: 2, distinct_capped: false, min: 10, max: 30, mean: 25 });
    assert.deepEqual(plate, { class_id: 1, class: 'car', name: 'plate', type: 'text', annotations: 11, distinct: 2, distinct_capped: true, top_values: [{ value: 'AB', annotations: 4 }, { value: 'CD', annotations: 2 }] });
    assert.deepEqual(tired, { class_id: 2, class: 'person', name: 'tired', type: 'checkbox', annotations: 4, distinct: 1, distinct_capped: false, values: { true: 4 } }, 'values no spec declares any more are typed by what they are');
  });

  it('counts each skeleton point by visibility, named by the skeleton', () => {
    const parts = [part({ keypoints: [[2, 0, 2, 3], [2, 1, 0, 2], [2, 1, 1, 1]] }), part({ keypoints: [[2, 0, 2, 1], [2, 1, 2, 1]] })];
    assert.deepEqual(keypointProfile(classes, parts), [
      { class_id: 2, class: 'person', instances: 4, points: [{ point: 'head', not_labelled: 0, occluded: 0, visible: 4 }, { point: 'foot', not_labelled: 2, occluded: 1, visible: 1 }] },
    ]);
  });
});
