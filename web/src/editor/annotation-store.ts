import { api } from '../api.js';
import { asAnnotation, type Annotation } from '../types.js';

/** A stable handle on one annotation: the server id changes when an undone delete is re-created. */
export interface Ref {
  readonly key: number;
  id: number | null;
  /** Operations on one annotation run in order: an update waits for the create that gives it its id. */
  pending: Promise<unknown>;
}

/**
 * What is sent to the API; `source`, `confidence` and `status` travel with it so an undone model prediction comes
 * back as one (and undoing an accept makes it a suggestion again).
 */
export type Draft = Pick<Annotation, 'class_id' | 'annotation_type' | 'geometry'> & Partial<Pick<Annotation, 'source' | 'confidence' | 'status' | 'attributes' | 'group_id'>>;
/** A shape as a task's whole-list save sends it: a task track's shape keeps its track and whether it is interpolated. */
export type TaskDraft = Draft & Partial<Pick<Annotation, 'track_id' | 'interpolated'>>;

type Command =
  | { kind: 'create'; ref: Ref; data: Draft }
  | { kind: 'adopt'; refs: Ref[]; data: Draft[] }
  | { kind: 'delete'; ref: Ref; data: Draft }
  | { kind: 'update'; ref: Ref; before: Draft; after: Draft };

export interface StoreEvents {
  /** The annotation of `key` changed (null: it is gone). */
  changed(key: number, ann: Annotation | null): void;
  /** The server refused a change, which was rolled back. */
  refused(message: string): void;
  /** A track's keyframes changed through an edit of its shape on this frame. */
  trackChanged?(trackId: number): void;
}

const draftOf = (a: Annotation | Draft): Draft => ({
  class_id: a.class_id,
  annotation_type: a.annotation_type,
  geometry: a.geometry,
  source: a.source,
  confidence: a.confidence,
  status: a.status,
  attributes: a.attributes,
  group_id: a.group_id,
});

/**
 * The annotations of the open image: every change is applied at once on screen, saved through the API, and rolled
 * back (with a message) if the server refuses it. Keeps the undo/redo history of this image.
 */
export class AnnotationStore {
  readonly items = new Map<number, Annotation>();
  readonly refs = new Map<number, Ref>();
  private undoStack: Command[] = [];
  private redoStack: Command[] = [];
  private nextKey = 1;
  private tempId = -1;
  /** Whether any shape changed since the image opened (a change, undo, redo or adopted detection). */
  edited = false;

  constructor(
    readonly imageId: number,
    annotations: Annotation[],
    private readonly events: StoreEvents,
    /** On a video's frame: its number, where edits of a track's shape become that track's keyframes. */
    private readonly frame: number | null = null,
    /**
     * A quality-control task's version: every change saves the whole shape list (in order), no annotation is written;
     * a track's shape there is the task's own track (its edit makes it a keyframe, the whole list saved says so).
     */
    private readonly saveAll?: (shapes: TaskDraft[]) => Promise<void>,
  ) {
    for (const a of annotations) {
      const ref: Ref = { key: this.nextKey++, id: a.id, pending: Promise.resolve() };
      this.refs.set(ref.key, ref);
      this.items.set(ref.key, a);
    }
  }

  get canUndo(): boolean {
    return this.undoStack.length > 0;
  }
  get canRedo(): boolean {
    return this.redoStack.length > 0;
  }

  private set(ref: Ref, ann: Annotation | null): void {
    this.edited = true;
    if (ann) this.items.set(ref.key, ann);
    else this.items.delete(ref.key);
    this.events.changed(ref.key, ann);
  }

  private body(d: Draft) {
    // Attribute values travel with every write (an update that leaves them out would keep no record of an undo).
    return { class_id: d.class_id, annotation_type: d.annotation_type, geometry: d.geometry, confidence: d.confidence ?? null, source: d.source ?? 'manual', status: d.status ?? 'accepted', ...(d.attributes ? { attributes: d.attributes } : {}), ...(d.group_id != null ? { group_id: d.group_id } : {}) };
  }

  /** The saves of the whole list, one after another; each sends the list as it is when its turn comes. */
  private wholeSaves: Promise<unknown> = Promise.resolve();

  private saveWhole(): Promise<void> {
    const run = this.wholeSaves.then(() => this.saveAll!([...this.items.values()].map((a) => ({ ...draftOf(a), ...(a.track_id != null ? { track_id: a.track_id, interpolated: a.interpolated } : {}) }))));
    this.wholeSaves = run.catch(() => undefined);
    return run;
  }

  /** Runs the change's save after the shape's earlier ones; in a task, the whole list's, telling of a track it changed. */
  private queue(ref: Ref, op: () => Promise<void>, rollback: (err: Error) => void, trackId?: number | null): Promise<void> {
    const whole = async () => {
      await this.saveWhole();
      if (trackId != null) this.events.trackChanged?.(trackId);
    };
    const run = ref.pending.then(this.saveAll ? whole : op).catch((err: Error) => {
      rollback(err);
      this.events.refused(err.message);
    });
    ref.pending = run;
    return run;
  }

  private doCreate(ref: Ref, data: Draft): Promise<void> {
    this.set(ref, { id: this.tempId--, image_id: this.imageId, ...data, confidence: data.confidence ?? null, source: data.source ?? 'manual' });
    return this.queue(
      ref,
      async () => {
        const saved = await api.post('/api/images/{image_id}/annotations', { path: { image_id: this.imageId }, body: this.body(data) });
        ref.id = saved.id;
        if (this.items.has(ref.key)) this.set(ref, asAnnotation(saved));
        // Deleted on screen while the create was in flight: delete it on the server too.
        else await api.delete('/api/annotations/{id}', { path: { id: saved.id } });
      },
      () => this.set(ref, null),
    );
  }

  private doDelete(ref: Ref): Promise<void> {
    const before = this.items.get(ref.key);
    if (!before) return Promise.resolve();
    this.set(ref, null);
    return this.queue(
      ref,
      async () => {
        if (before.track_id != null) await this.deleteTrackShape(before);
        else if (ref.id !== null) await api.delete('/api/annotations/{id}', { path: { id: ref.id } });
        ref.id = null;
      },
      () => this.set(ref, before),
      before.track_id,
    );
  }

  private doUpdate(ref: Ref, data: Draft): Promise<void> {
    const before = this.items.get(ref.key);
    if (!before) return Promise.resolve();
    // A task track's shape edited becomes its keyframe on this frame (saved with the whole list).
    this.set(ref, { ...before, ...data, ...(this.saveAll && before.track_id != null ? { interpolated: false } : {}) });
    return this.queue(
      ref,
      async () => {
        if (before.track_id != null) {
          // A track's shape is no annotation: its edit is the track's keyframe on this frame (CVAT's rule).
          await this.putKeyframe(before.track_id, data);
          if (this.items.has(ref.key)) this.set(ref, { ...before, ...data, interpolated: false });
          return;
        }
        const saved = await api.put('/api/annotations/{id}', { path: { id: ref.id! }, body: this.body(data) });
        if (this.items.has(ref.key)) this.set(ref, asAnnotation(saved));
      },
      () => this.set(ref, before),
      before.track_id,
    );
  }

  private async putKeyframe(trackId: number, data: Draft): Promise<void> {
    if (this.frame === null) throw new Error('a track is edited on a video frame only');
    const keyframe = { frame: this.frame, annotation_type: data.annotation_type, geometry: data.geometry };
    await api.patch('/api/tracks/{id}', { path: { id: trackId }, body: { keyframes: [keyframe as never], ...(data.class_id ? { class_id: data.class_id } : {}) } });
    this.events.trackChanged?.(trackId);
  }

  /**
   * Deleting a track's shape on a frame: its keyframe there goes (the frames around are interpolated again); an
   * interpolated shape gets an `outside` keyframe instead, so the object is hidden from this frame on.
   */
  private async deleteTrackShape(shape: Annotation): Promise<void> {
    if (this.frame === null) throw new Error('a track is edited on a video frame only');
    const body = shape.interpolated
      ? { keyframes: [{ frame: this.frame, annotation_type: shape.annotation_type, geometry: shape.geometry, outside: true } as never] }
      : { delete_frames: [this.frame] };
    await api.patch('/api/tracks/{id}', { path: { id: shape.track_id! }, body });
    this.events.trackChanged?.(shape.track_id!);
  }

  private record(cmd: Command): void {
    this.undoStack.push(cmd);
    this.redoStack = [];
  }

  create(data: Draft): Ref {
    const ref: Ref = { key: this.nextKey++, id: null, pending: Promise.resolve() };
    this.refs.set(ref.key, ref);
    this.record({ kind: 'create', ref, data });
    void this.doCreate(ref, data);
    return ref;
  }

  /**
   * Takes in annotations the server already saved (a detector run): shown at once, and undone or redone together
   * as one step. Returns their keys.
   */
  adopt(annotations: Annotation[]): number[] {
    const refs = annotations.map((a) => {
      const ref: Ref = { key: this.nextKey++, id: a.id, pending: Promise.resolve() };
      this.refs.set(ref.key, ref);
      this.set(ref, a);
      return ref;
    });
    if (refs.length > 0) this.record({ kind: 'adopt', refs, data: annotations.map(draftOf) });
    return refs.map((r) => r.key);
  }

  delete(key: number): void {
    const ref = this.refs.get(key);
    const current = this.items.get(key);
    if (!ref || !current) return;
    // A track's shape deleted is a keyframe change, not an annotation an undo could create again.
    if (current.track_id == null) this.record({ kind: 'delete', ref, data: draftOf(current) });
    void this.doDelete(ref);
  }

  update(key: number, after: Draft): void {
    const ref = this.refs.get(key);
    const current = this.items.get(key);
    if (!ref || !current) return;
    // An edit of the geometry or class keeps the shape's attribute values unless it names new ones.
    if (after.attributes === undefined && current.attributes !== undefined) after = { ...after, attributes: current.attributes };
    if (after.group_id === undefined && current.group_id != null) after = { ...after, group_id: current.group_id };
    this.record({ kind: 'update', ref, before: draftOf(current), after });
    void this.doUpdate(ref, after);
  }

  undo(): void {
    const cmd = this.undoStack.pop();
    if (!cmd) return;
    this.redoStack.push(cmd);
    if (cmd.kind === 'adopt') cmd.refs.forEach((ref) => void this.doDelete(ref));
    else if (cmd.kind === 'create') void this.doDelete(cmd.ref);
    else if (cmd.kind === 'delete') void this.doCreate(cmd.ref, cmd.data);
    else void this.doUpdate(cmd.ref, cmd.before);
  }

  redo(): void {
    const cmd = this.redoStack.pop();
    if (!cmd) return;
    this.undoStack.push(cmd);
    if (cmd.kind === 'adopt') cmd.refs.forEach((ref, i) => void this.doCreate(ref, cmd.data[i]));
    else if (cmd.kind === 'create') void this.doCreate(cmd.ref, cmd.data);
    else if (cmd.kind === 'delete') void this.doDelete(cmd.ref);
    else void this.doUpdate(cmd.ref, cmd.after);
  }

  /** Resolves once every change made so far has been answered by the server. */
  async settled(): Promise<void> {
    await Promise.all([...this.refs.values()].map((r) => r.pending));
  }
}
