/** Synthetic datasets of coloured shapes with exact labels, for tests, benchmarks and the demo. */
export { shapeGeometry, type SyntheticGeometryType } from './annotations.js';
export { datasetImage, generateDataset, type DatasetImage, type DatasetOptions } from './dataset.js';
export type { ExifOrientation } from './orientation.js';
export type { Point } from './raster.js';
export { SHAPE_CLASSES, type ShapeClass, type ShapeKind } from './shape-classes.js';
export {
  generateShapesImage,
  renderShapes,
  type ShapesImage,
  type ShapesImageOptions,
  type SyntheticBackground,
  type SyntheticFormat,
  type SyntheticShape,
} from './shapes.js';
