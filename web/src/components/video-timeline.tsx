import { useEffect, useRef, useState, type MutableRefObject } from 'react';
import { api } from '../api.js';
import type { EditorController, EditorState } from '../editor/editor-controller.js';
import type { ImageLoader } from '../editor/image-loader.js';
import type { ImageRecord, LabelClass, ResponseOf } from '../types.js';
import { TimelineBar } from './timeline-bar.js';
import { putTaskKeyframe, saveTaskShapes } from '../editor/task-shapes.js';

/** A track as the timeline shows it: the video's, or in a quality-control task the caller's own task track. */
type Track = Pick<ResponseOf<'/api/tracks/{id}', 'get'>, 'id' | 'class_id'> & { keyframes: { frame: number; outside: boolean }[] };

/** Frames decoded ahead of the open one (and behind it) so that stepping and playback find them ready. */
const AHEAD = 8;
const BEHIND = 2;
/** Playback never runs faster than this, whatever the video's rate. */
const MAX_FPS = 30;

/** What the editor's keys do on a video frame (the `?` sheet lists them). */
export interface TimelineActions {
  step(delta: number): void;
  keyframe(delta: number): void;
  togglePlay(): void;
}

declare global {
  interface Window {
    /** The timeline's handle for the browser test and bench/video-editor.ts. */
    __versaTimeline?: { frame: () => number | null; play: () => void; pause: () => void; shown: () => number; tracks: () => Track[] };
  }
}

interface Props {
  projectId: number;
  image: ImageRecord;
  controller: EditorController;
  loader: ImageLoader;
  state: EditorState | null;
  classes: LabelClass[];
  colors: Map<number, string>;
  /** Opens an image of the editor's list; false when it is not in the list (a grid filter left it out). */
  openImage(id: number): Promise<boolean>;
  onMessage(message: string): void;
  /** Told when playback starts and stops. */
  onPlaying?(playing: boolean): void;
  actions: MutableRefObject<TimelineActions | null>;
  /**
   * In a quality-control task: the frames of the caller's task set on this video (the timeline moves over them), whose
   * tracks are the caller's own in the task (issue 29); the video's real tracks are neither shown nor written.
   */
  taskFrames?: ImageRecord[];
}

/**
 * The timeline under the canvas when the open image is a video's frame: play / pause, frame step, keyframe jumps,
 * the scrubber with the selected track's keyframes marked, the track list (visibility, lock), the keyframe toggle and
 * "propagate forward N frames". Neighbouring frames are prefetched so stepping finds them decoded.
 */
export function VideoTimeline({ projectId, image, controller, loader, state, classes, colors, openImage, onMessage, onPlaying, actions, taskFrames }: Props) {
  const videoId = image.video_id!;
  const inTask = taskFrames !== undefined;
  const [frames, setFrames] = useState<ImageRecord[]>([]);
  const [tracks, setTracks] = useState<Track[]>([]);
  const [fps, setFps] = useState(25);
  const [playing, setPlaying] = useState(false);
  const [span, setSpan] = useState(10);
  const [, setFlags] = useState(0);
  const playingRef = useRef(false);
  const shown = useRef(0);
  const live = useRef({ frames, tracks, image });
  live.current = { frames, tracks, image };

  const loadTracks = () =>
    (inTask
      ? api.get('/api/projects/{id}/quality-control/tasks/{image_id}/tracks', { path: { id: projectId, image_id: live.current.image.id } })
      : api.get('/api/videos/{id}/tracks', { path: { id: videoId } })
    ).then(setTracks, (e) => onMessage((e as Error).message));

  useEffect(() => {
    setFrames([]);
    if (inTask) setFrames(taskFrames.filter((f) => f.video_id === videoId));
    else {
      api.get('/api/projects/{id}/images', { path: { id: projectId }, query: { video_id: videoId, limit: 10000 } }).then(
        (list) => setFrames([...list].sort((a, b) => (a.frame ?? 0) - (b.frame ?? 0))),
        (e) => onMessage((e as Error).message),
      );
    }
    api.get('/api/videos/{id}', { path: { id: videoId } }).then((v) => setFps(v.fps / Math.max(1, v.step) || 25), () => undefined);
    void loadTracks();
    // A track edited on one frame changes its shape on the others: their cached annotations are read again.
    controller.onTrackChanged = () => {
      loader.forgetAnnotations(live.current.frames.map((f) => f.id), live.current.image.id);
      void loadTracks();
    };
    return () => {
      controller.onTrackChanged = null;
      playingRef.current = false;
    };
  }, [videoId, taskFrames]);

  const at = frames.findIndex((f) => f.id === image.id);

  useEffect(() => {
    if (at < 0) return;
    for (let i = at - BEHIND; i <= at + AHEAD; i++) if (i >= 0 && i < frames.length && i !== at) void loader.load(frames[i]).catch(() => undefined);
  }, [at, frames]);

  const openAt = async (index: number): Promise<boolean> => {
    const list = live.current.frames;
    if (index < 0 || index >= list.length) return false;
    const opened = await openImage(list[index].id);
    if (!opened) onMessage(`Frame ${list[index].frame} is not in the editor's list: open the video's frames without a grid filter`);
    else shown.current++;
    return opened;
  };
  const indexNow = () => live.current.frames.findIndex((f) => f.id === live.current.image.id);

  /** The track the timeline acts on: the selected shape's, when it belongs to one. */
  const selectedTrack = tracks.find((t) => t.id === state?.selected?.track_id) ?? null;
  const frameNo = image.frame ?? 0;
  const isKeyframe = selectedTrack?.keyframes.some((k) => k.frame === frameNo) ?? false;

  const jumpKeyframe = (delta: number) => {
    const list = live.current.frames;
    const here = list[indexNow()]?.frame ?? 0;
    const track = live.current.tracks.find((t) => t.id === controller.state().selected?.track_id);
    const keyframes = (track ? track.keyframes : live.current.tracks.flatMap((t) => t.keyframes)).map((k) => k.frame);
    const target = delta > 0 ? Math.min(...keyframes.filter((f) => f > here)) : Math.max(...keyframes.filter((f) => f < here));
    if (!Number.isFinite(target)) return;
    const index = list.findIndex((f) => f.frame === target);
    if (index >= 0) void openAt(index);
  };

  const play = async () => {
    if (playingRef.current) return;
    playingRef.current = true;
    setPlaying(true);
    controller.setPlaying(true);
    onPlaying?.(true);
    const interval = 1000 / Math.min(MAX_FPS, fps);
    let due = performance.now();
    while (playingRef.current) {
      const next = indexNow() + 1;
      if (next >= live.current.frames.length || !(await openAt(next))) break;
      due += interval;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      else due = performance.now();
    }
    playingRef.current = false;
    setPlaying(false);
    controller.setPlaying(false);
    onPlaying?.(false);
  };
  const pause = () => {
    playingRef.current = false;
  };

  actions.current = {
    step: (delta) => {
      pause();
      void openAt(indexNow() + delta);
    },
    keyframe: jumpKeyframe,
    togglePlay: () => (playingRef.current ? pause() : void play()),
  };
  useEffect(() => {
    window.__versaTimeline = { frame: () => live.current.image.frame ?? null, play: () => void play(), pause, shown: () => shown.current, tracks: () => live.current.tracks };
  });
  useEffect(() => () => void (actions.current = null), []);

  /** Re-reads the tracks and every frame's shapes after a change made here (not through a shape edit). */
  const changed = async () => {
    loader.forgetAnnotations(live.current.frames.map((f) => f.id), null);
    await loadTracks();
    await openImage(live.current.image.id);
  };

  const patchTrack = async (id: number, body: Record<string, unknown>) => {
    try {
      await api.patch('/api/tracks/{id}', { path: { id }, body: body as never });
      await changed();
    } catch (e) {
      onMessage((e as Error).message);
    }
  };

  const toggleKeyframe = () => {
    const sel = state?.selected;
    if (!selectedTrack || !sel) return onMessage('Select a track’s shape first');
    if (inTask) {
      // A task track's keyframe is its shape saved as it is here; one is taken off by deleting or moving the shape.
      if (isKeyframe) return onMessage('This frame is a keyframe of the track: move its shape, or delete it to hide the track from here');
      const key = controller.keyOfTrack(selectedTrack.id);
      if (key !== null) controller.store?.update(key, { class_id: sel.class_id, annotation_type: sel.annotation_type, geometry: sel.geometry });
      return;
    }
    if (isKeyframe) void patchTrack(selectedTrack.id, { delete_frames: [frameNo] });
    else void patchTrack(selectedTrack.id, { keyframes: [{ frame: frameNo, annotation_type: sel.annotation_type, geometry: sel.geometry }] });
  };

  /**
   * The selected shape held still for the next `span` frames: a track's shape gets a keyframe there, copied from this
   * frame; a plain annotation becomes a track with keyframes here and there (the annotation is its first keyframe).
   */
  const propagate = async () => {
    const sel = state?.selected;
    if (!sel || sel.annotation_type === 'classification' || sel.annotation_type === 'mask') return onMessage('Select a box, polygon, points or keypoints shape to propagate');
    const target = frames[Math.min(frames.length - 1, at + Math.max(1, span))];
    if (!target || target.id === image.id) return onMessage('This is the last frame');
    const keyframe = (frame: number) => ({ frame, annotation_type: sel.annotation_type, geometry: sel.geometry });
    try {
      if (inTask) {
        // The task's own track: the shape becomes (or stays) its keyframe here, and is held to a keyframe N frames on.
        await controller.store?.settled();
        const trackId = sel.track_id ?? Math.max(0, ...live.current.tracks.map((t) => t.id)) + 1;
        const here = [...(controller.store?.items.values() ?? [])].map((a) => (a.id === sel.id ? { ...a, track_id: trackId, interpolated: false } : a));
        await saveTaskShapes(projectId, image.id, here);
        await putTaskKeyframe(projectId, target.id, { class_id: sel.class_id, annotation_type: sel.annotation_type, geometry: sel.geometry, track_id: trackId });
      } else if (sel.track_id != null) {
        await api.patch('/api/tracks/{id}', { path: { id: sel.track_id }, body: { keyframes: [keyframe(target.frame!) as never] } });
      } else {
        await controller.store?.settled();
        await api.post('/api/videos/{id}/tracks', { path: { id: videoId }, body: { class_id: sel.class_id, ...(sel.attributes ? { attributes: sel.attributes } : {}), keyframes: [keyframe(frameNo), keyframe(target.frame!)] as never } });
        if (sel.id > 0) await api.delete('/api/annotations/{id}', { path: { id: sel.id } });
      }
      await changed();
      onMessage(`Propagated to frame ${target.frame}`);
    } catch (e) {
      onMessage((e as Error).message);
    }
  };

  const selectTrack = (id: number) => controller.selectKey(controller.keyOfTrack(id));
  // The checkboxes give the focus back, so that the frame keys go on working after a click on them.
  const refresh = () => setFlags((n) => n + 1);
  const last = frames.length - 1;
  const className = (id: number) => classes.find((c) => c.id === id)?.name ?? `class ${id}`;

  return (
    <section className="timeline" aria-label="Timeline" data-testid="timeline">
      <div className="timeline-controls">
        <button onClick={() => actions.current?.step(-1)} disabled={at <= 0} title="Previous frame (,)" aria-label="Previous frame">‹</button>
        <button onClick={() => actions.current?.togglePlay()} title="Play / pause (/)" aria-label={playing ? 'Pause' : 'Play'}>{playing ? '❚❚' : '▶'}</button>
        <button onClick={() => actions.current?.step(1)} disabled={at < 0 || at >= last} title="Next frame (.)" aria-label="Next frame">›</button>
        <button onClick={() => jumpKeyframe(-1)} title="Previous keyframe (<)" aria-label="Previous keyframe">◆‹</button>
        <button onClick={() => jumpKeyframe(1)} title="Next keyframe (>)" aria-label="Next keyframe">›◆</button>
        <span className="small" data-testid="frame-position">
          Frame {frameNo} · {at + 1} / {frames.length}
        </span>
        <div className="spacer" />
        <button onClick={toggleKeyframe} disabled={!selectedTrack || state?.readOnly} aria-pressed={isKeyframe} title="Make this frame a keyframe of the selected track, or remove its keyframe here">
          {isKeyframe ? '◆ Keyframe' : '◇ Keyframe'}
        </button>
        <label className="small">
          Propagate
          <input type="number" min={1} max={10000} value={span} onChange={(e) => setSpan(Math.max(1, Number(e.target.value) || 1))} aria-label="Frames to propagate" style={{ width: 56 }} />
        </label>
        <button onClick={() => void propagate()} disabled={!state?.selected || state.readOnly} title="Hold the selected shape still for the next N frames (a keyframe N frames on)">
          Propagate forward
        </button>
      </div>
      <TimelineBar
        value={Math.max(0, at)}
        max={Math.max(0, last)}
        onSeek={(index) => void openAt(index)}
        label="Frame"
        marks={selectedTrack && last > 0 ? selectedTrack.keyframes.flatMap((k) => {
          const index = frames.findIndex((f) => f.frame === k.frame);
          return index < 0 ? [] : [{ key: k.frame, at: index / last, className: k.outside ? 'outside' : undefined, title: `keyframe at ${k.frame}` }];
        }) : []}
      />
      <ul className="track-list" aria-label="Tracks">
        {tracks.map((t) => (
          <li key={t.id} className={t.id === selectedTrack?.id ? 'active' : ''} data-track-id={t.id}>
            <span className="swatch" style={{ background: colors.get(t.class_id) ?? '#999' }} />
            <button className="link" onClick={() => selectTrack(t.id)}>#{t.id} {className(t.class_id)}</button>
            <span className="muted small">{t.keyframes.length} keyframes</span>
            <label className="small">
              <input type="checkbox" checked={!controller.hiddenTracks.has(t.id)} onChange={(e) => (controller.setTrackHidden(t.id, !e.target.checked), e.target.blur(), refresh())} aria-label={`Show track ${t.id}`} />
              visible
            </label>
            <label className="small">
              <input type="checkbox" checked={controller.lockedTracks.has(t.id)} onChange={(e) => (controller.setTrackLocked(t.id, e.target.checked), e.target.blur(), refresh())} aria-label={`Lock track ${t.id}`} />
              locked
            </label>
          </li>
        ))}
        {tracks.length === 0 && <li className="muted small">No tracks in this video yet: draw a shape and propagate it forward.</li>}
      </ul>
    </section>
  );
}
