import type { Annotation, Skeleton } from '../../types.js';
import type { AnnotationStore, Draft } from '../annotation-store.js';
import type { Point } from '../geometry.js';
import type { MaskEdit, Moving, Shape } from '../renderer.js';

// The contract between the editor controller and its tools: the controller keeps the image, the view (pan, zoom),
// read-only mode and the keys, and dispatches pointer input to the active tool through `Tool`; a tool reaches back
// into the editor only through `ToolHost`. Each tool is one file in this folder.

/** The editor's tools, as the toolbar, the keys and the page name them. */
export type ToolName = 'select' | 'box' | 'polygon' | 'brush' | 'eraser' | 'classification' | 'sam' | 'keypoints' | 'polyline' | 'points' | 'ellipse';

/** A pointer event on the canvas: the point in image pixels, the point on screen, and the button. */
export interface ToolPointer {
  x: number;
  y: number;
  sx: number;
  sy: number;
  button: number;
}

/** What the scene draws directly (instead of its cached layer) while a tool edits a shape in place. */
export interface ToolPreview {
  moving: Moving | null;
  maskEdit: MaskEdit | null;
}

/**
 * One way of editing the open image. A press on the image goes to the active tool; the moves and the release that
 * follow go to the tool that was pressed (a key may switch tools mid-drag).
 */
export interface Tool {
  readonly name: ToolName;
  /** The draft follows the cursor (a polygon's next edge, the brush outline): a hover repaints. */
  readonly followsCursor: boolean;
  down(p: ToolPointer): void;
  move?(p: ToolPointer): void;
  up?(p: ToolPointer): void;
  /** Double click. */
  doubleClick?(): void;
  /** Enter: finishes the shape in progress. */
  commit?(): void;
  /** Backspace: takes back the last step of the shape in progress; false when there is none. */
  stepBack?(): boolean;
  /** Drops whatever is in progress. */
  reset(): void;
  /** A key the tool gives a meaning to while it is active (a skeleton's "skip this point"); true when it took it. */
  key?(key: string): boolean;
  /** A line the editor shows while the tool is active (what the next click does). */
  hint?(): string | null;
  /** Non-null while the scene must be drawn live (a shape moved, a handle dragged, a mask painted). */
  preview?(): ToolPreview | null;
  /** Draws the shape in progress; `s` is canvas pixels per image pixel, `color` the current class's. */
  paintDraft?(ctx: CanvasRenderingContext2D, s: number, color: string, cursor: Point): void;
}

/** What the tools need of the editor: the open image and its shapes, the current class, a way to add a shape. */
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
  /** The topmost shape under an image point that the pointer may touch. */
  shapeAt(x: number, y: number): number | null;
  /** Every shape under an image point that the pointer may touch, smallest first. */
  shapesAt(x: number, y: number): number[];
  /** What a click selects there: the smallest shape, or the one after the selected one (repeated clicks cycle). */
  nextShapeAt(x: number, y: number): number | null;
  /** Selects a shape by its store key (null clears the selection). */
  selectKey(key: number | null): void;
  /** Shows a shape changed in place while it is dragged, without saving it. */
  previewShape(key: number, ann: Annotation): void;
  colorOf(classId: number): string;
  /** The keypoint skeleton of a class (null: it has none). */
  skeletonOf(classId: number): Skeleton | null;
  /** The point of the selected skeleton the visibility key acts on. */
  setActivePoint(index: number | null): void;
  /** Saves a new shape of the current class and returns its store key (null: there is no class, and it says so). */
  createWithClass(data: Omit<Draft, 'class_id'>): number | null;
  /** Tells the annotator something on screen. */
  message(text: string): void;
  /** The tool's state changed: the toolbar reads it again and the canvas repaints. */
  changed(): void;
  requestPaint(): void;
}
