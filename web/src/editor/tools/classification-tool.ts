import type { Tool } from './tool.js';

/** Whole-image labels: the pointer draws nothing; a class key or a click in the class list toggles the class. */
export class ClassificationTool implements Tool {
  readonly name = 'classification';
  readonly followsCursor = false;

  down(): void {}

  reset(): void {}
}
