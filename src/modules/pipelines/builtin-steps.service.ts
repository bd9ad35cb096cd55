import type { JsonSchema, Plugin } from '../../plugins/plugin-registry.js';
import { VERSION } from '../../version.js';
import { detectStep, samStep } from './detector-steps.service.js';
import { filterDetectionsStep, ruleStep } from './filter-steps.logic.js';
import { cleaningStep, createVersionStep, exportStep, qualityStep, trainStep } from './project-steps.service.js';
import { reportStep, webhookStep } from './report-steps.service.js';
import { selectImagesStep } from './source-steps.service.js';
import type { StepEnvironment } from './step-kit.logic.js';
import { flagForReviewStep, writeAnnotationsStep } from './write-steps.service.js';

export type { StepEnvironment } from './step-kit.logic.js';

/**
 * The built-in pipeline step types, as `pipeline_step` plugins, in the order they are listed. Each family lives in
 * its own file: sources (source-steps), detectors (detector-steps), filters and rules (filter-steps), writes
 * (write-steps), summaries and webhooks (report-steps), and the steps that call other modules (project-steps).
 */
export function builtinSteps(env: StepEnvironment): Plugin[] {
  const specs = [
    selectImagesStep(env),
    detectStep(env),
    samStep(env),
    filterDetectionsStep(),
    ruleStep(),
    writeAnnotationsStep(env),
    flagForReviewStep(env),
    reportStep(),
    createVersionStep(env),
    exportStep(env),
    webhookStep(env),
    qualityStep(env),
    cleaningStep(env),
    trainStep(env),
  ];
  return specs.map((s) => ({
    type: 'pipeline_step' as const,
    name: s.name,
    title: s.title,
    description: s.description,
    version: VERSION,
    builtin: true,
    config_schema: structuredClone(s.schema) as unknown as JsonSchema,
    step: s.impl,
  }));
}
