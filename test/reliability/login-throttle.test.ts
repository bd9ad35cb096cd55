/**
 * Drills (issue 11, Medium 9): wrong passwords slow an account down but never lock its owner out (a delay they can
 * wait out, not 900 s of 429), and X-Forwarded-For is believed only from the proxies named in TRUST_PROXY: spoofed
 * without it changes nothing, and behind a trusted proxy each client has its own limit.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

describe('per-account backoff', () => {
  let t: TestApp;
  before(async () => (t = await startTestApp({ AUTH_ATTEMPTS_PER_MINUTE: '30' })));
  after(() => t.close());

  it('six wrong passwords delay the account; the real owner gets in after Retry-After', async () => {
    const anon = t.client();
    await anon.post('/api/auth/register', { email: 'owner@example.com', password: 'the-real-password' });
    for (let i = 0; i < 6; i++) assert.equal((await anon.post('/api/auth/login', { email: 'owner@example.com', password: `guess-${i}-xx` })).status, 401);
    const delayed = await anon.post('/api/auth/login', { email: 'owner@example.com', password: 'the-real-password' });
    assert.equal(delayed.status, 429);
    const retryAfter = Number(delayed.headers['retry-after']);
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
    await new Promise((r) => setTimeout(r, retryAfter * 1000 + 100));
    const ok = await anon.post('/api/auth/login', { email: 'owner@example.com', password: 'the-real-password' });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
  });
});

async function attemptsUntil429(t: TestApp, forwardedFor: (i: number) => string): Promise<number> {
  for (let i = 0; i < 40; i++) {
    const res = await t.client().request({
      method: 'POST',
      url: '/api/auth/login',
      payload: { email: `nobody${i}@example.com`, password: 'whatever-123' },
      headers: { 'x-forwarded-for': forwardedFor(i) },
    });
    if (res.status === 429) return i;
  }
  return -1;
}

describe('X-Forwarded-For without TRUST_PROXY', () => {
  let t: TestApp;
  before(async () => (t = await startTestApp({ AUTH_ATTEMPTS_PER_MINUTE: '10' })));
  after(() => t.close());

  it('a spoofed header changes nothing: every attempt counts against the real peer', async () => {
    assert.equal(await attemptsUntil429(t, (i) => `203.0.113.${i}`), 10);
  });
});

describe('X-Forwarded-For from a trusted proxy', () => {
  let t: TestApp;
  before(async () => (t = await startTestApp({ AUTH_ATTEMPTS_PER_MINUTE: '10', TRUST_PROXY: '127.0.0.1' })));
  after(() => t.close());

  it('each client behind the proxy has its own limit', async () => {
    assert.equal(await attemptsUntil429(t, () => '198.51.100.7'), 10);
    // Another client behind the same proxy is not refused.
    assert.equal(await attemptsUntil429(t, () => '198.51.100.8'), 10);
  });
});
