import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { builtinSteps } from '../../src/modules/pipelines/builtin-steps.service.js';
import { insideFraction } from '../../src/modules/pipelines/step-kit.logic.js';
import { parseYaml, toYaml } from '../../src/modules/pipelines/pipeline-text.logic.js';
import { topologicalOrder, validateDefinition } from '../../src/modules/pipelines/pipeline-validation.logic.js';
import { ppeExample } from '../../src/modules/pipelines/pipeline-example.logic.js';
import { PluginRegistry } from '../../src/plugins/plugin-registry.js';
import { registerBuiltinPlugins } from '../../src/plugins/builtin-catalog.js';

function registry(): PluginRegistry {
  const r = new PluginRegistry();
  registerBuiltinPlugins(r);
  const unused = new Proxy({}, { get: () => assert.fail('validation must not call services') });
  for (const step of builtinSteps({ repository: unused as never, ports: unused as never, callerOf: unused as never, webhookAllowlist: [] })) r.register(step);
  return r;
}

const project = (classNames: string[]) => ({ models: [{ id: 7, name: 'ppe', task: 'detect', lifecycle: 'production', class_names: classNames }], classes: [{ id: 3, name: 'person' }], versionIds: [11] });

describe('pipeline validation', () => {
  it('accepts the example, and with a project checks that a detector has its classes', () => {
    const r = registry();
    assert.deepEqual(validateDefinition(ppeExample(), r, null), []);
    assert.deepEqual(validateDefinition(ppeExample(), r, project(['Person', 'helmet', 'vest', 'gloves'])), []);
    const problems = validateDefinition(ppeExample(), r, project(['person', 'hardhat']));
    assert.deepEqual(problems.map((p) => p.path.join('.')), ['steps.1.params.model']);
    assert.match(problems[0].message, /no detect or segment model of the project has the classes person, helmet, vest/);
  });

  it('names rule classes the detector upstream cannot produce', () => {
    const definition = {
      name: 'x',
      steps: [
        { id: 's', type: 'select_images' },
        { id: 'd', type: 'detect', needs: ['s'], params: { model: 7 } },
        { id: 'r', type: 'rule', needs: ['d'], params: { subject: 'person', requires: [{ class: 'helmet' }, { class: 'vest' }] } },
      ],
    };
    const problems = validateDefinition(definition, registry(), project(['person', 'helmet']));
    assert.deepEqual(problems.map((p) => p.path.join('.')), ['steps.2.params.requires.1.class']);
  });

  it('rejects a registry duplicate and params that fail a plugin schema', () => {
    const r = registry();
    assert.throws(() => r.register({ ...r.get('exporter', 'coco')! }), /already registered/);
    assert.deepEqual(r.check('preprocessing', 'resize', { width: 0 }).map((i) => i.path), [['width']]);
    assert.deepEqual(r.check('preprocessing', 'resize', { width: 320, height: 320 }), []);
  });

  it('orders steps after what they need, and comes up short on a cycle', () => {
    assert.deepEqual(topologicalOrder(3, new Map([[0, [2]], [1, []], [2, [1]]])), [1, 2, 0]);
    assert.equal(topologicalOrder(2, new Map([[0, [1]], [1, [0]]])).length, 0);
  });

  it('measures how much of a box lies inside another', () => {
    const person = { x: 0, y: 0, width: 100, height: 200 };
    assert.equal(insideFraction({ x: 10, y: 10, width: 20, height: 20 }, person), 1);
    assert.equal(insideFraction({ x: 90, y: 0, width: 20, height: 10 }, person), 0.5);
    assert.equal(insideFraction({ x: 200, y: 0, width: 20, height: 10 }, person), 0);
  });

  it('round-trips a definition through YAML exactly', () => {
    const definition = { ...ppeExample(), description: 'a: "quoted" — and # not a comment\nsecond line' };
    assert.deepEqual(parseYaml(toYaml(definition)).value, definition);
  });
});
