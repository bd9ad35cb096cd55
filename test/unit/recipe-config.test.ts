import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  augmentationIssues,
  augmentsSplit,
  outputsPerImage,
  parseRecipe,
  recipeDefaults,
  preprocessingIssues,
  resolveAugmentation,
  resolvePreprocessing,
} from '../../src/imaging/recipe/index.js';

test('empty or null configs resolve to the defaults: 640×640 stretch, auto-orient, no augmentation', () => {
  for (const input of [null, undefined, {}]) {
    const pre = resolvePreprocessing(input);
    assert.deepEqual(pre.resize, { enabled: true, width: 640, height: 640, mode: 'stretch' });
    assert.equal(pre.auto_orient, true);
    assert.equal(pre.contrast, 'none');
    assert.deepEqual(pre.classes, { remap: {}, drop: [] });
    assert.equal(resolveAugmentation(input).enabled, false);
  }
  assert.deepEqual(resolvePreprocessing({ resize: { width: 320 } }).resize, { enabled: true, width: 320, height: 640, mode: 'stretch' });
});

test('augmentation is on when options are given without `enabled`, off when `enabled: false`', () => {
  assert.equal(resolveAugmentation({ flip_horizontal: true }).enabled, true);
  assert.equal(resolveAugmentation({ flip_horizontal: true, enabled: false }).enabled, false);
  const aug = resolveAugmentation({ rotation: 10 });
  assert.equal(aug.apply_to, 'train');
  assert.equal(augmentsSplit(aug, 'train'), true);
  assert.equal(augmentsSplit(aug, 'valid'), false);
  assert.equal(augmentsSplit(resolveAugmentation({ rotation: 10, apply_to: 'train_valid' }), 'valid'), true);
  assert.equal(augmentsSplit(resolveAugmentation({ rotation: 10, apply_to: 'all' }), 'test'), true);
  const { recipe } = parseRecipe({}, { outputs_per_image: 5 });
  assert.equal(outputsPerImage(recipe!, 'train'), 5);
  assert.equal(outputsPerImage(recipe!, 'test'), 1);
});

test('every out-of-range option is a FastAPI-style issue at its location', () => {
  const cases: [unknown, (string | number)[], string][] = [
    [{ outputs_per_image: 0 }, ['outputs_per_image'], 'greater_than_equal'],
    [{ outputs_per_image: 51 }, ['outputs_per_image'], 'less_than_equal'],
    [{ outputs_per_image: 2.5 }, ['outputs_per_image'], 'type_error'],
    [{ rotation: 46 }, ['rotation'], 'less_than_equal'],
    [{ rotation: -1 }, ['rotation'], 'greater_than_equal'],
    [{ shear: { horizontal: 46 } }, ['shear', 'horizontal'], 'less_than_equal'],
    [{ shear: { vertical: 50 } }, ['shear', 'vertical'], 'less_than_equal'],
    [{ crop: 100 }, ['crop'], 'less_than_equal'],
    [{ brightness: 100 }, ['brightness'], 'less_than_equal'],
    [{ exposure: -5 }, ['exposure'], 'greater_than_equal'],
    [{ contrast: 120 }, ['contrast'], 'less_than_equal'],
    [{ hue: 181 }, ['hue'], 'less_than_equal'],
    [{ saturation: 100 }, ['saturation'], 'less_than_equal'],
    [{ grayscale: 101 }, ['grayscale'], 'less_than_equal'],
    [{ blur: 26 }, ['blur'], 'less_than_equal'],
    [{ noise: 26 }, ['noise'], 'less_than_equal'],
    [{ cutout: { count: 26 } }, ['cutout', 'count'], 'less_than_equal'],
    [{ cutout: { size: 0 } }, ['cutout', 'size'], 'greater_than_equal'],
    [{ mosaic: 101 }, ['mosaic'], 'less_than_equal'],
    [{ apply_to: 'valid' }, ['apply_to'], 'enum'],
    [{ rotate_90: ['left'] }, ['rotate_90', 0], 'enum'],
    [{ rotate_90: ['cw', 'cw'] }, ['rotate_90'], 'unique_items'],
    [{ flip_horizontal: 'yes' }, ['flip_horizontal'], 'type_error'],
    [{ sparkle: 1 }, ['sparkle'], 'extra_forbidden'],
  ];
  for (const [input, loc, type] of cases) {
    const issues = augmentationIssues(input);
    assert.equal(issues.length, 1, `${JSON.stringify(input)} → ${JSON.stringify(issues)}`);
    assert.deepEqual(issues[0].loc, ['body', 'augmentation_config', ...loc]);
    assert.equal(issues[0].type, type, JSON.stringify(issues[0]));
    assert.ok(issues[0].msg.length > 0);
  }
  const preCases: [unknown, (string | number)[], string][] = [
    [{ resize: { width: 0 } }, ['resize', 'width'], 'greater_than_equal'],
    [{ resize: { height: 9000 } }, ['resize', 'height'], 'less_than_equal'],
    [{ resize: { mode: 'squash' } }, ['resize', 'mode'], 'enum'],
    [{ contrast: 'high' }, ['contrast'], 'enum'],
    [{ static_crop: { x_min: -1 } }, ['static_crop', 'x_min'], 'greater_than_equal'],
    [{ static_crop: { enabled: true, x_min: 60, x_max: 40 } }, ['static_crop', 'x_max'], 'value_error'],
    [{ static_crop: { enabled: true, y_min: 50, y_max: 50 } }, ['static_crop', 'y_max'], 'value_error'],
    [{ tile: { rows: 11 } }, ['tile', 'rows'], 'less_than_equal'],
    [{ tile: { columns: 0 } }, ['tile', 'columns'], 'greater_than_equal'],
    [{ classes: { drop: [''] } }, ['classes', 'drop', 0], 'string_too_short'],
    [{ classes: { remap: { cat: '' } } }, ['classes', 'remap', 'cat'], 'string_too_short'],
    [{ auto_orient: 1 }, ['auto_orient'], 'type_error'],
  ];
  for (const [input, loc, type] of preCases) {
    const issues = preprocessingIssues(input);
    assert.equal(issues.length, 1, `${JSON.stringify(input)} → ${JSON.stringify(issues)}`);
    assert.deepEqual(issues[0].loc, ['body', 'preprocessing_config', ...loc]);
    assert.equal(issues[0].type, type, JSON.stringify(issues[0]));
  }
});

test('a full valid recipe has no issues, and parseRecipe reports both configs at once', () => {
  const pre = {
    auto_orient: false,
    resize: { enabled: true, width: 416, height: 416, mode: 'fit_reflect' },
    static_crop: { enabled: true, x_min: 10, x_max: 90, y_min: 0, y_max: 100 },
    tile: { enabled: true, rows: 2, columns: 3 },
    grayscale: true,
    contrast: 'clahe',
    classes: { remap: { car: 'vehicle', truck: 'vehicle' }, drop: ['person'] },
    filter_unannotated: true,
  };
  const aug = {
    enabled: true, outputs_per_image: 50, apply_to: 'all', flip_horizontal: true, flip_vertical: true, rotate_90: ['cw', 'ccw', '180'],
    rotation: 45, shear: { horizontal: 45, vertical: 45 }, crop: 99, brightness: 99, exposure: 99, contrast: 99, hue: 180,
    saturation: 99, grayscale: 100, blur: 25, noise: 25, cutout: { count: 25, size: 50 }, mosaic: 100,
  };
  const parsed = parseRecipe(pre, aug);
  assert.deepEqual(parsed.issues, []);
  assert.equal(parsed.recipe?.preprocessing.tile.columns, 3);
  const bad = parseRecipe({ resize: { width: -1 } }, { blur: 30 });
  assert.equal(bad.recipe, null);
  assert.deepEqual(bad.issues.map((i) => i.loc.join('.')), ['body.preprocessing_config.resize.width', 'body.augmentation_config.blur']);
});

test('recipeDefaults describes every option with type, range, default and enum values', () => {
  const doc = recipeDefaults();
  assert.equal(doc.preprocessing_config.resize.width, 640);
  assert.equal(doc.augmentation_config.enabled, false);
  const byKey = new Map(doc.options.augmentation_config.map((o) => [o.key, o]));
  assert.deepEqual({ ...byKey.get('outputs_per_image'), description: undefined }, { key: 'outputs_per_image', type: 'integer', minimum: 1, maximum: 50, default: 3, description: undefined });
  assert.equal(byKey.get('blur')?.maximum, 25);
  assert.equal(byKey.get('noise')?.maximum, 25);
  assert.equal(byKey.get('shear.horizontal')?.maximum, 45);
  assert.deepEqual(byKey.get('apply_to')?.enum, ['train', 'train_valid', 'all']);
  assert.deepEqual(byKey.get('rotate_90')?.items_enum, ['cw', 'ccw', '180']);
  const pre = new Map(doc.options.preprocessing_config.map((o) => [o.key, o]));
  assert.deepEqual(pre.get('resize.mode')?.enum, ['stretch', 'fit_black', 'fit_white', 'fit_reflect', 'fill', 'fit_within']);
  assert.deepEqual(pre.get('contrast')?.enum, ['none', 'stretch', 'equalize', 'clahe']);
  for (const option of [...doc.options.preprocessing_config, ...doc.options.augmentation_config]) {
    assert.ok(option.description, `${option.key} has a description`);
    assert.notEqual(option.default, undefined, `${option.key} has a default`);
  }
  // The document is plain JSON.
  assert.deepEqual(JSON.parse(JSON.stringify(doc)), doc);
});
