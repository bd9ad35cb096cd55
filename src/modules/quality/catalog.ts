/** The image modality's entries, registered once; other modalities register theirs beside them. */
import { ANNOTATION_CHECKS } from './annotation-checks.js';
import { registerChecks } from './check-catalog.js';
import { IMAGE_CHECKS } from './image-checks.js';
import { MODEL_CHECKS } from './model-checks.js';

registerChecks('image', [...IMAGE_CHECKS, ...ANNOTATION_CHECKS, ...MODEL_CHECKS]);

export { checkCatalog, checksOf, registerChecks } from './check-catalog.js';
