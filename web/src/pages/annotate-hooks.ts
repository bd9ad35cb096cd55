import { useEffect, useRef, useState, type MutableRefObject } from 'react';
import { api } from '../api.js';
import type { EditorController } from '../editor/editor-controller.js';
import type { Review } from '../types.js';

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
    api.get<Review[]>(`/api/projects/${projectId}/reviews?image_id=${imageId}&limit=1000`).then(
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
      const created = await api.post<Review>(`/api/projects/${projectId}/reviews`, { image_id: id });
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
