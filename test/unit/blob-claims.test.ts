import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BlobClaims } from '../../src/storage/blob-claims.js';

describe('BlobClaims', () => {
  it('a request may remove a content-addressed file only when no other request is writing it', () => {
    const claims = new BlobClaims();
    const winner = claims.session();
    const loser = claims.session();
    winner.hold(['projects/1/images/abc.jpg']);
    loser.hold(['projects/1/images/abc.jpg']);
    assert.equal(claims.anyHeld('projects/1/images/abc.jpg', loser), true, 'the winner still holds it: the loser keeps the file');
    winner.release();
    assert.equal(claims.anyHeld('projects/1/images/abc.jpg', loser), false);
    assert.equal(claims.anyHeld('projects/1/images/abc.jpg'), true, 'a delete outside uploads waits for the loser too');
    loser.release();
    loser.release();
    assert.equal(claims.anyHeld('projects/1/images/abc.jpg'), false);
  });
});
