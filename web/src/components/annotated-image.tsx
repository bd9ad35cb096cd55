import type { Annotation, BboxGeometry, ImageRecord, LabelClass, MaskGeometry, PolygonGeometry } from '../types.js';

/**
 * An image with its annotations drawn over it, read-only: boxes and polygons as SVG in image pixels (so they scale
 * with the picture), masks by their bounding box, image-level classes as chips.
 */
export function AnnotatedImage({ image, annotations, classes }: { image: ImageRecord; annotations: Annotation[]; classes: LabelClass[] }) {
  const byId = new Map(classes.map((c) => [c.id, c]));
  const color = (id: number) => byId.get(id)?.color ?? '#ff00ff';
  const stroke = Math.max(1.5, Math.max(image.width, image.height) / 400);
  const tags = annotations.filter((a) => a.annotation_type === 'classification');
  return (
    <figure className="annotated-image">
      <div className="annotated-frame" style={{ aspectRatio: `${image.width} / ${image.height}` }}>
        <img src={`/api/projects/${image.project_id}/images/file/${encodeURIComponent(image.filename)}`} alt={image.original_name} />
        <svg viewBox={`0 0 ${image.width} ${image.height}`} preserveAspectRatio="none" aria-label="Annotations" data-testid="review-annotations">
          {annotations.map((a) => {
            const c = color(a.class_id);
            if (a.annotation_type === 'polygon') {
              const pts = (a.geometry as PolygonGeometry).points.map((p) => p.join(',')).join(' ');
              return <polygon key={a.id} points={pts} fill={c} fillOpacity={0.2} stroke={c} strokeWidth={stroke} />;
            }
            const box = a.annotation_type === 'mask' ? (a.geometry as MaskGeometry).bbox : a.annotation_type === 'bbox' ? (a.geometry as BboxGeometry) : undefined;
            if (!box) return null;
            return (
              <rect
                key={a.id}
                x={box.x}
                y={box.y}
                width={box.width}
                height={box.height}
                fill={c}
                fillOpacity={a.annotation_type === 'mask' ? 0.3 : 0.08}
                stroke={c}
                strokeWidth={stroke}
                strokeDasharray={a.annotation_type === 'mask' ? `${stroke * 3} ${stroke * 2}` : undefined}
              />
            );
          })}
        </svg>
      </div>
      {tags.length > 0 && (
        <figcaption>
          {tags.map((t) => (
            <span key={t.id} className="chip" style={{ borderColor: color(t.class_id) }}>
              {byId.get(t.class_id)?.name ?? `class ${t.class_id}`}
            </span>
          ))}
        </figcaption>
      )}
    </figure>
  );
}

/** "car 3 · person 1": what an image's annotations are, by class. */
export function classSummary(annotations: Annotation[], classes: LabelClass[]): string {
  const counts = new Map<number, number>();
  for (const a of annotations) counts.set(a.class_id, (counts.get(a.class_id) ?? 0) + 1);
  const names = new Map(classes.map((c) => [c.id, c.name]));
  return [...counts].map(([id, n]) => `${names.get(id) ?? `class ${id}`} ${n}`).join(' · ') || 'no annotations';
}
