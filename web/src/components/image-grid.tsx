import { useCallback, useEffect, useRef, useState } from 'react';
import { request } from '../api.js';
import { Link } from '../router.js';
import type { ImageRecord, ReviewState } from '../types.js';

const CELL = 168;
const GAP = 8;
const PAGE = 500;

export interface GridFilter {
  split: string;
  annotated: 'all' | 'yes' | 'no';
  /** A class id as a string, or '' for any class. */
  classId: string;
  reviewState: ReviewState | '';
  /** Only these images (a quality check's findings), with what they are. */
  ids?: { ids: number[]; label: string };
}

export const NO_FILTER: GridFilter = { split: '', annotated: 'all', classId: '', reviewState: '' };

/** Ids sent per page when the grid shows a given list of images (the list route takes up to 1,000). */
const IDS_PAGE = 500;

/** The list route's query for a filter: the server filters, so the total and the cursor pages are the filtered ones. */
function filterParams(filter: GridFilter, params: URLSearchParams): void {
  if (filter.split) params.set('split', filter.split);
  if (filter.annotated !== 'all') params.set('annotated', String(filter.annotated === 'yes'));
  if (filter.classId) params.set('class_id', filter.classId);
  if (filter.reviewState) params.set('review_state', filter.reviewState);
}

/**
 * A virtualised thumbnail grid: only the rows in (and just around) the viewport exist in the DOM, and pages of
 * images are fetched by `after` cursor as the user scrolls, so 100k images scroll like 100.
 */
export function ImageGrid({ projectId, filter, reloadKey }: { projectId: number; filter: GridFilter; reloadKey: number }) {
  const [images, setImages] = useState<ImageRecord[]>([]);
  const [total, setTotal] = useState<number | null>(null);
  const [done, setDone] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [width, setWidth] = useState(800);
  const [height, setHeight] = useState(600);
  const box = useRef<HTMLDivElement>(null);
  const loading = useRef(false);
  const cursor = useRef<number | null>(null);
  const generation = useRef(0);

  const loadMore = useCallback(async () => {
    if (loading.current || done) return;
    loading.current = true;
    const gen = generation.current;
    const params = new URLSearchParams({ limit: String(PAGE) });
    filterParams(filter, params);
    // A list of ids is paged through by position in the list; everything else by the `after` cursor.
    const idsFrom = filter.ids ? (cursor.current ?? 0) : 0;
    if (filter.ids) params.set('ids', filter.ids.ids.slice(idsFrom, idsFrom + IDS_PAGE).join(',') || '0');
    else if (cursor.current !== null) params.set('after', String(cursor.current));
    try {
      const res = await request<ImageRecord[]>('GET', `/api/projects/${projectId}/images?${params}`);
      if (gen !== generation.current) return;
      const page = res.data;
      const count = res.headers.get('x-total-count');
      if (filter.ids) {
        cursor.current = idsFrom + IDS_PAGE;
        setTotal((t) => (t ?? 0) + Number(count ?? page.length));
        if (cursor.current >= filter.ids.ids.length) setDone(true);
      } else {
        if (count !== null) setTotal(Number(count));
        if (page.length > 0) cursor.current = page[page.length - 1].id;
        if (page.length < PAGE) setDone(true);
      }
      setImages((prev) => prev.concat(page));
    } catch (e) {
      if (gen === generation.current) {
        setError((e as Error).message);
        setDone(true);
      }
    } finally {
      if (gen === generation.current) loading.current = false;
    }
  }, [projectId, filter, done]);

  useEffect(() => {
    generation.current++;
    loading.current = false;
    cursor.current = null;
    setImages([]);
    setDone(false);
    setTotal(null);
    setError(null);
  }, [projectId, filter, reloadKey]);

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const observer = new ResizeObserver(() => {
      setWidth(el.clientWidth);
      setHeight(el.clientHeight);
    });
    observer.observe(el);
    return () => observer.disconnect();
  }, []);

  const columns = Math.max(1, Math.floor((width + GAP) / (CELL + GAP)));
  const rows = Math.ceil(images.length / columns);
  const firstRow = Math.max(0, Math.floor(scrollTop / (CELL + GAP)) - 2);
  const lastRow = Math.min(rows, Math.ceil((scrollTop + height) / (CELL + GAP)) + 2);

  useEffect(() => {
    // Keep fetching while the loaded rows do not fill the viewport plus a screen of look-ahead.
    if (!done && lastRow * columns + columns * 4 >= images.length) void loadMore();
  }, [lastRow, columns, images.length, done, loadMore]);

  const cells = [];
  for (let i = firstRow * columns; i < Math.min(images.length, lastRow * columns); i++) {
    const img = images[i];
    const row = Math.floor(i / columns);
    const col = i % columns;
    cells.push(
      <Link
        key={img.id}
        href={`/projects/${projectId}/annotate?image=${img.id}`}
        className="grid-cell"
        title={img.original_name}
        style={{ transform: `translate(${col * (CELL + GAP)}px, ${row * (CELL + GAP)}px)` }}
      >
        <img src={`/api/images/${img.id}/thumbnail`} alt={img.original_name} loading="lazy" />
        <span className="cell-label">
          {img.split ?? 'unassigned'} · {img.annotation_count} ann.
          {img.review_state && img.review_state !== 'unreviewed' && <b className={`review-badge ${img.review_state}`}>{img.review_state}</b>}
        </span>
      </Link>,
    );
  }

  return (
    <div className="image-grid" ref={box} onScroll={(e) => setScrollTop(e.currentTarget.scrollTop)}>
      <div className="muted small grid-count" data-testid="grid-count">
        {error ?? (total === null ? 'Loading images…' : `${total} image${total === 1 ? '' : 's'}${isFiltered(filter) ? (total === 1 ? ' matches the filters' : ' match the filters') : ''}`)}
      </div>
      <div style={{ position: 'relative', height: rows * (CELL + GAP) }}>{cells}</div>
    </div>
  );
}

export const isFiltered = (f: GridFilter) => f.split !== '' || f.annotated !== 'all' || f.classId !== '' || f.reviewState !== '' || f.ids !== undefined;
