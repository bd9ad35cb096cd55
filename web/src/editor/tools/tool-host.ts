import type { AnnotationStore, Draft } from '../annotation-store.js';
import type { Shape } from '../renderer.js';

/** What the drawing tools need of the editor: the open image, the current class and a way to add a shape. */
export interface ToolHost {
  readonly image: { imageId: number; width: number; height: number } | null;
  readonly store: AnnotationStore | null;
  readonly projectId: number | null;
  /** Canvas pixels per image pixel. */
  readonly scale: number;
  readonly classId: number | null;
  readonly selectedKey: number | null;
  readonly brushSize: number;
  shape(key: number): Shape | undefined;
  colorOf(classId: number): string;
  /** Saves a new shape of the current class (or says that there is none). */
  createWithClass(data: Omit<Draft, 'class_id'>): void;
  /** Tells the annotator something on screen. */
  message(text: string): void;
  /** The tool's state changed: the toolbar reads it again and the canvas repaints. */
  changed(): void;
  requestPaint(): void;
}
