import { useEffect, useRef, useState, type MutableRefObject } from 'react';
import { api } from '../api.js';
import type { EditorController, ToolName } from '../editor/editor-controller.js';
import type { LabelClass, Review } from '../types.js';

declare global {
  interface Window {
    /**
     * The editor's handle for the browser tests (test/browser/web-pages.test.ts) and the editor benchmark
     * (bench/editor.ts), which drive the production bundle and read the controller's state through it.
     */
    __versaEditor?: {
      controller: EditorController;
      imageId: () => number | null;
      lastSwitchMs: () => number;
      /** performance.now() when the first image was painted (time to first paint of the editor). */
      firstPaintAt: () => number;
      go: (delta: number) => Promise<void>;
    };
  }
}

/** Publishes the editor's handle on `window` (see above); refreshed every render so `go` is current. */
export function useEditorHandle(
  controller: MutableRefObject<EditorController | null>,
  switchMs: MutableRefObject<number>,
  firstPaintAt: MutableRefObject<number>,
  go: (delta: number) => Promise<void>,
): void {
  useEffect(() => {
    window.__versaEditor = {
      controller: controller.current!,
      imageId: () => controller.current?.image?.imageId ?? null,
      lastSwitchMs: () => switchMs.current,
      firstPaintAt: () => firstPaintAt.current,
      go,
    };
  });
}

/** The review of the image open in the editor (its latest submission), and submitting it for review. */
export function useImageReview(projectId: number, imageId: number | null, onError: (message: string) => void) {
  const [review, setReview] = useState<Review | null>(null);
  const [submitting, setSubmitting] = useState(false);
  const current = useRef(imageId);
  current.current = imageId;

  useEffect(() => {
    setReview(null);
    if (imageId === null) return;
    let live = true;
    api.get('/api/projects/{id}/reviews', { path: { id: projectId }, query: { image_id: imageId, limit: 1000 } }).then(
      (list) => live && setReview(list.at(-1) ?? null),
      () => undefined,
    );
    return () => void (live = false);
  }, [imageId]);

  /** Waits for `settled` (pending saves), then submits; the review, or null when it failed (reported). */
  const submit = async (id: number, settled: () => Promise<unknown> | undefined): Promise<Review | null> => {
    setSubmitting(true);
    try {
      await settled();
      const created = await api.post('/api/projects/{id}/reviews', { path: { id: projectId }, body: { image_id: id } });
      if (current.current === id) setReview(created);
      return created;
    } catch (e) {
      onError(`Submit for review: ${(e as Error).message}`);
      return null;
    } finally {
      setSubmitting(false);
    }
  };

  return { review, submitting, submit };
}

/** What the editor's keys act on besides the controller: read afresh at every key press. */
export interface EditorKeys {
  classes(): LabelClass[];
  toolForKey(key: string): ToolName | undefined;
  go(delta: number): void;
  toggleHelp(): void;
  closeHelp(): void;
  /** Q: the type-ahead class search. */
  openClassSearch(): void;
  /** The video timeline's actions when the open image is a video's frame. */
  video(): { step(delta: number): void; keyframe(delta: number): void; togglePlay(): void } | null;
}

/**
 * The editor's keyboard (the help overlay lists it): space to pan, Ctrl+Z / Ctrl+Shift+Z / Ctrl+Y, classes 1–9, tool
 * keys, Tab / Y / N (Shift: all) for suggestions, H / L (hide / lock the selected shape), Delete, Backspace, Enter, Escape, A / D and arrows, F, [ and ], ?.
 * Keys typed into inputs are left alone.
 */
export function useEditorKeys(controller: MutableRefObject<EditorController | null>, keys: EditorKeys): void {
  const current = useRef(keys);
  current.current = keys;
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const c = controller.current;
      const k = current.current;
      const target = e.target as HTMLElement;
      if (!c || target.closest('input, textarea, select')) return;
      const key = e.key;
      const ctrl = e.ctrlKey || e.metaKey;
      if (key === ' ') {
        c.setSpace(true);
        e.preventDefault();
        return;
      }
      if (ctrl && (key === 'z' || key === 'Z')) {
        e.preventDefault();
        if (e.shiftKey) c.redo();
        else c.undo();
        return;
      }
      if (ctrl && key === 'y') {
        e.preventDefault();
        c.redo();
        return;
      }
      if (ctrl || e.altKey) return;
      // The active tool's and the selected shape's own keys (a skeleton's 0 / X, R to turn, Shift+P for a part).
      if (c.shapeKey(key)) {
        e.preventDefault();
        return;
      }
      if (/^[1-9]$/.test(key)) {
        const cls = k.classes()[Number(key) - 1];
        if (cls) c.pickClass(cls.id);
        return;
      }
      // H hides the selected shape wherever the focus is (the objects list's keys); L locks it in the Select tool
      // (in the drawing tools, and with nothing selected, L is the polyline tool).
      if (c.selectedKey !== null && (key === 'h' || (key === 'l' && c.tool === 'select'))) {
        if (key === 'h') c.toggleHidden(c.selectedKey);
        else c.toggleLocked(c.selectedKey);
        e.preventDefault();
        return;
      }
      const tool = k.toolForKey(key);
      if (tool) return c.setTool(tool);
      switch (key) {
        // Predictions, keyboard-first: Tab to the next suggestion, Y accepts, N rejects; Shift for all of them.
        case 'Tab':
          e.preventDefault();
          c.selectNextSuggestion();
          return;
        case 'y':
          c.decideSelected(true);
          return;
        case 'n':
          c.decideSelected(false);
          return;
        case 'Y':
          c.decideAll(true);
          return;
        case 'N':
          c.decideAll(false);
          return;
        case 'Delete':
          c.deleteSelected();
          break;
        case 'Backspace':
          if (!c.stepBack()) c.deleteSelected();
          break;
        case 'Enter':
          c.commit();
          break;
        case 'Escape':
          k.closeHelp();
          c.cancel();
          break;
        case 'a':
        case 'A':
        case 'ArrowLeft':
          k.go(-1);
          break;
        case 'd':
        case 'D':
        case 'ArrowRight':
          k.go(1);
          break;
        case 'f':
        case 'F':
          c.fit();
          break;
        case '[':
          c.setBrushSize(c.brushSize / 1.25);
          break;
        case ']':
          c.setBrushSize(c.brushSize * 1.25);
          break;
        case '?':
          k.toggleHelp();
          break;
        case 'q':
        case 'Q':
          k.openClassSearch();
          break;
        case ',':
        case '.':
          k.video()?.step(key === ',' ? -1 : 1);
          break;
        case '<':
        case '>':
          k.video()?.keyframe(key === '<' ? -1 : 1);
          break;
        case '/':
          k.video()?.togglePlay();
          break;
        default:
          return;
      }
      e.preventDefault();
    };
    const onKeyUp = (e: KeyboardEvent) => e.key === ' ' && controller.current?.setSpace(false);
    window.addEventListener('keydown', onKey);
    window.addEventListener('keyup', onKeyUp);
    return () => {
      window.removeEventListener('keydown', onKey);
      window.removeEventListener('keyup', onKeyUp);
    };
  }, []);
}
