import { useEffect, useState } from 'react';
import { api } from '../../api.js';
import type { ImageRecord, LabelClass, QcDisagreement, QcShape } from '../../types.js';
import { layersOf, VersionsOverlay, type VersionLayer } from './versions-overlay.js';

/** What a reviewer decides (POST …/quality-control/consensus): the merge, one annotator's version, or shapes of their choosing. */
export type Choice = { method: 'merge' } | { method: 'pick'; user_id: number } | { method: 'edit'; shapes: QcShape[] };

const toggled = (set: Set<string>, key: string) => (set.has(key) ? new Set([...set].filter((k) => k !== key)) : new Set([...set, key]));

/** A shape in words: "car 300, 300 40×40" for a box, the class and kind otherwise. */
function describe(shape: QcShape, classes: LabelClass[]): string {
  const name = classes.find((c) => c.id === shape.class_id)?.name ?? `class ${shape.class_id}`;
  const g = shape.geometry as { x?: number; y?: number; width?: number; height?: number };
  if (shape.annotation_type === 'bbox' && g.x !== undefined) return `${name} ${Math.round(g.x)}, ${Math.round(g.y ?? 0)} ${Math.round(g.width ?? 0)}×${Math.round(g.height ?? 0)}`;
  return `${name} (${shape.annotation_type})`;
}

/**
 * One disagreement: every annotator's version and the merge's proposal overlaid on the image, each layer shown or
 * hidden; the reviewer picks a version, accepts the merge, or ticks shapes from any layer and accepts those (edit).
 */
export function DisagreementView({ entry, classes, nameOf, onDecide }: { entry: QcDisagreement; classes: LabelClass[]; nameOf: (userId: number) => string; onDecide: (c: Choice) => void }) {
  const [image, setImage] = useState<ImageRecord | null>(null);
  const [hidden, setHidden] = useState<Set<string>>(new Set());
  const layers = layersOf(entry, nameOf);
  useEffect(() => {
    api.get('/api/images/{image_id}', { path: { image_id: entry.image_id } }).then(setImage, () => undefined);
  }, [entry.image_id]);
  return (
    <div className="disagreement" data-testid="disagreement" data-image={entry.image_id}>
      <div className="review-stage">{image && <VersionsOverlay image={image} classes={classes} layers={layers.filter((l) => !hidden.has(l.key))} />}</div>
      <table className="list versions-table">
        <tbody>
          {layers.map((l) => (
            <tr key={l.key} data-layer={l.key}>
              <td>
                <label className="check">
                  <input type="checkbox" checked={!hidden.has(l.key)} onChange={() => setHidden((h) => toggled(h, l.key))} aria-label={`Show ${l.name}`} />
                  <span className="swatch" style={{ background: l.colour }} /> {l.name} · {l.shapes.length} shapes
                </label>
              </td>
              <td>
                <button className={l.userId === undefined ? 'primary' : ''} onClick={() => onDecide(l.userId === undefined ? { method: 'merge' } : { method: 'pick', user_id: l.userId })}>
                  {l.userId === undefined ? 'Accept consensus merge' : `Pick ${l.name}`}
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <ComposeShapes layers={layers} classes={classes} onAccept={(shapes) => onDecide({ method: 'edit', shapes })} />
    </div>
  );
}

/** Edit: the reviewer ticks shapes from any version (or the proposal) and accepts exactly those. */
function ComposeShapes({ layers, classes, onAccept }: { layers: VersionLayer[]; classes: LabelClass[]; onAccept: (shapes: QcShape[]) => void }) {
  const [ticked, setTicked] = useState<Set<string>>(new Set());
  const items = layers.flatMap((l) => l.shapes.map((shape, i) => ({ key: `${l.key}:${i}`, label: `${l.name}: ${describe(shape, classes)}`, shape })));
  if (items.length === 0) return null;
  return (
    <details className="compose-shapes">
      <summary>Edit: accept chosen shapes</summary>
      <ul className="gt-list">
        {items.map((item) => (
          <li key={item.key}>
            <label className="check">
              <input type="checkbox" checked={ticked.has(item.key)} onChange={() => setTicked((t) => toggled(t, item.key))} /> {item.label}
            </label>
          </li>
        ))}
      </ul>
      <button onClick={() => onAccept(items.filter((i) => ticked.has(i.key)).map((i) => i.shape))}>Accept {ticked.size} chosen shapes</button>
    </details>
  );
}
