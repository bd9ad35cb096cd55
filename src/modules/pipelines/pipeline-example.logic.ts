import type { PipelineDefinition } from './pipelines.schemas.js';

/**
 * The protective-equipment check: every person must wear a helmet and a vest. Runs with any registered detector
 * whose classes include person, helmet and vest (the detect step picks it when no model is named).
 */
export function ppeExample(): PipelineDefinition {
  return {
    name: 'Protective equipment check',
    description: 'Select images, detect people, helmets and vests, flag every image where a person lacks a helmet or a vest for review, and report the violations per image.',
    steps: [
      { id: 'select', type: 'select_images', params: {} },
      { id: 'detect', type: 'detect', needs: ['select'], params: { classes: ['person', 'helmet', 'vest'], confidence: 0.25 } },
      {
        id: 'ppe_rule',
        type: 'rule',
        needs: ['detect'],
        params: { subject: 'person', requires: [{ class: 'helmet', min_overlap: 0.5 }, { class: 'vest', min_overlap: 0.5 }] },
      },
      { id: 'flag', type: 'flag_for_review', needs: ['ppe_rule'], params: { comment: 'Missing protective equipment', only_violations: true } },
      { id: 'report', type: 'report', needs: ['ppe_rule'], params: {} },
    ],
  };
}
