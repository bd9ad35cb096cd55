import { displayColors } from './palette.js';
import type { Annotation, AttributeValues, BboxGeometry, EllipseGeometry, KeypointsGeometry, LabelClass, MaskGeometry, Skeleton } from '../types.js';
import { AnnotationStore, type Draft, type TaskDraft } from './annotation-store.js';
import { boundsOf, hits, normalizeDegrees, type Point } from './geometry.js';
import { decodeRle, maskBounds, paintMask, type Bitmap } from './mask.js';
import { drawMinimapBase, drawScene, LayerCache, paintMinimapView, paintPointNames, paintSelection, type Moving, type Scene, type Shape } from './renderer.js';
import { BoxTool } from './tools/box-tool.js';
import { BrushTool } from './tools/brush-tool.js';
import { ClassificationTool } from './tools/classification-tool.js';
import { EllipseTool } from './tools/ellipse-tool.js';
import { KeypointsTool } from './tools/keypoints-tool.js';
import { PathTool } from './tools/path-tool.js';
import { PolygonTool } from './tools/polygon-tool.js';
import { SamTool } from './tools/sam-tool.js';
import { SelectTool } from './tools/select-tool.js';
import type { Tool, ToolHost, ToolName, ToolPointer, ToolPreview } from './tools/tool.js';
import { GridIndex, type Rect } from './spatial-index.js';
import { ViewTransform } from './view-transform.js';

export type { ToolName } from './tools/tool.js';

export interface LoadedImage {
  imageId: number;
  width: number;
  height: number;
  /** The full-resolution pixels (an ImageBitmap for large images, kept decoded so zoomed-in frames never re-decode). */
  source: HTMLImageElement | ImageBitmap;
  /** A downscaled copy drawn when zoomed out, so huge images stay cheap to paint. */
  preview: HTMLCanvasElement | ImageBitmap | null;
  annotations: Annotation[];
  /** The frame number when the image is a video's frame (its track shapes are edited as keyframes there). */
  frame?: number | null;
  /** Saves the whole shape list at once (a quality-control task's version); absent: annotation by annotation. */
  save?: (shapes: TaskDraft[]) => Promise<void>;
}

export interface EditorState {
  tool: ToolName;
  classId: number | null;
  selectedKey: number | null;
  selected: Annotation | null;
  zoom: number;
  brushSize: number;
  /** Shapes on the image that count (accepted), and the suggestions waiting for a decision (they count once accepted). */
  count: number;
  suggestions: number;
  canUndo: boolean;
  canRedo: boolean;
  classifications: number[];
  sam: { points: number; busy: boolean; score: number | null; hasMask: boolean };
  /** Another user holds the image's lock (or the role cannot edit): look, select, pan and zoom only. */
  readOnly: boolean;
  /** What the active tool's next click does (null: nothing to say). */
  hint: string | null;
  /** The point of the selected skeleton the visibility key (X) acts on. */
  activePoint: number | null;
}

/** While a video plays, the minimap's picture follows the frames at most this often (a frame is 33–40 ms). */
const MINIMAP_PLAYING_MS = 500;

/**
 * The canvas editor: the image and its shapes, hit testing, selection, pan and zoom, read-only mode and the commands
 * of the toolbar and keys. Pointer input on the image is dispatched to the active `Tool` (tools/, one file each); the
 * view transform lives in view-transform.ts, drawing in renderer.ts.
 */
export class EditorController implements ToolHost {
  private ctx: CanvasRenderingContext2D;
  image: LoadedImage | null = null;
  store: AnnotationStore | null = null;
  private shapes = new Map<number, Shape>();
  private index = new GridIndex(1, 1);
  /** Image pixels → canvas pixels (src: view-transform.ts); `scale`, `tx`, `ty` below read and write it. */
  readonly view = new ViewTransform();
  classId: number | null = null;
  selectedKey: number | null = null;
  brushSize = 12;
  private classes = new Map<number, LabelClass>();
  /** A pan in progress (middle button, or space and drag): works whatever the tool. */
  private pan: { sx: number; sy: number; tx: number; ty: number } | null = null;
  private cursor: Point = [0, 0];
  private spaceDown = false;
  private frame = 0;
  private visible: number[] = [];
  /** Milliseconds the last full paint took; read by the benchmark. */
  lastPaintMs = 0;
  /** Set by the page; SAM requests need it. */
  projectId: number | null = null;
  /** Classification: several classes per image (a class key toggles one), or one (a class key replaces it). */
  multiLabel = false;
  private readonly samTool = new SamTool(this);
  private readonly tools: Record<ToolName, Tool> = {
    select: new SelectTool(this),
    box: new BoxTool(this),
    polygon: new PolygonTool(this),
    brush: new BrushTool(this, 'brush'),
    eraser: new BrushTool(this, 'eraser'),
    classification: new ClassificationTool(),
    sam: this.samTool,
    keypoints: new KeypointsTool(this),
    polyline: new PathTool(this, 'polyline'),
    points: new PathTool(this, 'points'),
    ellipse: new EllipseTool(this),
  };
  /** The point of the selected skeleton that X toggles (the last one dragged or chosen). */
  activePoint: number | null = null;
  /** The skeleton under the pointer: its point names are shown. */
  private hoveredSkeleton: number | null = null;
  /** The tool new presses go to. */
  private active: Tool = this.tools.box;
  /** The tool that took the press in progress: its moves and release go to it. */
  private pressed: Tool | null = null;
  /** Why edits are refused right now (null: they are not). */
  private readOnlyReason: string | null = null;

  constructor(
    readonly canvas: HTMLCanvasElement,
    readonly minimap: HTMLCanvasElement | null,
    private readonly onState: (s: EditorState) => void,
    private readonly onMessage: (m: string) => void,
  ) {
    this.ctx = canvas.getContext('2d')!;
    canvas.addEventListener('pointerdown', this.onPointerDown);
    window.addEventListener('pointermove', this.onPointerMove);
    window.addEventListener('pointerup', this.onPointerUp);
    canvas.addEventListener('wheel', this.onWheel, { passive: false });
    canvas.addEventListener('contextmenu', (e) => e.preventDefault());
    canvas.addEventListener('dblclick', () => this.active.doubleClick?.());
    minimap?.addEventListener('pointerdown', this.onMinimap);
  }

  get tool(): ToolName {
    return this.active.name;
  }

  get scale(): number {
    return this.view.scale;
  }
  set scale(value: number) {
    this.view.scale = value;
  }
  get tx(): number {
    return this.view.tx;
  }
  set tx(value: number) {
    this.view.tx = value;
  }
  get ty(): number {
    return this.view.ty;
  }
  set ty(value: number) {
    this.view.ty = value;
  }

  destroy(): void {
    window.removeEventListener('pointermove', this.onPointerMove);
    window.removeEventListener('pointerup', this.onPointerUp);
    cancelAnimationFrame(this.frame);
  }

  setClasses(classes: LabelClass[]): void {
    this.classes = new Map(classes.map((c) => [c.id, c]));
    // Every class drawn in a colour of its own (older projects repeated palette colours).
    this.drawColors = displayColors(classes);
    if (this.classId === null || !this.classes.has(this.classId)) this.classId = classes[0]?.id ?? null;
    for (const s of this.shapes.values()) if (s.bitmap) s.maskCanvas = undefined;
    this.version++;
    this.emit();
    this.requestPaint();
  }

  private drawColors = new Map<number, string>();

  colorOf(classId: number): string {
    return this.drawColors.get(classId) ?? this.classes.get(classId)?.color ?? '#ff00ff';
  }

  // ---- image and annotations ----

  show(image: LoadedImage): void {
    this.image = image;
    this.version++;
    this.layers.reset();
    this.store = new AnnotationStore(image.imageId, image.annotations, {
      changed: (key, ann) => this.onChanged(key, ann),
      refused: (m) => this.onMessage(`Change not saved: ${m}`),
      trackChanged: (trackId) => this.onTrackChanged?.(trackId),
    }, image.frame ?? null, image.save);
    this.shapes.clear();
    this.index = new GridIndex(image.width, image.height);
    for (const [key, ann] of this.store.items) this.addShape(key, ann);
    this.selectedKey = null;
    this.activePoint = null;
    this.hoveredSkeleton = null;
    this.hidden.clear();
    this.locked.clear();
    for (const [key, s] of this.shapes) {
      if (s.ann.track_id == null) continue;
      if (this.hiddenTracks.has(s.ann.track_id)) this.hidden.add(key);
      if (this.lockedTracks.has(s.ann.track_id)) this.locked.add(key);
    }
    this.dropDrafts();
    this.fit();
    this.emit();
  }

  private addShape(key: number, ann: Annotation): void {
    if (ann.annotation_type === 'classification') {
      this.shapes.set(key, { ann, bounds: { x: 0, y: 0, width: 0, height: 0 } });
      return;
    }
    let bitmap: Bitmap | undefined;
    let bounds = boundsOf(ann);
    if (ann.annotation_type === 'mask') {
      bitmap = decodeRle((ann.geometry as MaskGeometry).rle);
      bounds = bounds ?? maskBounds(bitmap);
    }
    if (!bounds) return;
    this.shapes.set(key, { ann, bounds, bitmap });
    this.index.insert(key, bounds);
  }

  private onChanged(key: number, ann: Annotation | null): void {
    this.version++;
    this.index.remove(key);
    this.shapes.delete(key);
    if (ann) this.addShape(key, ann);
    else if (this.selectedKey === key) this.selectedKey = null;
    this.emit();
    this.requestPaint();
  }

  state(): EditorState {
    const selected = this.selectedKey !== null ? (this.shapes.get(this.selectedKey)?.ann ?? null) : null;
    const classifications = [...this.shapes.values()].filter((s) => s.ann.annotation_type === 'classification').map((s) => s.ann.class_id);
    let suggestions = 0;
    for (const s of this.shapes.values()) if (s.ann.status === 'suggested') suggestions++;
    return {
      tool: this.tool,
      classId: this.classId,
      selectedKey: this.selectedKey,
      selected,
      zoom: this.scale,
      brushSize: this.brushSize,
      count: this.shapes.size - suggestions,
      suggestions,
      canUndo: this.store?.canUndo ?? false,
      canRedo: this.store?.canRedo ?? false,
      classifications,
      sam: this.samTool.summary(),
      readOnly: this.readOnlyReason !== null,
      hint: this.active.hint?.() ?? null,
      activePoint: this.activePoint,
    };
  }

  private emit(): void {
    this.onState(this.state());
  }

  // ---- commands (toolbar and keyboard) ----

  /** Turns editing off (with the reason shown when someone tries) or back on. Drawing in progress is dropped. */
  setReadOnly(reason: string | null): void {
    if (reason === this.readOnlyReason) return;
    this.readOnlyReason = reason;
    if (reason !== null) this.dropDrafts();
    this.emit();
    this.requestPaint();
  }

  /** True (after saying why) when edits are refused. */
  private blocked(): boolean {
    if (this.readOnlyReason === null) return false;
    this.onMessage(this.readOnlyReason);
    return true;
  }

  /** Shapes hidden from the canvas, and shapes locked against pointer edits (objects list; per image, not saved). */
  readonly hidden = new Set<number>();
  readonly locked = new Set<number>();
  /** Tracks hidden or locked in the timeline: kept from frame to frame (not saved). */
  readonly hiddenTracks = new Set<number>();
  readonly lockedTracks = new Set<number>();
  /** Told when an edit on this frame changed a track (its other frames' shapes changed with it). */
  onTrackChanged: ((trackId: number) => void) | null = null;
  /** What the last scene drew: classes stroked solid and dashed (the browser test and bench read it). */
  drawn = { solid: 0, dashed: 0, suggested: 0 };

  /** Hides or shows a track's shape on this and every other frame. */
  setTrackHidden(trackId: number, hidden: boolean): void {
    this.trackFlag(this.hiddenTracks, this.hidden, trackId, hidden);
    this.version++;
    this.emit();
    this.requestPaint();
  }

  /** Locks a track's shape against edits on this and every other frame, or unlocks it. */
  setTrackLocked(trackId: number, locked: boolean): void {
    this.trackFlag(this.lockedTracks, this.locked, trackId, locked);
    this.emit();
  }

  private trackFlag(tracks: Set<number>, keys: Set<number>, trackId: number, on: boolean): void {
    if (on) tracks.add(trackId);
    else tracks.delete(trackId);
    for (const [key, s] of this.shapes) {
      if (s.ann.track_id !== trackId) continue;
      if (on) keys.add(key);
      else keys.delete(key);
      if (on && keys === this.hidden && this.selectedKey === key) this.selectedKey = null;
    }
  }

  /** The store key of a track's shape on this frame. */
  keyOfTrack(trackId: number): number | null {
    for (const [key, s] of this.shapes) if (s.ann.track_id === trackId) return key;
    return null;
  }

  /** Selects a shape by its store key (the objects list); null clears the selection. */
  selectKey(key: number | null): void {
    const next = key !== null && this.shapes.has(key) ? key : null;
    if (next !== this.selectedKey) this.activePoint = null;
    this.selectedKey = next;
    this.emit();
    this.requestPaint();
  }

  toggleHidden(key: number): void {
    if (this.hidden.has(key)) this.hidden.delete(key);
    else {
      this.hidden.add(key);
      if (this.selectedKey === key) this.selectedKey = null;
    }
    this.version++;
    this.emit();
    this.requestPaint();
  }

  toggleLocked(key: number): void {
    if (this.locked.has(key)) this.locked.delete(key);
    else this.locked.add(key);
    this.emit();
  }

  /**
   * Moves one shape to a class: an explicit, undoable edit, said on screen. The shape keeps where it came from (a
   * model's box stays the model's); a suggestion moved to a class is accepted as that class, as a class key does.
   */
  changeClass(key: number, classId: number): void {
    const s = this.shapes.get(key);
    if (!s || !this.store || this.blocked()) return;
    if (s.ann.class_id === classId && s.ann.status !== 'suggested') return;
    if (this.locked.has(key)) return this.onMessage('The shape is locked: unlock it in the objects list first');
    const from = this.classes.get(s.ann.class_id)?.name ?? `class ${s.ann.class_id}`;
    const to = this.classes.get(classId)?.name ?? `class ${classId}`;
    const a = s.ann;
    this.store.update(key, { class_id: classId, annotation_type: a.annotation_type, geometry: this.sendable(a), source: a.source, confidence: a.confidence, status: 'accepted' });
    this.onMessage(a.status === 'suggested' ? `Accepted as ${to} (Ctrl+Z undoes)` : `Class changed: ${from} → ${to} (Ctrl+Z undoes)`);
  }

  /** Deletes one shape by key (the objects list). */
  deleteKey(key: number): void {
    if (!this.store || this.blocked() || !this.shapes.has(key)) return;
    if (this.locked.has(key)) return this.onMessage('The shape is locked: unlock it in the objects list first');
    this.store.delete(key);
    if (this.selectedKey === key) this.selectedKey = null;
    this.emit();
  }

  /** Selects the annotation with this server id, if the open image has it. */
  selectAnnotation(id: number): void {
    for (const [key, ann] of this.store?.items ?? []) {
      if (ann.id === id) {
        this.selectedKey = key;
        this.emit();
        this.requestPaint();
        return;
      }
    }
  }

  skeletonOf(classId: number): Skeleton | null {
    return this.classes.get(classId)?.skeleton ?? null;
  }

  attributeSpecsOf(classId: number): LabelClass['attributes'] {
    return this.classes.get(classId)?.attributes ?? [];
  }

  setActivePoint(index: number | null): void {
    this.activePoint = index;
    this.emit();
    this.requestPaint();
  }

  /**
   * A key for the active tool or the selected shape: the tool's own keys first (a skeleton's 0 and X while it is
   * placed); then X cycles the visibility of the selected skeleton's active point (2 → 1 → 0), R / Shift+R turn the
   * selected box or ellipse by 5°, Shift+P starts a new part of the selected polygon, Shift+H a hole in it. False
   * when the key means none of these.
   */
  shapeKey(key: string): boolean {
    if (this.readOnlyReason === null && this.active.key?.(key)) return true;
    const key0 = this.selectedKey;
    const sel = key0 !== null ? this.shapes.get(key0) : undefined;
    if (!sel || !this.store) return false;
    const type = sel.ann.annotation_type;
    if ((key === 'x' || key === 'X') && type === 'keypoints') {
      if (this.blocked()) return true;
      const g = sel.ann.geometry as KeypointsGeometry;
      const i = this.activePoint ?? g.points.findIndex((p) => p[2] > 0);
      if (i < 0 || !g.points[i]) return true;
      this.activePoint = i;
      const [x, y, v] = g.points[i];
      if (v === 0) {
        this.onMessage('That point is not labelled: drag it or place the skeleton again');
        return true;
      }
      const points = g.points.slice();
      // Not labelled is stored as [0, 0, 0]: the point's place is dropped with it (Ctrl+Z brings it back).
      points[i] = v === 2 ? [x, y, 1] : [0, 0, 0];
      this.store.update(key0!, { class_id: sel.ann.class_id, annotation_type: 'keypoints', geometry: { ...g, points } });
      const name = this.skeletonOf(sel.ann.class_id)?.points[i] ?? `point ${i + 1}`;
      this.onMessage(`${name}: ${v === 2 ? 'occluded' : 'not labelled'} (Ctrl+Z undoes)`);
      this.emit();
      return true;
    }
    if ((key === 'r' || key === 'R') && (type === 'bbox' || type === 'ellipse')) {
      if (this.blocked()) return true;
      const g = sel.ann.geometry as BboxGeometry | EllipseGeometry;
      const rotation = normalizeDegrees((g.rotation ?? 0) + (key === 'r' ? 5 : -5));
      this.store.update(key0!, { class_id: sel.ann.class_id, annotation_type: type, geometry: { ...g, rotation } });
      return true;
    }
    if ((key === 'P' || key === 'H') && type === 'polygon') {
      if (this.blocked()) return true;
      const tool = this.tools.polygon as PolygonTool;
      this.setTool('polygon');
      tool.addTo = { key: key0!, as: key === 'P' ? 'part' : 'hole' };
      this.onMessage(key === 'P' ? 'Draw the new part: click its points, Enter adds it to the selected object' : 'Draw the hole inside the selected object: click its points, Enter cuts it');
      this.emit();
      return true;
    }
    return false;
  }

  /** Sets the attribute values of one shape: an undoable edit, saved with the shape. */
  setAttributes(key: number, attributes: AttributeValues): void {
    const s = this.shapes.get(key);
    if (!s || !this.store || this.blocked()) return;
    const a = s.ann;
    this.store.update(key, { class_id: a.class_id, annotation_type: a.annotation_type, geometry: this.sendable(a), source: a.source, confidence: a.confidence, status: a.status, attributes });
  }

  setTool(tool: ToolName): void {
    // A drag in progress ends with the tool that began it; whatever else the old tool had started is dropped.
    if (this.active !== this.pressed) this.active.reset();
    this.active = this.tools[tool];
    this.emit();
    this.requestPaint();
  }

  /**
   * Picks the class for new shapes; with a shape selected, moves that shape to the class. A selected suggestion is
   * accepted as that class and the next open suggestion is selected (the last one stays selected): one key per box.
   */
  pickClass(classId: number): void {
    this.classId = classId;
    const selected = this.selectedKey !== null ? this.shapes.get(this.selectedKey) : undefined;
    if (this.tool === 'classification') this.toggleClassification(classId);
    else if (selected?.ann.status === 'suggested' && this.store && !this.blocked()) {
      const ann = selected.ann;
      this.store.update(this.selectedKey!, { class_id: classId, annotation_type: ann.annotation_type, geometry: this.sendable(ann), source: ann.source, confidence: ann.confidence, status: 'accepted' });
      this.onMessage(`Accepted as ${this.classes.get(classId)?.name ?? `class ${classId}`} (Ctrl+Z undoes)`);
      this.selectNextSuggestion(true);
    } else if (selected && selected.ann.class_id !== classId && this.locked.has(this.selectedKey!)) {
      this.onMessage('The shape is locked: unlock it in the objects list first');
    } else if (selected && selected.ann.class_id !== classId && this.store && !this.blocked()) {
      // An explicit change of the selected shape's class: said on screen, and undoable like any edit.
      const from = this.classes.get(selected.ann.class_id)?.name ?? `class ${selected.ann.class_id}`;
      const to = this.classes.get(classId)?.name ?? `class ${classId}`;
      const a = selected.ann;
      this.store.update(this.selectedKey!, { class_id: classId, annotation_type: a.annotation_type, geometry: this.sendable(a), source: a.source, confidence: a.confidence, status: a.status });
      this.onMessage(`Class changed: ${from} → ${to} (Ctrl+Z undoes)`);
    }
    this.emit();
  }

  /**
   * Accepts (or rejects) the selected suggestion, then selects the next one, so a run of predictions is reviewed
   * with two keys. Both are edits of the store: undo and redo cover them (an undone accept is a suggestion again).
   */
  decideSelected(accept: boolean): void {
    const key = this.selectedKey;
    const s = key !== null ? this.shapes.get(key) : undefined;
    if (!s || !this.store || this.blocked()) return;
    if (s.ann.status !== 'suggested') {
      this.onMessage('The selected shape is not a suggestion');
      return;
    }
    if (accept) this.store.update(key!, { class_id: s.ann.class_id, annotation_type: s.ann.annotation_type, geometry: this.sendable(s.ann), source: s.ann.source, confidence: s.ann.confidence, status: 'accepted' });
    else this.store.delete(key!);
    this.selectNextSuggestion();
  }

  /** Accepts or rejects every open suggestion of the image (each an undoable edit). */
  decideAll(accept: boolean): number {
    if (!this.store || this.blocked()) return 0;
    let n = 0;
    for (const [key, s] of [...this.shapes]) {
      if (s.ann.status !== 'suggested') continue;
      if (accept) this.store.update(key, { class_id: s.ann.class_id, annotation_type: s.ann.annotation_type, geometry: this.sendable(s.ann), source: s.ann.source, confidence: s.ann.confidence, status: 'accepted' });
      else this.store.delete(key);
      n++;
    }
    this.selectedKey = null;
    this.onMessage(`${n} suggestion${n === 1 ? '' : 's'} ${accept ? 'accepted' : 'rejected'} (Ctrl+Z undoes)`);
    this.emit();
    this.requestPaint();
    return n;
  }

  /**
   * Selects the next open suggestion after the selected shape (Tab), wrapping around; with none left open, the
   * selection is cleared, or kept when `stay`. The least confident come first: the doubtful ones are decided one by
   * one, and once every one left looks right, Shift+Y accepts them together.
   */
  selectNextSuggestion(stay = false): void {
    const open = [...this.shapes].filter(([, s]) => s.ann.status === 'suggested');
    const keys = open.sort(([a, x], [b, y]) => (x.ann.confidence ?? 1) - (y.ann.confidence ?? 1) || a - b).map(([k]) => k);
    const at = this.selectedKey === null ? -1 : keys.indexOf(this.selectedKey);
    const next = keys[at + 1] ?? keys[0] ?? null;
    if (next !== null || !stay) this.selectedKey = next;
    this.emit();
    this.requestPaint();
  }

  /**
   * A class key on a classification project: in multi-label it toggles the class; in single-label it replaces the
   * image's class (one undoable edit; classes left from a multi-label past are removed with it).
   */
  toggleClassification(classId: number): void {
    if (!this.store || this.blocked()) return;
    const labels = [...this.shapes].filter(([, s]) => s.ann.annotation_type === 'classification');
    const same = labels.find(([, s]) => s.ann.class_id === classId);
    if (this.multiLabel) {
      if (same) this.store.delete(same[0]);
      else this.store.create({ class_id: classId, annotation_type: 'classification', geometry: {} });
      return;
    }
    const name = this.classes.get(classId)?.name ?? `class ${classId}`;
    if (same && labels.length === 1) return this.onMessage(`Already ${name}`);
    const [keep, ...rest] = same ? [same, ...labels.filter((l) => l !== same)] : labels;
    for (const [key] of rest) this.store.delete(key);
    if (keep) this.store.update(keep[0], { class_id: classId, annotation_type: 'classification', geometry: {}, source: keep[1].ann.source, confidence: keep[1].ann.confidence, status: 'accepted' });
    else this.store.create({ class_id: classId, annotation_type: 'classification', geometry: {} });
    if (labels.length > 0) this.onMessage(`Class set to ${name} (Ctrl+Z undoes)`);
  }

  /** Deletes the selected shape; a deleted suggestion (a false positive) moves the selection to the next one. */
  deleteSelected(): void {
    if (this.selectedKey === null || !this.store || this.blocked()) return;
    const wasSuggestion = this.shapes.get(this.selectedKey)?.ann.status === 'suggested';
    this.store.delete(this.selectedKey);
    if (wasSuggestion) return this.selectNextSuggestion();
    this.selectedKey = null;
    this.emit();
  }

  undo(): void {
    if (this.blocked()) return;
    this.store?.undo();
    this.emit();
  }

  redo(): void {
    if (this.blocked()) return;
    this.store?.redo();
    this.emit();
  }

  setBrushSize(size: number): void {
    this.brushSize = Math.max(1, Math.min(200, Math.round(size)));
    this.emit();
    this.requestPaint();
  }

  cancel(): void {
    this.dropDrafts();
    this.selectedKey = null;
    this.emit();
    this.requestPaint();
  }

  /** The geometry as the API takes it (a mask's computed bbox is the server's to fill in). */
  private sendable(ann: Annotation): Annotation['geometry'] {
    if (ann.annotation_type === 'mask') return { rle: (ann.geometry as MaskGeometry).rle };
    return ann.geometry;
  }

  /**
   * Saves a drawn shape. It is not left selected: the next class key chooses the class of the next shape ("pick a
   * label, then draw") instead of silently relabelling this one; click a shape to select it and change its class.
   */
  private newShape(data: Draft): number | null {
    if (!this.store) return null;
    const { key } = this.store.create(data);
    this.selectedKey = null;
    this.emit();
    return key;
  }

  /** Drops every tool's shape in progress and any drag. */
  private dropDrafts(): void {
    for (const tool of Object.values(this.tools)) tool.reset();
    this.pressed = null;
    this.pan = null;
  }

  // ---- view ----

  fit(): void {
    if (!this.image) return;
    const { width, height } = this.canvasSize();
    this.view.fit(this.image.width, this.image.height, width, height);
    this.emit();
    this.requestPaint();
  }

  zoomAt(sx: number, sy: number, factor: number): void {
    this.view.zoomAt(sx, sy, factor);
    this.emit();
    this.requestPaint();
  }

  panBy(dx: number, dy: number): void {
    this.view.panBy(dx, dy);
    this.requestPaint();
  }

  private canvasSize(): { width: number; height: number } {
    return { width: this.canvas.clientWidth || this.canvas.width, height: this.canvas.clientHeight || this.canvas.height };
  }

  private toImage(e: { clientX: number; clientY: number }): Point {
    const r = this.canvas.getBoundingClientRect();
    return this.view.toImage(e.clientX - r.left, e.clientY - r.top);
  }

  private screenOf(e: { clientX: number; clientY: number }): Point {
    const r = this.canvas.getBoundingClientRect();
    return [e.clientX - r.left, e.clientY - r.top];
  }

  // ---- hit testing ----

  /** The topmost (smallest) shape under an image point, through the spatial index. */
  shapeAt(x: number, y: number): number | null {
    return this.shapesAt(x, y)[0] ?? null;
  }

  /** Every shape the pointer may touch under an image point, smallest first (the topmost first). */
  shapesAt(x: number, y: number): number[] {
    const slack = 3 / this.scale;
    const found: [number, number][] = [];
    for (const key of this.index.queryPoint(x, y, slack)) {
      const s = this.shapes.get(key)!;
      // Hidden and locked shapes are out of reach of the pointer (the objects list still selects them).
      if (this.hidden.has(key) || this.locked.has(key)) continue;
      if (!hits(s.ann, s.bounds, s.bitmap, x, y, slack)) continue;
      found.push([key, s.bounds.width * s.bounds.height]);
    }
    return found.sort((a, b) => a[1] - b[1] || a[0] - b[0]).map(([key]) => key);
  }

  /**
   * What a click at an image point selects: the smallest shape under it, or, when the selected shape is under it
   * too, the next larger one (wrapping round), so repeated clicks on stacked shapes cycle through all of them.
   */
  nextShapeAt(x: number, y: number): number | null {
    const under = this.shapesAt(x, y);
    const at = this.selectedKey !== null ? under.indexOf(this.selectedKey) : -1;
    return under.length === 0 ? null : under[(at + 1) % under.length];
  }

  // ---- pointer input: pan and read-only here, the rest dispatched to the tools ----

  private pointer(e: PointerEvent): ToolPointer {
    const [x, y] = this.toImage(e);
    const [sx, sy] = this.screenOf(e);
    return { x, y, sx, sy, button: e.button };
  }

  private onPointerDown = (e: PointerEvent) => {
    if (!this.image) return;
    this.canvas.focus();
    const p = this.pointer(e);
    if (e.button === 1 || (e.button === 0 && this.spaceDown)) {
      e.preventDefault();
      this.pan = { sx: p.sx, sy: p.sy, tx: this.tx, ty: this.ty };
      return;
    }
    if (this.readOnlyReason !== null) {
      // Read-only: a click selects what is under it (to read its history), nothing moves.
      if (e.button === 0) this.selectKey(this.nextShapeAt(p.x, p.y));
      return;
    }
    this.pressed = this.active;
    this.active.down(p);
    this.requestPaint();
  };

  private onPointerMove = (e: PointerEvent) => {
    if (!this.image) return;
    const p = this.pointer(e);
    this.cursor = [p.x, p.y];
    if (this.pan) {
      this.tx = this.pan.tx + p.sx - this.pan.sx;
      this.ty = this.pan.ty + p.sy - this.pan.sy;
    } else if (this.pressed) {
      this.pressed.move?.(p);
    } else {
      // Hovering a skeleton shows its point names (through the spatial index: cheap at 5,000 shapes).
      const under = this.shapeAt(p.x, p.y);
      const hovered = under !== null && this.shapes.get(under)?.ann.annotation_type === 'keypoints' ? under : null;
      if (hovered !== this.hoveredSkeleton) this.hoveredSkeleton = hovered;
      else if (!this.active.followsCursor) return;
    }
    this.requestPaint();
  };

  private onPointerUp = (e: PointerEvent) => {
    const tool = this.pressed;
    this.pressed = null;
    this.pan = null;
    if (!tool) return;
    if (!this.image || !this.store) return tool.reset();
    tool.up?.(this.pointer(e));
    this.requestPaint();
  };

  createWithClass(data: Omit<Draft, 'class_id'>): number | null {
    if (this.classId === null) {
      this.onMessage('Add a class first (project page → Classes)');
      return null;
    }
    return this.newShape({ ...data, class_id: this.classId });
  }

  /** Backspace: takes back the last step of the shape being drawn (a polygon's point); false when there is none. */
  stepBack(): boolean {
    return this.active.stepBack?.() ?? false;
  }

  /** Enter: finishes the shape being drawn (closes a polygon, accepts the SAM mask). */
  commit(): void {
    this.active.commit?.();
  }

  /** Takes in annotations the server created (a detector run) as one undoable step. */
  adopt(annotations: Annotation[]): void {
    if (!this.store) return;
    // The server saved them already (a detector run is refused by the lock like any write), so they are shown.
    const mine = annotations.filter((a) => a.image_id === this.store!.imageId);
    this.store.adopt(mine);
    this.emit();
  }

  // ---- what the tools in tools/ use of the editor (ToolHost) ----

  shape(key: number): Shape | undefined {
    return this.shapes.get(key);
  }

  previewShape(key: number, ann: Annotation): void {
    this.version++;
    this.store!.items.set(key, ann);
    this.index.remove(key);
    this.shapes.delete(key);
    this.addShape(key, ann);
  }

  message(text: string): void {
    this.onMessage(text);
  }

  changed(): void {
    this.emit();
    this.requestPaint();
  }

  // ---- keyboard helpers ----

  setSpace(down: boolean): void {
    this.spaceDown = down;
    this.canvas.style.cursor = down ? 'grab' : '';
  }

  private onWheel = (e: WheelEvent) => {
    e.preventDefault();
    const [sx, sy] = this.screenOf(e);
    if (e.ctrlKey || !e.shiftKey) this.zoomAt(sx, sy, Math.exp(-e.deltaY * 0.0015));
    else this.panBy(-e.deltaX, -e.deltaY);
  };

  private onMinimap = (e: PointerEvent) => {
    if (!this.image || !this.minimap) return;
    const r = this.minimap.getBoundingClientRect();
    const k = this.image.width / r.width;
    const ix = (e.clientX - r.left) * k, iy = (e.clientY - r.top) * (this.image.height / r.height);
    const { width, height } = this.canvasSize();
    this.view.centerOn(ix, iy, width, height);
    this.requestPaint();
  };

  // ---- painting ----

  requestPaint(): void {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.paint();
    });
  }

  private maskCanvasOf(s: Shape): HTMLCanvasElement | undefined {
    if (!s.bitmap) return undefined;
    if (!s.maskCanvas) {
      const c = document.createElement('canvas');
      c.width = Math.max(1, s.bounds.width);
      c.height = Math.max(1, s.bounds.height);
      paintMask(c.getContext('2d')!, s.bitmap, s.bounds, this.colorOf(s.ann.class_id), s.bounds);
      s.maskCanvas = c;
    }
    return s.maskCanvas;
  }

  /**
   * Paints a frame. The image and the unselected shapes are rendered once into a cached layer a little larger than
   * the view; panning then only blits that layer, and zooming stretches it until the wheel rests, when it is
   * rendered again sharp. While a shape is being moved or a mask painted, the scene is drawn directly.
   */
  paint(): void {
    // A paint asked for earlier would draw the same again (the editor paints a newly opened image at once).
    if (this.frame) cancelAnimationFrame(this.frame);
    this.frame = 0;
    const started = performance.now();
    const ctx = this.ctx;
    const dpr = window.devicePixelRatio || 1;
    const { width, height } = this.canvasSize();
    if (this.canvas.width !== Math.round(width * dpr) || this.canvas.height !== Math.round(height * dpr)) {
      this.canvas.width = Math.round(width * dpr);
      this.canvas.height = Math.round(height * dpr);
    }
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = '#1d1f24';
    ctx.fillRect(0, 0, width, height);
    if (!this.image) return;
    const s = this.scale;
    const view: Rect = this.view.visibleRect(width, height);
    const tool = this.pressed ?? this.active;
    const preview = tool.preview?.() ?? null;
    ctx.setTransform(dpr * s, 0, 0, dpr * s, dpr * this.tx, dpr * this.ty);
    if (preview) {
      this.drawScene(ctx, view, s, preview);
    } else {
      const layer = this.layerFor(view, s, dpr);
      ctx.imageSmoothingEnabled = true;
      ctx.drawImage(layer.canvas, layer.rect.x, layer.rect.y, layer.rect.width, layer.rect.height);
    }
    this.paintSelection(ctx, s, preview?.moving ?? null);
    tool.paintDraft?.(ctx, s, this.classId !== null ? this.colorOf(this.classId) : '#ffffff', this.cursor);
    this.paintMinimapView();
    this.lastPaintMs = performance.now() - started;
  }

  private readonly layers = new LayerCache(() => this.requestPaint());
  /** Bumped whenever shapes or the image change: the cached layer is then rendered anew. */
  private version = 0;

  private layerFor(view: Rect, s: number, dpr: number) {
    return this.layers.layerFor(this.image!, view, s, dpr, this.version, (ctx, rect) => this.drawScene(ctx, rect, s, null));
  }

  private drawScene(ctx: CanvasRenderingContext2D, view: Rect, s: number, preview: ToolPreview | null): void {
    const scene: Scene = {
      image: this.image!,
      index: this.index,
      shapes: this.shapes,
      visible: this.visible,
      maskEdit: preview?.maskEdit ?? null,
      colorOf: (classId) => this.colorOf(classId),
      maskCanvasOf: (shape) => this.maskCanvasOf(shape),
      hidden: this.hidden,
      className: (classId) => this.classes.get(classId)?.name ?? `class ${classId}`,
      skeletonOf: (classId) => this.skeletonOf(classId),
    };
    drawScene(ctx, view, s, scene, preview?.moving ?? null);
    if (scene.drawn) this.drawn = scene.drawn;
  }

  private paintSelection(ctx: CanvasRenderingContext2D, s: number, moving: Moving | null): void {
    const sel = this.selectedKey !== null ? this.shapes.get(this.selectedKey) : undefined;
    if (sel) paintSelection(ctx, s, sel, this.colorOf(sel.ann.class_id), moving, { skeleton: this.skeletonOf(sel.ann.class_id), activePoint: this.activePoint });
    const hover = this.hoveredSkeleton !== null && this.hoveredSkeleton !== this.selectedKey ? this.shapes.get(this.hoveredSkeleton) : undefined;
    if (hover && !this.hidden.has(this.hoveredSkeleton!)) paintPointNames(ctx, s, hover.ann.geometry as KeypointsGeometry, this.skeletonOf(hover.ann.class_id), null);
  }

  private minimapBase: HTMLCanvasElement | null = null;
  /** The image the minimap's picture is of, when it was drawn, and the view it last outlined (see paintMinimapView). */
  private minimapDrawn: { image: LoadedImage | null; drawnAt: number; view: string } = { image: null, drawnAt: 0, view: '' };
  private playing = false;

  /**
   * Told by the timeline while a video plays: the minimap's picture then follows the frames at most every
   * MINIMAP_PLAYING_MS; when playback stops it catches up with the frame shown.
   */
  setPlaying(playing: boolean): void {
    this.playing = playing;
    if (!playing) this.requestPaint();
  }

  /**
   * The minimap never covers the image's corners: it is hidden while the whole image is in view (nothing to
   * navigate), and when the image's bottom-right corner would fall under it, it moves to the bottom-left.
   */
  private placeMinimap(): boolean {
    if (!this.minimap || !this.image) return false;
    const { width, height } = this.canvasSize();
    const x0 = this.tx, y0 = this.ty, x1 = this.tx + this.image.width * this.scale, y1 = this.ty + this.image.height * this.scale;
    const whole = x0 >= -0.5 && y0 >= -0.5 && x1 <= width + 0.5 && y1 <= height + 0.5;
    const style = this.minimap.style;
    // Written only when they change: a paint per frame must not force a layout per frame.
    const display = whole ? 'none' : '';
    if (style.display !== display) style.display = display;
    if (whole) return false;
    if (!this.minimapSize && this.minimap.offsetWidth > 0) this.minimapSize = { w: this.minimap.offsetWidth, h: this.minimap.offsetHeight };
    const m = this.minimapSize ?? { w: 180, h: 135 };
    const under = (cx: number, cy: number, left: boolean) => {
      const rx0 = left ? 12 : width - 12 - m.w, ry0 = height - 12 - m.h;
      return cx >= rx0 && cx <= rx0 + m.w && cy >= ry0 && cy <= ry0 + m.h;
    };
    const left = under(x1, y1, false) && !under(x0, y1, true);
    if (style.left !== (left ? '12px' : '')) {
      style.left = left ? '12px' : '';
      style.right = left ? 'auto' : '';
    }
    return true;
  }

  private minimapSize: { w: number; h: number } | null = null;

  /**
   * Draws the minimap only when what it shows changes: its picture when the image does (while a video plays, at most
   * every MINIMAP_PLAYING_MS), the outline of the view when the view moves; nothing while it is hidden. Drawn on
   * every paint, it cost two canvas draws a frame during playback (a 1080p frame scaled down, then the outline).
   */
  private paintMinimapView(): void {
    if (!this.placeMinimap() || !this.minimap || !this.image) return;
    const now = performance.now();
    const drawn = this.minimapDrawn;
    if (drawn.image !== this.image && (!this.playing || !this.minimapBase || now - drawn.drawnAt >= MINIMAP_PLAYING_MS)) {
      this.minimapBase = drawMinimapBase(this.minimap, this.image);
      this.minimapDrawn = { image: this.image, drawnAt: now, view: '' };
    }
    if (!this.minimapBase) return;
    const { width, height } = this.canvasSize();
    const view = this.view.visibleRect(width, height);
    const key = `${view.x} ${view.y} ${view.width} ${view.height}`;
    if (key === this.minimapDrawn.view) return;
    this.minimapDrawn.view = key;
    paintMinimapView(this.minimap, this.minimapBase, this.image.width, view);
  }
}
