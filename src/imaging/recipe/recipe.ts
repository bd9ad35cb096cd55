/**
 * The recipe of a dataset version: `preprocessing_config` (applied to every split) and `augmentation_config`
 * (extra randomised outputs, off by default). One TypeBox schema per config is its validation, its defaults and
 * the form description served by GET /api/pipeline/defaults.
 */
import { Type, type Static, type TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { StringEnum } from '../../http/schemas.js';
import type { ValidationIssue } from '../../http/errors.js';

export const RESIZE_MODES = ['stretch', 'fit_black', 'fit_white', 'fit_reflect', 'fill', 'fit_within'] as const;
export type ResizeMode = (typeof RESIZE_MODES)[number];
export const CONTRAST_METHODS = ['none', 'stretch', 'equalize', 'clahe'] as const;
export type ContrastMethod = (typeof CONTRAST_METHODS)[number];
export const ROTATE_90_CHOICES = ['cw', 'ccw', '180'] as const;
export type Rotate90 = (typeof ROTATE_90_CHOICES)[number];
export const APPLY_TO = ['train', 'train_valid', 'all'] as const;
export type ApplyTo = (typeof APPLY_TO)[number];

const MAX_SIDE = 8192;

const bool = (value: boolean, description: string) => Type.Optional(Type.Boolean({ default: value, description }));
const int = (min: number, max: number, value: number, description: string) =>
  Type.Optional(Type.Integer({ minimum: min, maximum: max, default: value, description }));
const num = (min: number, max: number, value: number, description: string) =>
  Type.Optional(Type.Number({ minimum: min, maximum: max, default: value, description }));
const group = <T extends Record<string, TSchema>>(properties: T, description: string) =>
  Type.Optional(Type.Object(properties, { additionalProperties: false, default: {}, description }));

export const PreprocessingConfig = Type.Object(
  {
    auto_orient: bool(true, 'Rotate pixels upright by their EXIF orientation; when off the stored pixel order is kept and annotations follow it'),
    static_crop: group(
      {
        enabled: bool(false, 'Crop every image to the same region before anything else'),
        x_min: num(0, 100, 0, 'Left edge of the kept region, % of the width'),
        x_max: num(0, 100, 100, 'Right edge of the kept region, % of the width (greater than x_min)'),
        y_min: num(0, 100, 0, 'Top edge of the kept region, % of the height'),
        y_max: num(0, 100, 100, 'Bottom edge of the kept region, % of the height (greater than y_min)'),
      },
      'Static crop',
    ),
    tile: group(
      {
        enabled: bool(false, 'Split every image into rows × columns tiles, each an output image'),
        rows: int(1, 10, 2, 'Tile rows'),
        columns: int(1, 10, 2, 'Tile columns'),
      },
      'Tiling (applied after the static crop, before the resize)',
    ),
    resize: group(
      {
        enabled: bool(true, 'Resize every output image'),
        width: int(1, MAX_SIDE, 640, 'Output width in pixels'),
        height: int(1, MAX_SIDE, 640, 'Output height in pixels'),
        mode: Type.Optional(
          StringEnum(RESIZE_MODES, {
            default: 'stretch',
            description:
              'stretch: to exactly width × height; fit_black / fit_white / fit_reflect: keep the aspect ratio and letterbox with black, white or mirrored edges; fill: keep the aspect ratio and crop the centre; fit_within: shrink to fit inside width × height, never enlarge',
          }),
        ),
      },
      'Resize',
    ),
    grayscale: bool(false, 'Convert to grayscale'),
    contrast: Type.Optional(
      StringEnum(CONTRAST_METHODS, {
        default: 'none',
        description: 'Contrast adjustment: stretch (to the full range), equalize (histogram equalisation), clahe (adaptive equalisation)',
      }),
    ),
    classes: group(
      {
        remap: Type.Optional(
          Type.Record(Type.String(), Type.String({ minLength: 1 }), {
            default: {},
            description: 'Rename classes: {"old name": "new name"}; several old names may merge into one',
          }),
        ),
        drop: Type.Optional(
          Type.Array(Type.String({ minLength: 1 }), { uniqueItems: true, default: [], description: 'Class names whose annotations are removed' }),
        ),
      },
      'Class remapping and dropping',
    ),
    filter_unannotated: bool(false, 'Leave out output images that have no annotation (after class dropping, cropping and tiling)'),
  },
  { additionalProperties: false },
);

const percent = (max: number, description: string) => num(0, max, 0, description);

export const AugmentationConfig = Type.Object(
  {
    enabled: Type.Optional(
      Type.Boolean({
        default: false,
        description: 'Augment at all; when left out, augmentation is on exactly when some other option is given',
      }),
    ),
    outputs_per_image: int(1, 50, 3, 'Augmented outputs generated per source image'),
    apply_to: Type.Optional(
      StringEnum(APPLY_TO, { default: 'train', description: 'Splits that are augmented: train only, train and valid, or all splits' }),
    ),
    flip_horizontal: bool(false, 'Mirror left-right in half of the outputs'),
    flip_vertical: bool(false, 'Mirror up-down in half of the outputs'),
    rotate_90: Type.Optional(
      Type.Array(StringEnum(ROTATE_90_CHOICES), {
        uniqueItems: true,
        default: [],
        description: 'Quarter turns to choose from (cw, ccw, 180); each output picks one of them or none with equal chance',
      }),
    ),
    rotation: percent(45, 'Random rotation between -n and +n degrees'),
    shear: group(
      {
        horizontal: percent(45, 'Random horizontal shear between -n and +n degrees'),
        vertical: percent(45, 'Random vertical shear between -n and +n degrees'),
      },
      'Shear',
    ),
    crop: percent(99, 'Random crop/zoom: up to n % of each side is cut away and the rest enlarged back to the full size'),
    brightness: percent(99, 'Random brightness change between -n and +n % (added to every channel)'),
    exposure: percent(99, 'Random exposure change between -n and +n % (multiplies every channel)'),
    contrast: percent(99, 'Random contrast change between -n and +n % (around mid grey)'),
    hue: num(0, 180, 0, 'Random hue rotation between -n and +n degrees'),
    saturation: percent(99, 'Random saturation change between -n and +n %'),
    grayscale: percent(100, 'Share of the outputs converted to grayscale, %'),
    blur: num(0, 25, 0, 'Random Gaussian blur of up to n pixels'),
    noise: percent(25, 'Random salt-and-pepper noise on up to n % of the pixels'),
    cutout: group(
      {
        count: int(0, 25, 0, 'Black rectangles cut out of each output'),
        size: num(1, 50, 10, 'Side of each rectangle, % of the image side'),
      },
      'Cutout (annotations are kept)',
    ),
    mosaic: percent(100, 'Share of the outputs that are a 2 × 2 mosaic of this image and three others of the same split, %'),
  },
  { additionalProperties: false },
);

type Filled<T> = { [K in keyof T]-?: T[K] extends object | undefined ? (T[K] extends unknown[] | undefined ? NonNullable<T[K]> : Filled<NonNullable<T[K]>>) : T[K] };

export type PreprocessingInput = Static<typeof PreprocessingConfig>;
export type AugmentationInput = Static<typeof AugmentationConfig>;
/** A config with every default filled in: what a version stores and the planner reads. */
export type Preprocessing = Filled<PreprocessingInput>;
export type Augmentation = Filled<AugmentationInput>;

export interface Recipe {
  preprocessing: Preprocessing;
  augmentation: Augmentation;
}

/** FastAPI-style issues for a `preprocessing_config` (null/empty = defaults); `loc` is prefixed to every issue. */
export function preprocessingIssues(input: unknown, loc: (string | number)[] = ['body', 'preprocessing_config']): ValidationIssue[] {
  if (input === null || input === undefined) return [];
  const issues = schemaIssues(PreprocessingConfig, input, loc);
  if (issues.length > 0) return issues;
  const config = resolvePreprocessing(input as PreprocessingInput);
  const crop = config.static_crop;
  if (crop.enabled && crop.x_max <= crop.x_min) issues.push(issue([...loc, 'static_crop', 'x_max'], 'x_max must be greater than x_min'));
  if (crop.enabled && crop.y_max <= crop.y_min) issues.push(issue([...loc, 'static_crop', 'y_max'], 'y_max must be greater than y_min'));
  for (const name of Object.keys(config.classes.remap)) {
    if (name.length === 0) issues.push(issue([...loc, 'classes', 'remap'], 'class names must not be empty'));
  }
  return issues;
}

export function augmentationIssues(input: unknown, loc: (string | number)[] = ['body', 'augmentation_config']): ValidationIssue[] {
  if (input === null || input === undefined) return [];
  return schemaIssues(AugmentationConfig, input, loc);
}

export function resolvePreprocessing(input: PreprocessingInput | null | undefined): Preprocessing {
  return Value.Default(PreprocessingConfig, Value.Clone(input ?? {})) as Preprocessing;
}

export function resolveAugmentation(input: AugmentationInput | null | undefined): Augmentation {
  const given = input ?? {};
  const filled = Value.Default(AugmentationConfig, Value.Clone(given)) as Augmentation;
  const anyOption = Object.keys(given).some((key) => key !== 'enabled');
  return { ...filled, enabled: given.enabled ?? anyOption };
}

/** Validate both configs and fill their defaults; `issues` is non-empty when the request must be answered 422. */
export function parseRecipe(
  preprocessing: unknown,
  augmentation: unknown,
  loc: (string | number)[] = ['body'],
): { recipe: Recipe; issues: [] } | { recipe: null; issues: ValidationIssue[] } {
  const issues = [
    ...preprocessingIssues(preprocessing, [...loc, 'preprocessing_config']),
    ...augmentationIssues(augmentation, [...loc, 'augmentation_config']),
  ];
  if (issues.length > 0) return { recipe: null, issues };
  return {
    recipe: {
      preprocessing: resolvePreprocessing(preprocessing as PreprocessingInput),
      augmentation: resolveAugmentation(augmentation as AugmentationInput),
    },
    issues: [],
  };
}

/** Whether images of a split get augmented outputs under this recipe. */
export function augmentsSplit(augmentation: Augmentation, split: string | null | undefined): boolean {
  if (!augmentation.enabled) return false;
  if (augmentation.apply_to === 'all') return true;
  if (augmentation.apply_to === 'train_valid') return split === 'train' || split === 'valid';
  return split === 'train';
}

/** How many outputs one source image yields before tiling multiplies them. */
export function outputsPerImage(recipe: Recipe, split: string | null | undefined): number {
  return augmentsSplit(recipe.augmentation, split) ? recipe.augmentation.outputs_per_image : 1;
}

export interface OptionDescriptor {
  key: string;
  type: 'boolean' | 'integer' | 'number' | 'string' | 'array' | 'object';
  default: unknown;
  description?: string;
  minimum?: number;
  maximum?: number;
  enum?: readonly string[];
  items_enum?: readonly string[];
}

/** The document of GET /api/pipeline/defaults: both default configs and every option, flat, for generating a form. */
export function recipeDefaults() {
  return {
    preprocessing_config: resolvePreprocessing({}),
    augmentation_config: resolveAugmentation({}),
    options: {
      preprocessing_config: describe(PreprocessingConfig as JsonSchema, ''),
      augmentation_config: describe(AugmentationConfig as JsonSchema, ''),
    },
  };
}

interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  enum?: string[];
  minimum?: number;
  maximum?: number;
  default?: unknown;
  description?: string;
}

function describe(schema: JsonSchema, prefix: string): OptionDescriptor[] {
  const out: OptionDescriptor[] = [];
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const key = prefix ? `${prefix}.${name}` : name;
    if (property.type === 'object' && property.properties) {
      out.push(...describe(property, key));
      continue;
    }
    const option: OptionDescriptor = { key, type: (property.type ?? 'string') as OptionDescriptor['type'], default: property.default };
    if (property.description) option.description = property.description;
    if (property.minimum !== undefined) option.minimum = property.minimum;
    if (property.maximum !== undefined) option.maximum = property.maximum;
    if (property.enum) option.enum = property.enum;
    if (property.items?.enum) option.items_enum = property.items.enum;
    out.push(option);
  }
  return out;
}

function issue(loc: (string | number)[], msg: string, type = 'value_error'): ValidationIssue {
  return { loc, msg, type };
}

const ISSUE_TYPES: Record<string, string> = {
  minimum: 'greater_than_equal',
  maximum: 'less_than_equal',
  exclusiveMinimum: 'greater_than',
  exclusiveMaximum: 'less_than',
  enum: 'enum',
  const: 'enum',
  anyOf: 'enum',
  uniqueItems: 'unique_items',
  minLength: 'string_too_short',
  additionalProperties: 'extra_forbidden',
};

/** TypeBox's errors as FastAPI issues, one per location (a union reports one error per branch). */
function schemaIssues(schema: TSchema, input: unknown, loc: (string | number)[]): ValidationIssue[] {
  const seen = new Set<string>();
  const issues: ValidationIssue[] = [];
  for (const error of Value.Errors(schema, input)) {
    if (error.keyword === 'boolean') continue; // the additionalProperties error below says it better
    const path = error.instancePath.split('/').filter(Boolean).map((p) => (/^\d+$/.test(p) ? Number(p) : p.replace(/~1/g, '/').replace(/~0/g, '~')));
    const params = error.params as Record<string, unknown>;
    if (error.keyword === 'additionalProperties') path.push(...((params.additionalProperties as string[]) ?? []).slice(0, 1));
    const at = [...loc, ...path];
    const key = at.join('\u0000');
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push(issue(at, issueMessage(error.keyword, params, error.message), ISSUE_TYPES[error.keyword] ?? `${error.keyword}_error`));
  }
  return issues;
}

function issueMessage(keyword: string, params: Record<string, unknown>, fallback: string): string {
  if (keyword === 'minimum') return `Input should be greater than or equal to ${params.limit}`;
  if (keyword === 'maximum') return `Input should be less than or equal to ${params.limit}`;
  if (keyword === 'additionalProperties') return 'Extra inputs are not permitted';
  if (keyword === 'enum') return `Input should be one of ${(params.allowedValues as unknown[]).map((v) => `'${v}'`).join(', ')}`;
  if (keyword === 'type') return `Input should be a valid ${params.type}`;
  return fallback;
}
