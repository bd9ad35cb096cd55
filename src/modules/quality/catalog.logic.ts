/** Each modality's entries, registered once: the images', then the sample modalities' beside them. */
import { ANNOTATION_CHECKS } from './annotation-checks.logic.js';
import { registerChecks } from './check-catalog.logic.js';
import { IMAGE_CHECKS } from './image-checks.logic.js';
import { MODEL_CHECKS } from './model-checks.logic.js';
import { SAMPLE_CHECKS } from './sample-checks.logic.js';
import { SHAPE_CHECKS } from './shape-checks.logic.js';

registerChecks('image', [...IMAGE_CHECKS, ...ANNOTATION_CHECKS, ...SHAPE_CHECKS, ...MODEL_CHECKS]);
for (const [modality, checks] of SAMPLE_CHECKS) registerChecks(modality, checks);

export { checkCatalog, checksOf, registerChecks } from './check-catalog.logic.js';
