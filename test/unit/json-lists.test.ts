import assert from 'node:assert/strict';
import { test } from 'node:test';
import { JsonLists, NotLists } from '../../src/formats/readers/json-lists.js';

const NAMES = new Set(['images', 'annotations']);

/** Every element JsonLists hands out, the document cut into chunks of `size` bytes. */
function elements(text: string, size: number): { list: string; value: unknown }[] {
  const lists = new JsonLists(NAMES);
  const bytes = Buffer.from(text);
  const out: { list: string; value: unknown }[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(...lists.push(bytes.subarray(i, i + size)));
  lists.end();
  return out;
}

const document = {
  info: { description: 'a "quoted" \\ name ]}', year: 2017, tags: ['x', { y: [1, 2] }] },
  images: [{ id: 1, file_name: 'é/ü [1].jpg', width: 640 }, { id: 2, file_name: 'b\\"}.jpg' }],
  categories: [{ id: 1, name: 'person', keypoints: ['nose'] }],
  annotations: [
    { id: 1, image_id: 1, bbox: [1.5, -2e3, 3, 4], keypoints: [1, 2, 2], segmentation: { counts: 'a]b}c"', size: [2, 2] } },
    7,
    'text, with a comma',
    null,
    [],
    { nested: [[[{}]]] },
  ],
  empty: [],
};

test('the listed lists come out element by element, as JSON.parse reads them, wherever the chunks are cut', () => {
  const expected = [...document.images.map((value) => ({ list: 'images', value })), ...document.annotations.map((value) => ({ list: 'annotations', value }))];
  for (const text of [JSON.stringify(document), JSON.stringify(document, null, 2)]) {
    for (const size of [1, 2, 3, 7, 64, text.length]) assert.deepEqual(elements(text, size), expected, `chunks of ${size}`);
  }
  assert.deepEqual(elements('{}', 1), []);
  assert.deepEqual(elements('{"images": []} trailing bytes are not read', 4), []);
});

test('what is not an object of lists, or not JSON, is refused for another reader to explain', () => {
  const bad = ['[1, 2]', '{"images": {"a": 1}}', '{"images": [1,]}', '{"images": [1 2]}', '{"images": [{"a": }]}', '{"info": tru}', '{"images": [1]', '{"a" 1}', '{"a": 1,}', '{"images": [1],, "x": 2}'];
  for (const text of bad) {
    for (const size of [1, 5, text.length]) assert.throws(() => elements(text, size), NotLists, `${text} in chunks of ${size}`);
  }
});
