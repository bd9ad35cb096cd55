import { lazy, Suspense, useEffect, useRef, useState, useMemo } from 'react';
import { api, ApiError } from '../api.js';
import { clock, useImageLock, type LockStatus } from '../components/image-lock.js';
import { ErrorBanner, useUser } from '../components/layout.js';
import { EditorController, type EditorState, type ToolName } from '../editor/editor-controller.js';
import { ImageLoader } from '../editor/image-loader.js';
import { PREFETCH_AHEAD, prefetchSuggestions, runDetector } from '../editor/assist.js';
import { hasSam, isDetector, ownModels, type Model } from '../models.js';
import { displayColors } from '../editor/palette.js';
import { ObjectsPanel } from '../components/objects-panel.js';
import { ClassSearch } from '../components/class-search.js';
import { accessOf, useProjectAccess } from '../components/project-access.js';
import { taskImages, taskReviewNote, taskShapes, type TaskReviewNote } from '../editor/task-shapes.js';
import { ExperimentPredictions } from '../components/experiment-predictions.js';
import { filterFromQuery, filterToQuery, isFiltered, listQuery } from '../components/image-grid.js';
import { Link, navigate } from '../router.js';
import { useEditorHandle, useEditorKeys, useImageReview } from './annotate-hooks.js';
import type { Annotation, ImageRecord, LabelClass, Member, NextToLabel, Project, QueueOrder, Review } from '../types.js';
import { PROJECT_TYPE_SHAPES } from '../vocabulary.js';
import { VideoTimeline, type TimelineActions } from '../components/video-timeline.js';

const TOOLS: { tool: ToolName; key: string; label: string }[] = [
  { tool: 'select', key: 'V', label: 'Select' },
  { tool: 'box', key: 'B', label: 'Box' },
  { tool: 'polygon', key: 'P', label: 'Polygon' },
  { tool: 'brush', key: 'M', label: 'Mask brush' },
  { tool: 'eraser', key: 'E', label: 'Eraser' },
  { tool: 'classification', key: 'C', label: 'Classify' },
  { tool: 'sam', key: 'S', label: 'SAM' },
  { tool: 'keypoints', key: 'K', label: 'Keypoints' },
  { tool: 'polyline', key: 'L', label: 'Polyline' },
  { tool: 'points', key: 'T', label: 'Points' },
  { tool: 'ellipse', key: 'O', label: 'Ellipse' },
];

const SHORTCUTS: [string, string][] = [
  ['1 – 9', 'pick class (changes the selected shape’s class; accepts a selected suggestion as that class and selects the next; toggles it in Classify)'],
  ['Tab', 'select the next suggestion (dashed shapes from a model), least confident first'],
  ['Y / N', 'accept / reject the selected suggestion, then select the next'],
  ['Shift+Y / Shift+N', 'accept / reject every suggestion on the image'],
  ['H / L (shape selected)', 'hide / lock the selected shape, as in the objects list (L locks in the Select tool; in a drawing tool L is the polyline)'],
  ['Click again', 'on stacked shapes: select the next one under the cursor'],
  ['Q', 'find a class by typing its name (Enter picks it like a class key; a new name adds the class, for project admins)'],
  ['V / B / P / M / E / C', 'select, box, polygon, mask brush, eraser, classify'],
  ['K / L / T / O', 'keypoints (drag a box to place the class’s whole skeleton, or click each point in order), polyline, points, ellipse (drag from the centre)'],
  ['Enter / double-click', 'close the polygon; finish the polyline, points or skeleton; accept the SAM mask'],
  ['0 / X (placing a skeleton)', 'skip the next point (not labelled) / make the last one occluded, then not labelled'],
  ['X (skeleton selected)', 'the active point (last dragged): visible → occluded → not labelled'],
  ['R / Shift+R', 'turn the selected box or ellipse 5° clockwise / back (or drag its round handle)'],
  ['Shift+P (polygon selected)', 'draw another part of the same object'],
  ['Shift+H (polygon selected)', 'draw a hole in the object'],
  ['S, then left / right click', 'SAM: include / exclude a point (the mask previews at once)'],
  ['Backspace', 'take back the last point placed (polygon, polyline, points, skeleton)'],
  ['Delete', 'delete the selected shape (a suggestion: reject it and select the next)'],
  ['Ctrl+Z / Ctrl+Shift+Z (Ctrl+Y)', 'undo / redo'],
  ['A / D, ← / →', 'previous / next image'],
  [', / .', 'video frame: previous / next frame (the timeline under the canvas)'],
  ['< / > (Shift+, / Shift+.)', 'video frame: previous / next keyframe (of the selected track, or of any track)'],
  ['/', 'video frame: play / pause'],
  ['F', 'fit the image to the screen'],
  ['Wheel', 'zoom around the cursor'],
  ['Space+drag, middle button', 'pan'],
  ['[ / ]', 'brush smaller / larger'],
  ['Esc', 'cancel drawing or the SAM mask, deselect'],
  ['?', 'this help'],
];

/** How long an information message stays. */
const INFO_MS = 4000;

/**
 * Editor messages that confirm what was done (an edit Ctrl+Z undoes, a class added) or say what to do next: shown as
 * information, not as errors (refusals and failures stay errors).
 */
const isInfo = (message: string) => /\(Ctrl\+Z undoes\)$|^Class added: |^Draw the (new part|hole)|^Propagated to frame |^This is the last frame$/.test(message);

// Only needed once a shape is selected; it loads then.
const AnnotationHistory = lazy(() => import('../components/annotation-history.js').then((m) => ({ default: m.AnnotationHistory })));

/** A number per annotation object: the store replaces the object on every change, so this changes with it. */
const revisionKeys = new WeakMap<object, number>();
let nextRevisionKey = 1;
const changeKey = (ann: Annotation) => {
  if (!revisionKeys.has(ann)) revisionKeys.set(ann, nextRevisionKey++);
  return `${ann.id}:${revisionKeys.get(ann)}`;
};

const REVIEW_LABEL: Record<Review['status'], string> = {
  pending: 'Waiting for review',
  approved: 'Approved',
  rejected: 'Rejected',
  changes: 'Changes requested',
};

/** The grid filter the editor was opened with (kept in its URL): Next and Previous stay inside it. */
const gridFilter = () => filterFromQuery(new URLSearchParams(location.search));

/** The editor's queue orders: the grid's (upload order, within its filter), or the unlabelled images as next-to-label ranks them. */
const QUEUE_ORDERS: [QueueOrder | '', string][] = [
  ['', 'Upload order'],
  ['entropy', 'Least sure first'],
  ['margin', 'Closest call first'],
  ['least_confidence', 'Lowest confidence first'],
  ['diversity', 'Most different first'],
  ['random', 'Random'],
];
const queueOrder = () => (new URLSearchParams(location.search).get('order') ?? '') as QueueOrder | '';

/** The editor's URL: the grid filter, the queue order and the open image. */
function editorQuery(image?: number): string {
  const extra = new URLSearchParams();
  if (queueOrder()) extra.set('order', queueOrder());
  // Opened from an experiment's error browser: the run's predictions stay beside the editor (ExperimentPredictions).
  for (const kept of ['experiment', 'eval_split']) {
    const value = new URLSearchParams(location.search).get(kept);
    if (value) extra.set(kept, value);
  }
  if (image !== undefined) extra.set('image', String(image));
  return filterToQuery(gridFilter(), extra).toString();
}

/** The images Next and Previous walk: the grid's filter in upload order, or the first 1000 of next-to-label's ranking. */
async function queueImages(projectId: number): Promise<ImageRecord[]> {
  const order = queueOrder();
  if (!order) return allImages(projectId);
  const ranked = await api.get('/api/projects/{id}/next-to-label', { path: { id: projectId }, query: { strategy: order, limit: 1000 } });
  return ranked.items.map((item) => item.image);
}

async function allImages(projectId: number): Promise<ImageRecord[]> {
  const out: ImageRecord[] = [];
  let after: number | null = null;
  const filter = listQuery(gridFilter());
  for (;;) {
    const page: ImageRecord[] = await api.get('/api/projects/{id}/images', { path: { id: projectId }, query: { limit: 10000, after: after ?? undefined, ...filter } });
    out.push(...page);
    if (page.length < 10000) return out;
    after = page[page.length - 1].id;
  }
}

export default function AnnotatePage({ projectId }: { projectId: number }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const minimap = useRef<HTMLCanvasElement>(null);
  const controller = useRef<EditorController | null>(null);
  const loader = useRef(new ImageLoader(projectId));
  const [project, setProject] = useState<Project | null>(null);
  const [classes, setClasses] = useState<LabelClass[]>([]);
  const drawColors = useMemo(() => displayColors(classes), [classes]);
  const [images, setImages] = useState<ImageRecord[] | null>(null);
  const [index, setIndex] = useState(-1);
  const [state, setState] = useState<EditorState | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [help, setHelp] = useState(false);
  const [classSearch, setClassSearch] = useState(false);
  const access = useProjectAccess(projectId);
  /** The role cannot annotate (a viewer): the editor shows the image and its shapes, none of the editing controls. */
  const viewOnly = access.access !== null && !access.can('annotations.write');
  const viewOnlyRef = useRef(viewOnly);
  viewOnlyRef.current = viewOnly;
  const [loading, setLoading] = useState(false);
  const [models, setModels] = useState<Model[]>([]);
  const [members, setMembers] = useState<Member[]>([]);
  const me = useUser();
  const switchMs = useRef(0);
  const firstPaintAt = useRef(0);
  const imagesRef = useRef<ImageRecord[]>([]);
  const indexRef = useRef(-1);
  const modelsRef = useRef<Model[]>([]);
  /** The images predicted in the background while open (see prefetchAhead). */
  const askedOpen = useRef(new Set<number>());
  /** Working on quality-control tasks (issue 29): one dealt image at a time, its shapes the caller's own version. */
  const [taskMode, setTaskMode] = useState(false);
  const [submittingTask, setSubmittingTask] = useState(false);
  /** The open task's change request (a reviewer gave it back with a comment), if any. */
  const [taskNote, setTaskNote] = useState<TaskReviewNote | null>(null);

  // Information (a done edit, Ctrl+Z undoes it) goes by itself; errors stay until closed.
  useEffect(() => {
    if (!message || !isInfo(message)) return;
    const timer = setTimeout(() => setMessage((now) => (now === message ? null : now)), INFO_MS);
    return () => clearTimeout(timer);
  }, [message]);

  useEffect(() => {
    const c = new EditorController(canvas.current!, minimap.current, setState, setMessage);
    c.projectId = projectId;
    controller.current = c;
    const resize = new ResizeObserver(() => c.requestPaint());
    resize.observe(canvas.current!);
    api.get('/api/projects/{id}', { path: { id: projectId } }).then((p) => {
      setProject(p);
      c.multiLabel = p.multi_label;
      // The tool follows the project type: classification opens on its class choices (one key sets the label),
      // segmentation in polygon mode, detection with the box.
      c.setTool(toolForProject(p.project_type));
    }, (e) => setMessage((e as Error).message));
    loadClasses();
    // Without the models routes the assist tools simply do not show.
    // With the team's promoted models of its other projects: a new batch is labelled without uploading them again.
    api.get('/api/projects/{id}/models', { path: { id: projectId }, query: { include_shared: true } }).then((list) => {
      modelsRef.current = list;
      setModels(list);
      // The queue may have opened its first image before the models arrived.
      if (indexRef.current >= 0) prefetchAhead(imagesRef.current, indexRef.current);
    }, () => setModels([]));
    api.get('/api/projects/{id}/members', { path: { id: projectId } }).then(setMembers, () => undefined);
    void startQueue();
    return () => {
      resize.disconnect();
      c.destroy();
    };
  }, [projectId]);

  /** The project's single- or multi-label setting, changed from the editor (PATCH the project). */
  async function setMultiLabel(multi: boolean) {
    // The checkbox follows the click at once (a controlled input otherwise snaps back until the answer), and goes
    // back if the project refuses (409: an image still holds two classes).
    setProject((p) => p && { ...p, multi_label: multi });
    try {
      const p = await api.patch('/api/projects/{id}', { path: { id: projectId }, body: { multi_label: multi } });
      setProject(p);
      if (controller.current) controller.current.multiLabel = p.multi_label;
      setMessage(multi ? 'Multi-label: class keys toggle classes' : 'Single-label: a class key replaces the image\'s class');
    } catch (e) {
      setProject((p) => p && { ...p, multi_label: !multi });
      setMessage((e as Error).message);
    }
  }

  /**
   * Below project admin, a project with quality control (overlap or hidden ground truth) deals tasks: the editor
   * works on them; elsewhere (409: it deals none) on the project's images.
   */
  async function startQueue() {
    const mine = await accessOf(projectId).catch(() => null);
    const annotates = mine?.permissions.includes('annotations.write') && !mine.permissions.includes('project.update');
    if (!annotates || !(await nextTask(true))) loadQueue();
  }

  /** Opens the next task dealt to the caller; false when the project deals none (first call only). */
  async function nextTask(first = false): Promise<boolean> {
    try {
      const { task } = await api.post('/api/projects/{id}/quality-control/tasks/next', { path: { id: projectId } });
      if (first) loader.current = new ImageLoader(projectId, taskShapes(projectId));
      setTaskMode(true);
      setTaskNote(task ? taskReviewNote(task) : null);
      const list = task ? await taskImages(projectId, task) : [];
      imagesRef.current = list;
      indexRef.current = -1;
      setImages(list);
      if (task) await open(Math.max(0, list.findIndex((i) => i.id === task.image_id)));
      return true;
    } catch (e) {
      if (first && e instanceof ApiError && e.status === 409) return false;
      setMessage(`Next task: ${(e as Error).message}`);
      return true;
    }
  }

  /** Submits the open task once its shapes are saved, then opens the next one. */
  const submitTask = async () => {
    const img = imagesRef.current[indexRef.current];
    if (!img) return;
    setSubmittingTask(true);
    try {
      await controller.current?.store?.settled();
      await api.post('/api/projects/{id}/quality-control/tasks/{image_id}/submit', { path: { id: projectId, image_id: img.id } });
      loader.current.forget(img.id);
      await nextTask();
    } catch (e) {
      setMessage(`Submit: ${(e as Error).message}`);
    } finally {
      setSubmittingTask(false);
    }
  };

  function loadQueue() {
    queueImages(projectId).then((list) => {
      imagesRef.current = list;
      setImages(list);
      const wanted = Number(new URLSearchParams(location.search).get('image'));
      const at = list.findIndex((i) => i.id === wanted);
      void open(at >= 0 ? at : 0);
    }, (e) => setMessage((e as Error).message));
  }

  /** Follows another queue order: the ranking replaces the list, starting from its first image. */
  const changeOrder = (order: QueueOrder | '') => {
    const params = new URLSearchParams(editorQuery());
    if (order) params.set('order', order);
    else params.delete('order');
    history.replaceState(null, '', `/projects/${projectId}/annotate?${params}`);
    // As when moving to another image: the open image's cached copy predates the edits just made.
    const current = imagesRef.current[indexRef.current];
    const store = controller.current?.store;
    if (current && store) void store.settled().then(() => loader.current.forget(current.id));
    indexRef.current = -1;
    loadQueue();
  };

  function loadClasses() {
    api.get('/api/projects/{id}/classes', { path: { id: projectId } }).then((cls) => {
      setClasses(cls);
      controller.current?.setClasses(cls);
    }, (e) => setMessage((e as Error).message));
  }

  const open = async (at: number) => {
    const list = imagesRef.current;
    const c = controller.current;
    if (!c || at < 0 || at >= list.length) return;
    const started = performance.now();
    const previous = indexRef.current >= 0 ? list[indexRef.current] : undefined;
    if (previous && c.store && (c.store.edited || c.store.imageId !== previous.id)) {
      // Come back to fresh data: the cached copy predates the edits just made. Unedited, it is kept (playing a
      // video would otherwise read each frame's shapes again as the frame falls behind).
      const store = c.store;
      void store.settled().then(() => loader.current.forget(previous.id));
    }
    indexRef.current = at;
    setIndex(at);
    setLoading(true);
    try {
      const loaded = await loader.current.load(list[at]);
      if (indexRef.current !== at) return;
      c.show(loaded);
      // Suggestions waiting: the first is selected, so Y, N and class keys work on it at once.
      c.selectNextSuggestion(true);
      c.paint();
      switchMs.current = performance.now() - started;
      firstPaintAt.current ||= performance.now();
      history.replaceState(null, '', `/projects/${projectId}/annotate?${editorQuery(list[at].id)}`);
      if (at + 1 < list.length) void loader.current.load(list[at + 1]).catch(() => undefined);
      prefetchAhead(list, at);
    } catch (e) {
      setMessage(`Could not open ${list[at].original_name}: ${(e as Error).message}`);
    } finally {
      if (indexRef.current === at) setLoading(false);
    }
  };

  const go = (delta: number) => open(indexRef.current + delta);

  /** Opens an image of the list by its id (the video timeline's frames); false when the list does not hold it. */
  const openId = async (id: number): Promise<boolean> => {
    const at = imagesRef.current.findIndex((i) => i.id === id);
    if (at < 0) return false;
    await open(at);
    return true;
  };
  const timeline = useRef<TimelineActions | null>(null);

  /**
   * With a production model, the open image (once per visit of the page) and the images ahead are predicted in the
   * background: suggestions are there when they open, and appear on the open one without "Run detector". Their
   * cached copies predate the suggestions, so they are loaded again once the job is done; the open image only if
   * nothing was edited on it meanwhile.
   */
  const prefetchAhead = (list: ImageRecord[], at: number) => {
    const current = list[at]?.id;
    const asked = current !== undefined && !askedOpen.current.has(current);
    const ids = list.slice(asked ? at : at + 1, at + 1 + PREFETCH_AHEAD).map((i) => i.id);
    const production = modelsRef.current.some((m) => !m.shared && m.lifecycle === 'production' && ['detect', 'segment', 'classify'].includes(m.task));
    if (!production || ids.length === 0) return;
    prefetchSuggestions(projectId, ids).then((predicted) => {
      // Predicted once: an image the model finds nothing on (or whose suggestions were all rejected) stays
      // unlabelled, and opening it again must not predict it again.
      if (asked && predicted.includes(current)) askedOpen.current.add(current);
      const open = imagesRef.current[indexRef.current]?.id;
      for (const id of predicted) if (id !== open) loader.current.forget(id);
      if (open !== undefined && predicted.includes(open) && !controller.current?.store?.edited) void reloadCurrent();
      const next = imagesRef.current[indexRef.current + 1];
      if (next && predicted.includes(next.id)) void loader.current.load(next).catch(() => undefined);
    }, () => undefined);
  };

  /** Opens the current image again with fresh annotations from the server (after a revert, or a lock handed over). */
  const reloadCurrent = async (select?: number) => {
    const img = imagesRef.current[indexRef.current];
    if (!img) return;
    await controller.current?.store?.settled();
    loader.current.forget(img.id);
    await open(indexRef.current);
    if (select !== undefined) controller.current?.selectAnnotation(select);
  };

  const currentId = images && index >= 0 && images[index] ? images[index].id : null;
  // While a video plays, its frames are shown, not edited: no lock is taken or review read for each one (five
  // requests a frame, at 25 frames a second, on the server the page waits for); they are once it stops.
  const [playing, setPlaying] = useState(false);
  const steadyId = playing ? null : currentId;
  // A task is the caller's own version: no lock (the others dealt the image work on theirs), no review.
  const lock = useImageLock(taskMode ? null : steadyId);
  const lockKind = useRef<LockStatus['kind']>('pending');
  useEffect(() => {
    const c = controller.current;
    if (!c) return;
    const before = lockKind.current;
    lockKind.current = lock.kind;
    if (lock.kind === 'theirs') c.setReadOnly(`Read only: ${lock.lock.display_name || lock.lock.email} is editing this image (lock until ${clock(lock.lock.expires_at)})`);
    else if (lock.kind === 'view-only') c.setReadOnly('Read only: your role in this project cannot edit annotations');
    else c.setReadOnly(null);
    // The other user let go: what they saved is shown before this user edits on top of it.
    if (before === 'theirs' && lock.kind === 'mine') void reloadCurrent();
  }, [lock]);

  const { review, submitting, submit } = useImageReview(projectId, taskMode ? null : steadyId, setMessage);
  /** Every change made so far is saved before the reviewer can see the image. */
  const submitForReview = async () => {
    const img = imagesRef.current[indexRef.current];
    if (!img) return;
    const created = await submit(img.id, () => controller.current?.store?.settled());
    if (created) img.review_state = 'pending';
  };

  const userName = (id: number | null) => {
    if (id !== null && id === me?.id) return 'you';
    const m = members.find((x) => x.user_id === id);
    return m ? m.display_name || m.email : id === null ? 'someone' : `user ${id}`;
  };

  useEditorHandle(controller, switchMs, firstPaintAt, go);

  useEditorKeys(controller, {
    classes: () => classes,
    toolForKey: (key) => TOOLS.find((t) => t.key === key.toUpperCase() && (t.tool !== 'sam' || hasSam(ownModels(models))) && (!viewOnlyRef.current || t.tool === 'select'))?.tool,
    go: (delta) => void go(delta),
    toggleHelp: () => setHelp((h) => !h),
    closeHelp: () => setHelp(false),
    openClassSearch: () => !viewOnlyRef.current && setClassSearch(true),
    video: () => timeline.current,
  });

  /** A class picked in the type-ahead search: as its key would (the selected shape takes it); the keys go back to the canvas. */
  const pickSearched = (classId: number) => {
    setClassSearch(false);
    controller.current?.pickClass(classId);
    controller.current?.canvas.focus();
  };
  /** Adds a class from the editor (POST /api/projects/{id}/classes; project admins) and picks it. */
  const addClass = async (name: string) => {
    try {
      const created = await api.post('/api/projects/{id}/classes', { path: { id: projectId }, body: { name } });
      const list = await api.get('/api/projects/{id}/classes', { path: { id: projectId } });
      setClasses(list);
      controller.current?.setClasses(list);
      pickSearched(created.id);
      setMessage(`Class added: ${created.name}`);
    } catch (e) {
      setMessage(`Add class: ${(e as Error).message}`);
    }
  };

  const current = images && index >= 0 ? images[index] : null;
  const c = controller.current;
  const detectors = taskMode ? [] : models.filter(isDetector);
  const samReady = hasSam(ownModels(models));
  // A viewer gets Select only (to read a shape's history); the drawing tools are for roles that annotate.
  const tools = TOOLS.filter((t) => (t.tool !== 'sam' || samReady) && (!viewOnly || t.tool === 'select'));
  useEffect(() => {
    if (viewOnly) c?.setTool('select');
  }, [viewOnly, c]);

  return (
    <div className="editor">
      <header className="topbar">
        <Link href="/" className="brand">
          Versa
        </Link>
        <Link href={`/projects/${projectId}${isFiltered(gridFilter()) ? `?${filterToQuery(gridFilter())}` : ''}`} className="crumb" data-testid="back-to-grid">
          {project?.name ?? `Project ${projectId}`}
        </Link>
        <span className="muted small" data-testid="image-position">
          {taskMode ? (current ? `Quality-control task · ${current.original_name}` : '') : current ? `${index + 1} / ${images!.length} · ${current.original_name}` : images?.length === 0 ? 'No images yet' : ''}
          {loading ? ' · loading…' : ''}
        </span>
        <div className="spacer" />
        {taskMode && current && taskNote && (
          <span className="review-badge changes" data-testid="task-review-note" title={taskNote.comment}>
            Changes requested: {taskNote.comment}
          </span>
        )}
        {taskMode && current && (
          <button onClick={() => void submitTask()} disabled={submittingTask} data-testid="submit-task" title="Submit your version of this image and open your next task">
            {submittingTask ? 'Submitting…' : 'Submit task'}
          </button>
        )}
        {!taskMode && <>
        <select value={queueOrder()} onChange={(e) => changeOrder(e.target.value as QueueOrder | '')} aria-label="Queue order" title="Which image Next opens: upload order, or the unlabelled images ranked by the production model (next-to-label)">
          {QUEUE_ORDERS.map(([value, text]) => <option key={value} value={value}>{text}</option>)}
        </select>
        {current && <LockBadge status={lock} />}
        {current && review && (
          <span className={`review-badge ${review.status}`} data-testid="review-state" title={review.decision_comment || review.comment || undefined}>
            {REVIEW_LABEL[review.status]}
            {review.status !== 'pending' && review.status !== 'approved' && review.decision_comment ? `: ${review.decision_comment}` : ''}
          </span>
        )}
        {current && access.can('reviews.submit') && (
          <button
            onClick={() => void submitForReview()}
            disabled={submitting || review?.status === 'pending' || lock.kind === 'theirs' || lock.kind === 'view-only'}
            title="Send this image to a reviewer"
          >
            {submitting ? 'Submitting…' : 'Submit for review'}
          </button>
        )}
        <button onClick={() => void go(-1)} disabled={index <= 0} title="Previous (A)">
          ‹ Prev
        </button>
        <button onClick={() => void go(1)} disabled={!images || index >= images.length - 1} title="Next (D)">
          Next ›
        </button>
        </>}
        <button className="ghost" onClick={() => setHelp(true)} title="Shortcuts (?)">
          ?
        </button>
      </header>
      <div className="editor-body">
        <nav className="tools" aria-label="Tools">
          {tools.map((t) => (
            <button key={t.tool} className={state?.tool === t.tool ? 'active' : ''} onClick={() => c?.setTool(t.tool)} title={`${t.label} (${t.key})`} data-tool={t.tool}>
              <b>{t.key}</b>
              <span>{t.label}</span>
            </button>
          ))}
          <hr />
          {!viewOnly && (() => {
            // The class new shapes get, always shown; with a shape selected, a class key changes that shape instead.
            const active = classes.find((k) => k.id === state?.classId);
            const sel = state?.selected ? classes.find((k) => k.id === state.selected!.class_id) : undefined;
            return (
              <div className="active-class small" data-testid="active-class">
                <span>New shapes:</span>{' '}
                <b style={{ borderLeft: `10px solid ${active?.color ?? '#999'}`, paddingLeft: 4 }}>{active?.name ?? 'no class'}</b>
                {state?.selected && <div className="muted" data-testid="selected-class">Selected: {sel?.name ?? '?'} (1–9 changes it)</div>}
              </div>
            );
          })()}
          {!viewOnly && (
            <>
              <button onClick={() => c?.undo()} disabled={!state?.canUndo} title="Undo (Ctrl+Z)">
                Undo
              </button>
              <button onClick={() => c?.redo()} disabled={!state?.canRedo} title="Redo (Ctrl+Shift+Z)">
                Redo
              </button>
            </>
          )}
          <button onClick={() => c?.fit()} title="Fit (F)">
            Fit
          </button>
          {(state?.tool === 'brush' || state?.tool === 'eraser') && (
            <label className="small">
              Size {state.brushSize}
              <input type="range" min={1} max={200} value={state.brushSize} onChange={(e) => c?.setBrushSize(Number(e.target.value))} />
            </label>
          )}
        </nav>
        <div className="stage">
          <canvas ref={canvas} className="editor-canvas" tabIndex={0} data-testid="editor-canvas" />
          <canvas ref={minimap} className="minimap" aria-label="Minimap" />
          {project?.project_type === 'classification' && state && current && (
            <ImageClasses ids={state.classifications} classes={classes} colors={drawColors} multiLabel={project.multi_label} />
          )}
          {taskMode && images?.length === 0 && (
            <div className="empty-stage" data-testid="no-task">
              No quality-control task for you now. <Link href={`/projects/${projectId}`}>Back to the project</Link>.
            </div>
          )}
          {!taskMode && images?.length === 0 && (
            <div className="empty-stage">
              No images in this project. <Link href={`/projects/${projectId}/upload`}>Upload some</Link>.
            </div>
          )}
          {state?.readOnly && lock.kind === 'theirs' && (
            <div className="read-only-hint" data-testid="read-only-hint">
              {lock.lock.display_name || lock.lock.email} is editing this image. You can look, select and read the history; editing opens when they leave.
            </div>
          )}
          {state?.hint && state.tool !== 'sam' && (
            <div className="sam-hint" data-testid="tool-hint">
              {state.hint}
            </div>
          )}
          {state?.tool === 'sam' && (
            <div className="sam-hint" data-testid="sam-hint">
              {state.sam.points === 0
                ? 'SAM: left click inside an object to include it, right click to exclude a part'
                : state.sam.busy
                  ? 'SAM: computing the mask…'
                  : state.sam.hasMask
                    ? `SAM mask (score ${state.sam.score?.toFixed(2)}): Enter to accept, Esc to cancel, click to refine`
                    : 'SAM: add an include point (left click)'}
            </div>
          )}
          {state?.selected?.status === 'suggested' && !state.readOnly && (
            <div className="suggestion-bar" role="group" aria-label="Suggestion" data-testid="suggestion-bar">
              <span>
                Suggestion: <b>{classes.find((k) => k.id === state.selected!.class_id)?.name ?? '?'}</b>
                {state.selected.confidence != null ? ` ${Math.round(state.selected.confidence * 100)}%` : ''}
              </span>
              <button onClick={() => c?.decideSelected(true)} title="Accept the suggestion as it is (Y); a class key accepts it as that class">
                Accept (Y)
              </button>
              <button className="danger" onClick={() => c?.decideSelected(false)} title="Reject the suggestion: a false positive (N or Delete)">
                Reject (N)
              </button>
              <span className="muted small">Tab: next · Shift+Y: accept all</span>
            </div>
          )}
          {message && (
            <div className={`toast${isInfo(message) ? ' info' : ''}`}>
              <ErrorBanner message={message} onClose={() => setMessage(null)} kind={isInfo(message) ? 'info' : 'error'} />
            </div>
          )}
          {help && (
            <div className="help" role="dialog" aria-label="Keyboard shortcuts" onClick={() => setHelp(false)}>
              <div className="card">
                <h3>Keyboard shortcuts</h3>
                <table>
                  <tbody>
                    {SHORTCUTS.map(([k, v]) => (
                      <tr key={k}>
                        <td>
                          <kbd>{k}</kbd>
                        </td>
                        <td>{v}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            </div>
          )}
        </div>
        {current?.video_id != null && c && (
          <VideoTimeline projectId={projectId} image={current} controller={c} loader={loader.current} state={state} classes={classes} colors={drawColors} openImage={openId} onMessage={setMessage} onPlaying={setPlaying} actions={timeline} taskFrames={taskMode ? images ?? [] : undefined} />
        )}
        <aside className="editor-side">
          <div className="side-head">
            <h3>Classes</h3>
            {!viewOnly && (
              <button className="ghost small" onClick={() => setClassSearch(true)} title={access.can('classes.write') ? 'Find a class by name, or add one (Q)' : 'Find a class by name (Q)'}>
                {access.can('classes.write') ? 'Find / add (Q)' : 'Find (Q)'}
              </button>
            )}
          </div>
          {classSearch && (
            <ClassSearch classes={classes} colors={drawColors} onPick={pickSearched} onAdd={access.can('classes.write') ? addClass : null} onClose={() => setClassSearch(false)} />
          )}
          {classes.length === 0 && (
            <p className="muted small">
              No classes.{' '}
              {access.can('classes.write') ? (
                'Press Q and type a name to add one.'
              ) : (
                <>
                  <a href={`/projects/${projectId}`} onClick={(e) => (e.preventDefault(), navigate(`/projects/${projectId}`))}>Ask a project admin</a> to add some.
                </>
              )}
            </p>
          )}
          {project?.project_type === 'classification' && (
            <label className="small label-mode" title={access.why('project.update') ?? 'A project setting: one class per image, or several'}>
              <input
                type="checkbox"
                checked={project.multi_label}
                disabled={!access.can('project.update')}
                onChange={(e) => void setMultiLabel(e.target.checked)}
              />{' '}
              Several classes per image (multi-label)
            </label>
          )}
          <ul className="class-list">
            {classes.map((cls, i) => {
              const checked = state?.classifications.includes(cls.id) ?? false;
              return (
                <li key={cls.id} className={!viewOnly && state?.classId === cls.id ? 'active' : viewOnly ? 'legend' : ''} onClick={viewOnly ? undefined : () => c?.pickClass(cls.id)} data-class-id={cls.id}>
                  <span className="swatch" style={{ background: drawColors.get(cls.id) ?? cls.color }} />
                  <span className="key">{i < 9 && !viewOnly ? i + 1 : ''}</span>
                  <span className="class-name">{cls.name}</span>
                  {state?.tool === 'classification' && <span>{checked ? '✓' : ''}</span>}
                </li>
              );
            })}
          </ul>
          {/* The objects list before the detector panel: it stays in view when the detector appears. */}
          <ObjectsPanel controller={c ?? null} classes={classes} selectedKey={state?.selectedKey ?? null} colors={drawColors} viewOnly={viewOnly} />
          {detectors.length > 0 && current && !state?.readOnly && (
            <DetectorAssist projectId={projectId} imageId={current.id} models={detectors} onResult={(anns, newClasses) => {
              if (newClasses) loadClasses();
              c?.adopt(anns);
              // The keyboard goes back to the canvas with the first suggestion selected: Y, N, Tab and class keys
              // work at once.
              if (c && anns.length > 0) {
                c.canvas.focus();
                if (c.state().selected?.status !== 'suggested') c.selectNextSuggestion(true);
              }
            }} onError={setMessage} />
          )}
          {current && <ExperimentPredictions projectId={projectId} image={current} classes={classes} />}
          <h3>Selection</h3>
          {state?.selected ? (
            <div className="small">
              <div>{state.selected.annotation_type}</div>
              {viewOnly ? (
                <div>{classes.find((k) => k.id === state.selected!.class_id)?.name ?? '?'}</div>
              ) : (
                <>
                  <select
                    value={state.selected.class_id}
                    onChange={(e) => c?.pickClass(Number(e.target.value))}
                    aria-label="Class of the selected shape"
                    disabled={state.readOnly}
                  >
                    {classes.map((cls) => (
                      <option key={cls.id} value={cls.id}>
                        {cls.name}
                      </option>
                    ))}
                  </select>{' '}
                  <button className="danger small" onClick={() => c?.deleteSelected()} disabled={state.readOnly}>
                    Delete
                  </button>
                </>
              )}
              {!taskMode && <h3 className="history-title">History</h3>}
              {taskMode ? null : state.selected.id > 0 ? (
                <Suspense fallback={<p className="muted small">Loading history…</p>}>
                  <AnnotationHistory
                    annotationId={state.selected.id}
                    version={changeKey(state.selected)}
                    classes={classes}
                    userName={userName}
                    readOnly={state.readOnly}
                    onReverted={(id) => void reloadCurrent(id)}
                    onError={setMessage}
                  />
                </Suspense>
              ) : (
                <p className="muted small">Saving…</p>
              )}
            </div>
          ) : (
            <p className="muted small">Nothing selected</p>
          )}
          <p className="muted small">
            <span data-testid="annotation-count">
              {state?.count ?? 0} annotation{state?.count === 1 ? '' : 's'}
              {state?.suggestions ? ` · ${state.suggestions} suggestion${state.suggestions === 1 ? '' : 's'} (not counted until accepted)` : ''}
            </span>{' '}
            · zoom {Math.round((state?.zoom ?? 1) * 100)}%
          </p>
        </aside>
      </div>
    </div>
  );
}

/** "Run detector on this image": the found objects appear at once and undo as one step. */
function DetectorAssist({ projectId, imageId, models, onResult, onError }: {
  projectId: number;
  imageId: number;
  models: Model[];
  onResult: (annotations: Annotation[], newClasses: boolean) => void;
  onError: (m: string) => void;
}) {
  const [model, setModel] = useState('');
  // null until the slider moves: the model's own cut-off (per class where promotion stored thresholds).
  const [confidence, setConfidence] = useState<number | null>(null);
  const [busy, setBusy] = useState(false);
  const [last, setLast] = useState<string | null>(null);
  const chosen = Number(model || models[0].id);
  const perClass = models.find((m) => m.id === chosen)?.class_thresholds;
  const run = async () => {
    setBusy(true);
    setLast(null);
    try {
      const res = await runDetector(projectId, imageId, chosen, confidence);
      const found = res.images.flatMap((i) => i.annotations);
      onResult(found, res.classes_created.length > 0);
      setLast(`${res.created} found${res.skipped ? `, ${res.skipped} skipped` : ''}`);
    } catch (e) {
      onError(`Detector: ${(e as Error).message}`);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="assist" aria-label="Detector">
      <h3>Detector</h3>
      <select value={chosen} onChange={(e) => setModel(e.target.value)} aria-label="Detector model">
        {models.map((m) => (
          <option key={m.id} value={m.id}>
            {m.name} ({m.task}{m.shared ? `, from ${m.shared.project_name}${m.shared.unmatched.length ? `; not here: ${m.shared.unmatched.join(', ')}` : ''}` : ''})
          </option>
        ))}
      </select>
      <label className="small">
        Confidence {confidence !== null ? confidence.toFixed(2) : perClass ? 'per class (set at promotion)' : '0.25'}
        <input type="range" min={0.05} max={0.95} step={0.05} value={confidence ?? 0.25} onChange={(e) => setConfidence(Number(e.target.value))} aria-label="Detector confidence" />
      </label>
      <button onClick={() => void run()} disabled={busy}>
        {busy ? 'Running…' : 'Run detector on this image'}
      </button>
      {last && <span className="muted small" data-testid="detector-result">{last}</span>}
    </div>
  );
}

/** Who holds the open image: this editor (renewed on a timer), someone else (read only), or nobody may edit. */
function LockBadge({ status }: { status: LockStatus }) {
  switch (status.kind) {
    case 'mine':
      return (
        <span className="lock-badge mine" data-testid="lock-status" title={`Renewed automatically; expires ${clock(status.lock.expires_at)} if this editor closes`}>
          Editing (locked by you)
        </span>
      );
    case 'theirs':
      return (
        <span className="lock-badge theirs" data-testid="lock-status" role="status">
          Locked by {status.lock.display_name || status.lock.email} until {clock(status.lock.expires_at)} · read only
        </span>
      );
    case 'view-only':
      return (
        <span className="lock-badge theirs" data-testid="lock-status">
          View only
        </span>
      );
    case 'unknown':
      return (
        <span className="lock-badge" data-testid="lock-status" title={status.message}>
          Lock unknown
        </span>
      );
    default:
      return (
        <span className="lock-badge" data-testid="lock-status">
          Taking lock…
        </span>
      );
  }
}

const TOOL_OF_SHAPE: Record<string, ToolName> = { bbox: 'box', polygon: 'polygon', mask: 'brush', classification: 'classification', keypoints: 'keypoints' };

/** The tool an editor opens with for a project type: the one drawing the first shape the type expects (as readiness counts them). */
export function toolForProject(type: Project['project_type']): ToolName {
  return TOOL_OF_SHAPE[PROJECT_TYPE_SHAPES[type][0]] ?? 'box';
}

/** A classification project: the image's class (or classes, multi-label) shown over the image. */
function ImageClasses({ ids, classes, colors, multiLabel }: { ids: number[]; classes: LabelClass[]; colors: Map<number, string>; multiLabel: boolean }) {
  const names = ids.map((id) => classes.find((k) => k.id === id)).filter((k): k is LabelClass => !!k);
  return (
    <div className="image-classes" data-testid="image-classes" aria-label={multiLabel ? 'Classes of this image' : 'Class of this image'}>
      {names.length === 0 ? (
        <span className="chip muted">{multiLabel ? 'No class yet (class keys toggle classes)' : 'No class yet (a class key sets it)'}</span>
      ) : (
        names.map((k) => (
          <span key={k.id} className="chip" data-class-id={k.id} style={{ borderColor: colors.get(k.id) ?? k.color }}>
            {k.name}
          </span>
        ))
      )}
    </div>
  );
}
