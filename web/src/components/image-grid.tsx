import { useCallback, useEffect, useRef, useState } from 'react';
import { api } from '../api.js';
import { Link } from '../router.js';
import type { ImageListRecord, ImageRecord, LabelClass, QueryOf, ReviewState } from '../types.js';
import { clearOverlayCache, ThumbnailOverlay } from './thumbnail-overlay.js';
import { REVIEW_STATES, SPLIT_NAMES } from '../vocabulary.js';

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

type ImageListQuery = Partial<QueryOf<'/api/projects/{id}/images', 'get'>>;

/**
 * The list route's query for a filter (the editor pages through the same filtered list): the server filters, so the
 * total and the cursor pages are the filtered ones.
 */
export function listQuery(filter: GridFilter): ImageListQuery {
  return {
    split: (filter.split || undefined) as ImageListQuery['split'],
    annotated: filter.annotated === 'all' ? undefined : filter.annotated === 'yes',
    class_id: filter.classId ? Number(filter.classId) : undefined,
    review_state: filter.reviewState || undefined,
  };
}

/**
 * A virtualised thumbnail grid: only the rows in (and just around) the viewport exist in the DOM, and pages of
 * images are fetched by `after` cursor as the user scrolls, so 100k images scroll like 100.
 */
/** Clicking a cell toggles it in `selection` instead of opening the editor (the assignment page). */
export interface GridSelection {
  selected: ReadonlySet<number>;
  toggle(id: number): void;
}

export function ImageGrid({ projectId, filter, reloadKey, selection, scrollKey, classes, onImages }: {
  projectId: number;
  filter: GridFilter;
  reloadKey: number;
  selection?: GridSelection;
  scrollKey?: string;
  /** The project's classes: with them, each thumbnail shows its shapes in their colours. */
  classes?: readonly LabelClass[];
  /** The images loaded so far (a "select all" picks them). */
  onImages?: (images: readonly ImageRecord[]) => void;
}) {
  const [images, setImages] = useState<ImageListRecord[]>([]);
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
  // Coming back from the editor: scroll to where the grid was (kept per project and filter for the session).
  const restore = useRef<number | null>(scrollKey ? Number(sessionStorage.getItem(scrollKey) ?? 0) || null : null);

  const loadMore = useCallback(async () => {
    if (loading.current || done) return;
    loading.current = true;
    const gen = generation.current;
    const query: ImageListQuery = { limit: PAGE, ...listQuery(filter) };
    // A list of ids is paged through by position in the list; everything else by the `after` cursor.
    const idsFrom = filter.ids ? (cursor.current ?? 0) : 0;
    if (filter.ids) query.ids = filter.ids.ids.slice(idsFrom, idsFrom + IDS_PAGE).join(',') || '0';
    else if (cursor.current !== null) query.after = cursor.current;
    try {
      const res = await api.page('/api/projects/{id}/images', { path: { id: projectId }, query });
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
    clearOverlayCache();
  }, [projectId, filter, reloadKey]);
  useEffect(() => {
    onImages?.(images);
  }, [images]);

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
    const style = { transform: `translate(${col * (CELL + GAP)}px, ${row * (CELL + GAP)}px)` };
    if (selection) {
      const on = selection.selected.has(img.id);
      cells.push(
        <button
          key={img.id}
          type="button"
          className={`grid-cell selectable${on ? ' selected' : ''}`}
          aria-pressed={on}
          data-image-id={img.id}
          title={img.original_name}
          style={style}
          onClick={() => selection.toggle(img.id)}
        >
          <img src={`/api/images/${img.id}/thumbnail`} alt={img.original_name} loading="lazy" />
          {classes && <ThumbnailOverlay image={img} classes={classes} />}
          <span className="cell-label">
            {on ? '✓ ' : ''}
            {img.original_name}
          </span>
        </button>,
      );
      continue;
    }
    cells.push(
      <Link
        key={img.id}
        href={`/projects/${projectId}/annotate?${gridQuery(filter, img.id, i)}`}
        className="grid-cell"
        title={img.original_name}
        style={style}
      >
        <img src={`/api/images/${img.id}/thumbnail`} alt={img.original_name} loading="lazy" />
        {classes && <ThumbnailOverlay image={img} classes={classes} />}
        <span className="cell-label">
          {img.split ?? 'unassigned'} · {img.annotation_count} ann.
          {img.review_state && img.review_state !== 'unreviewed' && <b className={`review-badge ${img.review_state}`}>{img.review_state}</b>}
        </span>
      </Link>,
    );
  }

  useEffect(() => {
    const el = box.current;
    if (!el || restore.current === null) return;
    if (el.scrollHeight - el.clientHeight >= restore.current || done) {
      el.scrollTop = restore.current;
      setScrollTop(el.scrollTop);
      restore.current = null;
    }
  }, [images.length, done]);

  const onScroll = (top: number) => {
    setScrollTop(top);
    if (scrollKey) sessionStorage.setItem(scrollKey, String(Math.round(top)));
  };

  return (
    <div className="image-grid" ref={box} onScroll={(e) => onScroll(e.currentTarget.scrollTop)}>
      <div className="muted small grid-count" data-testid="grid-count">
        {error ?? (total === null ? 'Loading images…' : `${total} image${total === 1 ? '' : 's'}${isFiltered(filter) ? (total === 1 ? ' matches the filters' : ' match the filters') : ''}`)}
      </div>
      <div style={{ position: 'relative', height: rows * (CELL + GAP) }}>{cells}</div>
    </div>
  );
}

export const isFiltered = (f: GridFilter) => f.split !== '' || f.annotated !== 'all' || f.classId !== '' || f.reviewState !== '' || f.ids !== undefined;

/** The grid filter as URL query parameters (kept in the project page's URL and handed to the editor). */
export function filterToQuery(filter: GridFilter, params = new URLSearchParams()): URLSearchParams {
  if (filter.split) params.set('split', filter.split);
  if (filter.annotated !== 'all') params.set('annotated', filter.annotated);
  if (filter.classId) params.set('class', filter.classId);
  if (filter.reviewState) params.set('review', filter.reviewState);
  if (filter.ids) {
    params.set('ids', filter.ids.ids.join(','));
    params.set('ids_label', filter.ids.label);
  }
  return params;
}

export function filterFromQuery(query: URLSearchParams): GridFilter {
  const annotated = query.get('annotated');
  return {
    split: [...SPLIT_NAMES, 'none'].includes(query.get('split') ?? '') ? query.get('split')! : '',
    annotated: annotated === 'yes' || annotated === 'no' ? annotated : 'all',
    classId: /^\d+$/.test(query.get('class') ?? '') ? query.get('class')! : '',
    reviewState: REVIEW_STATES.find((r) => r === query.get('review')) ?? '',
    ...(/^\d+(,\d+)*$/.test(query.get('ids') ?? '') ? { ids: { ids: query.get('ids')!.split(',').map(Number), label: query.get('ids_label') ?? 'selected images' } } : {}),
  };
}

/** The editor's query for an image opened from the grid: the image, its position in the list and the filter. */
function gridQuery(filter: GridFilter, imageId: number, index: number): string {
  const params = new URLSearchParams({ image: String(imageId), pos: String(index) });
  return filterToQuery(filter, params).toString();
}
