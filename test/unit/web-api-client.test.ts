/// <reference lib="dom" />
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { api, urlOf } from '../../web/src/api.js';

// The pages' one typed API client (web/src/api.ts): routes are named as the OpenAPI document spells them, and their
// parameters, bodies and answers are checked against the generated types by `npm run typecheck`.

describe('web API client', () => {
  it('fills path parameters, encoded, and leaves out query parameters without a value', () => {
    assert.equal(urlOf('/api/invitations/{token}/accept', { path: { token: 'a/b c?' } }), '/api/invitations/a%2Fb%20c%3F/accept');
    assert.equal(
      urlOf('/api/projects/{id}/images', { path: { id: 7 }, query: { limit: 100, after: undefined, annotated: false, split: 'valid' } }),
      '/api/projects/7/images?limit=100&annotated=false&split=valid',
    );
    assert.equal(urlOf('/api/projects/{id}/classes', { path: { id: 3 }, query: {} }), '/api/projects/3/classes');
    assert.equal(urlOf('/api/x', { query: { ids: [1, 2] } }), '/api/x?ids=1&ids=2');
  });

  it('rejects at type-check time what the document does not allow', () => {
    // Never called: the type checker (npm run typecheck) is what this case runs. Each line below fails to compile
    // without the typed client, and then `@ts-expect-error` itself is an error.
    const checks = async () => {
      // @ts-expect-error a route that does not exist
      await api.get('/api/no-such-route');
      // @ts-expect-error a route's path parameters are required
      await api.get('/api/projects/{id}/classes');
      // @ts-expect-error a query value of the wrong type
      await api.get('/api/projects/{id}/images', { path: { id: 1 }, query: { annotated: 'yes' } });
      // @ts-expect-error a body field the route does not take
      await api.post('/api/projects/{id}/splits', { path: { id: 1 }, query: { train: 70, valid: 20, test: 10 }, body: { seed: 1 } });
      const classes = await api.get('/api/projects/{id}/classes', { path: { id: 1 } });
      // @ts-expect-error the answer is typed: a class has no `title`
      void classes[0].title;
    };
    assert.equal(typeof checks, 'function');
  });
});
