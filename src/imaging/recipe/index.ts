/**
 * The dataset-version image recipe (not a data pipeline: those are src/modules/pipelines/): the preprocessing and
 * augmentation configs → planned steps (lineage) → executed outputs.
 */
export * from './recipe.js';
export * from './steps.js';
export { planOutputs, resizeStep, staticCropRegion, type OutputPlan, type Plan, type PlanInput, type SourceDescriptor } from './planner.js';
export { executePlan, type ExecuteOptions, type RecipeInput, type RecipeOutput } from './executor.js';
export {
  composeGeometry,
  geometryStages,
  transformThrough,
  mapClasses,
  orientationMap,
  transformAnnotations,
  transformBox,
  transformMask,
  type AnnotationGeometry,
  type RecipeAnnotation,
} from './geometry-transform.js';
export { tileRegions, type TileRegion } from './tile.js';
export { composeMosaic, quadrants, type MosaicTile, type RawImage } from './mosaic.js';
export type { Affine, Point } from './affine.js';
