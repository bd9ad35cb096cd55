import { useEffect, useState } from 'react';
import { api } from '../api.js';
import { boundsOf } from '../editor/geometry.js';
import { asAnnotation, type Annotation, type ImageRecord, type LabelClass } from '../types.js';

/** Shapes read per image once per page load: a grid scrolled back and forth asks the server once. */
const cache = new Map<number, Promise<Annotation[]>>();

/** Forgets what was read (after the grid reloads: the shapes may have changed). */
export function clearOverlayCache(): void {
  cache.clear();
}

function shapesOf(imageId: number): Promise<Annotation[]> {
  let found = cache.get(imageId);
  if (!found) {
    found = api.get('/api/images/{image_id}/annotations', { path: { image_id: imageId } }).then((list) => list.map(asAnnotation), (): Annotation[] => []);
    cache.set(imageId, found);
  }
  return found;
}

/**
 * The image's shapes over its grid thumbnail: each shape's outline box in its class's colour, drawn over the
 * thumbnail as `object-fit: cover` crops it (the SVG slices the same way); suggestions dashed. Images without
 * annotations ask nothing.
 */
export function ThumbnailOverlay({ image, classes }: { image: ImageRecord; classes: readonly LabelClass[] }) {
  const [shapes, setShapes] = useState<Annotation[]>([]);
  useEffect(() => {
    let live = true;
    if (image.annotation_count > 0) void shapesOf(image.id).then((list) => live && setShapes(list));
    return () => {
      live = false;
    };
  }, [image.id, image.annotation_count]);
  if (shapes.length === 0) return null;
  const colors = new Map(classes.map((c) => [c.id, c.color]));
  const stroke = Math.max(2, Math.max(image.width, image.height) / 120);
  return (
    <svg className="thumb-overlay" data-testid="thumb-overlay" viewBox={`0 0 ${image.width} ${image.height}`} preserveAspectRatio="xMidYMid slice" aria-hidden="true">
      {shapes.map((a) => {
        const box = a.annotation_type === 'classification' ? null : boundsOf(a);
        if (!box) return null;
        return (
          <rect key={a.id} data-shape={a.id} x={box.x} y={box.y} width={Math.max(box.width, 1)} height={Math.max(box.height, 1)} fill="none"
            stroke={colors.get(a.class_id) ?? '#ffcc00'} strokeWidth={stroke} strokeDasharray={a.status === 'suggested' ? `${stroke * 2} ${stroke * 2}` : undefined} />
        );
      })}
    </svg>
  );
}
