import { useEffect, useRef, useState } from 'react';
import { ApiError, api, urlOf } from '../api.js';
import type { Lock } from '../types.js';

/** The server's locks last 60 s; renewing every 20 s survives two missed renewals. */
const RENEW_MS = 20_000;
/** While someone else holds the image, try again this often (their lock may be released or run out). */
const RETRY_MS = 10_000;

export type LockStatus =
  | { kind: 'pending' }
  | { kind: 'mine'; lock: Lock }
  | { kind: 'theirs'; lock: Lock }
  /** The caller may look but not edit (a viewer): no lock is taken. */
  | { kind: 'view-only' }
  /** The server could not be asked (network); editing stays on and writes are checked by the server anyway. */
  | { kind: 'unknown'; message: string };

const lockRoute = '/api/images/{image_id}/lock';

/**
 * Holds the editing lock of the open image: takes it when the image opens, renews it on a timer, keeps trying while
 * another user holds it, and releases it when the editor moves to another image or the page goes away.
 */
export function useImageLock(imageId: number | null): LockStatus {
  const [status, setStatus] = useState<LockStatus>({ kind: 'pending' });
  const held = useRef<number | null>(null);

  useEffect(() => {
    if (imageId === null) return;
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    setStatus({ kind: 'pending' });

    const take = async () => {
      let next: LockStatus;
      let delay = RENEW_MS;
      try {
        const lock = await api.post(lockRoute, { path: { image_id: imageId } });
        held.current = imageId;
        next = { kind: 'mine', lock };
      } catch (e) {
        if (held.current === imageId) held.current = null;
        const body = e instanceof ApiError ? (e.body as { lock?: Lock } | null) : null;
        if (e instanceof ApiError && e.status === 409 && body?.lock) {
          next = { kind: 'theirs', lock: body.lock };
          delay = RETRY_MS;
        } else if (e instanceof ApiError && e.status === 403) {
          next = { kind: 'view-only' };
          delay = 0;
        } else {
          next = { kind: 'unknown', message: (e as Error).message };
          delay = RETRY_MS;
        }
      }
      if (!live) {
        // The editor moved on while the request was in flight: give back what it got.
        if (next.kind === 'mine') {
          if (held.current === imageId) held.current = null;
          void api.delete(lockRoute, { path: { image_id: imageId } }).catch(() => undefined);
        }
        return;
      }
      setStatus(next);
      if (delay > 0) timer = setTimeout(() => void take(), delay);
    };
    void take();

    // Closing the tab or leaving the site: release with a request that outlives the page.
    const onPageHide = () => {
      if (held.current === imageId) void fetch(urlOf(lockRoute, { path: { image_id: imageId } }), { method: 'DELETE', credentials: 'same-origin', keepalive: true }).catch(() => undefined);
    };
    window.addEventListener('pagehide', onPageHide);
    return () => {
      live = false;
      clearTimeout(timer);
      window.removeEventListener('pagehide', onPageHide);
      if (held.current === imageId) {
        held.current = null;
        void api.delete(lockRoute, { path: { image_id: imageId } }).catch(() => undefined);
      }
    };
  }, [imageId]);

  return status;
}

/** "12:04:31" for an ISO timestamp. */
export const clock = (iso: string) => new Date(iso).toLocaleTimeString();
