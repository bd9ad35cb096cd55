/**
 * Drills (issue 11, Medium 9): wrong passwords slow an account down but never lock its owner out (a delay they can
 * wait out, not 900 s of 429), and X-Forwarded-For is believed only from the proxies named in TRUST_PROXY: spoofed
 * without it changes nothing, and behind a trusted proxy each client has its own limit.
 * Issue 24, item 3: failures count per (account, client address), so a stranger's failures never stop the owner at
 * another address; past a per-account ceiling every attempt is slowed, never refused. These run on a fake clock.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DatabaseHandle } from '../../src/db/database.js';
import { LoginFailuresRepository } from '../../src/modules/auth/login-failures.repository.js';
import { LoginThrottle, type LoginClock } from '../../src/modules/auth/login-throttle.service.js';
import { openTestDatabase, startTestApp, type Response, type TestApp } from '../helpers/test-app.js';

/** The login throttle's time, moved by hand; `slept` lists the slow-downs it was asked to take. */
function fakeClock(): LoginClock & { advance(ms: number): void; slept: number[] } {
  let now = Date.now();
  const slept: number[] = [];
  return {
    slept,
    now: () => now,
    advance: (ms) => void (now += ms),
    sleep: async (ms) => {
      slept.push(ms);
      now += ms;
    },
  };
}

function login(t: TestApp, remoteAddress: string, password: string, email = 'owner@example.com'): Promise<Response> {
  return t.client().request({ method: 'POST', url: '/api/auth/login', payload: { email, password }, remoteAddress });
}

const OWNER = '198.51.100.20';
const STRANGER = '203.0.113.9';

describe('failures per account and client address', () => {
  const clock = fakeClock();
  let t: TestApp;
  // 30 a minute (the default): 6 free failures per address, every attempt slowed past 30 failures of the account.
  before(async () => {
    t = await startTestApp({ AUTH_ATTEMPTS_PER_MINUTE: '30' }, { loginClock: clock });
    await t.client().post('/api/auth/register', { email: 'owner@example.com', password: 'the-real-password' });
    await t.client().post('/api/auth/register', { email: 'other@example.com', password: 'the-real-password' });
  });
  after(() => t.close());

  it("a stranger's wrong password in every Retry-After window never stops the owner's correct one from another address", async () => {
    // The drill (16 of 16 refused before): the stranger uses up the free failures, then sends one wrong password in
    // every window it is told to wait, and the owner tries between them.
    for (let i = 0; i < 6; i++) assert.equal((await login(t, STRANGER, `guess-${i}-xx`)).status, 401);
    const owner: number[] = [];
    for (let round = 0; round < 16; round++) {
      owner.push((await login(t, OWNER, 'the-real-password')).status);
      let guess = await login(t, STRANGER, `guess-${round}-yy`);
      if (guess.status === 429) {
        clock.advance(Number(guess.headers['retry-after']) * 1000);
        guess = await login(t, STRANGER, `guess-${round}-yy`);
      }
      assert.equal(guess.status, 401, JSON.stringify(guess.body));
    }
    assert.deepEqual(owner, Array(16).fill(200));
  });

  it('the address that failed waits: 429 with Retry-After, doubling, its correct password unchecked; a success clears it', async () => {
    const address = '192.0.2.44';
    for (let i = 0; i < 6; i++) assert.equal((await login(t, address, `wrong-${i}-xx`, 'other@example.com')).status, 401);
    const refused = await login(t, address, 'the-real-password', 'other@example.com');
    assert.equal(refused.status, 429);
    assert.equal(refused.headers['retry-after'], '1');
    assert.match(refused.body.detail, /Too many failed logins for this account from your address; try again in 1 s/);
    clock.advance(1000);
    assert.equal((await login(t, address, 'wrong-7-xx', 'other@example.com')).status, 401);
    const longer = await login(t, address, 'the-real-password', 'other@example.com');
    assert.equal(longer.status, 429);
    assert.equal(longer.headers['retry-after'], '2');
    clock.advance(2000);
    assert.equal((await login(t, address, 'the-real-password', 'other@example.com')).status, 200);
    assert.equal((await login(t, address, 'wrong-8-xx', 'other@example.com')).status, 401, 'the success cleared the address');
  });

  it('parallel guesses from one address get no more than its free failures checked', async () => {
    const statuses = (await Promise.all(Array.from({ length: 10 }, (_, i) => login(t, '192.0.2.45', `parallel-${i}-x`, 'other@example.com'))))
      .map((res) => res.status)
      .sort();
    assert.deepEqual(statuses, [401, 401, 401, 401, 401, 401, 429, 429, 429, 429]);
  });
});

describe('the per-account ceiling', () => {
  const clock = fakeClock();
  let t: TestApp;
  // 10 a minute: 2 free failures per address, every attempt on the account slowed by 1 s past 10 failures.
  before(async () => {
    t = await startTestApp({ AUTH_ATTEMPTS_PER_MINUTE: '10' }, { loginClock: clock });
    await t.client().post('/api/auth/register', { email: 'owner@example.com', password: 'the-real-password' });
  });
  after(() => t.close());

  it('slows every attempt once many addresses have failed, never refuses: the right password gets in, a wrong one fails', async () => {
    for (let address = 1; address <= 5; address++) {
      for (let i = 0; i < 2; i++) assert.equal((await login(t, `203.0.113.${address}`, `guess-${i}-xx`)).status, 401);
    }
    assert.deepEqual(clock.slept, [], 'no slow-down under the ceiling');
    const owner = await login(t, OWNER, 'the-real-password');
    assert.equal(owner.status, 200, JSON.stringify(owner.body));
    assert.deepEqual(clock.slept, [1000]);
    assert.equal((await login(t, '203.0.113.6', 'guess-x-xx')).status, 401);
    assert.deepEqual(clock.slept, [1000, 1000], "the owner's success does not lift the slow-down for guessers");
    clock.advance(15 * 60_000 + 1);
    assert.equal((await login(t, OWNER, 'the-real-password')).status, 200);
    assert.deepEqual(clock.slept, [1000, 1000], 'forgotten 15 minutes after the last failure');
  });
});

describe('the throttle memory', () => {
  let opened: Awaited<ReturnType<typeof openTestDatabase>>;
  let second: DatabaseHandle;
  let dataDir: string;
  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'versa-throttle-'));
    opened = await openTestDatabase(dataDir);
    second = await opened.reopen();
  });
  after(async () => {
    await second.close();
    await opened.database.close();
    await opened.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('is shared by every API process (issue 27): failures made through one are refused by another; old ones expire and are removed', async () => {
    const clock = fakeClock();
    const policy = { freeFailures: 2, maxDelayMs: 60_000, accountCeiling: 1000, slowMs: 1000, memoryMs: 60_000 };
    // Two processes: each its own throttle over its own connection to the one database.
    const first = new LoginThrottle(policy, new LoginFailuresRepository(opened.database.db), clock);
    const other = new LoginThrottle(policy, new LoginFailuresRepository(second.db), clock);
    const fail = async (throttle: LoginThrottle, address: string) => {
      await throttle.admit('owner@example.com', address);
      await throttle.failed('owner@example.com');
    };
    const waits = (throttle: LoginThrottle, address: string) => throttle.admit('owner@example.com', address).then(() => false, () => true);
    await fail(first, STRANGER);
    await fail(other, STRANGER);
    assert.equal(await waits(first, STRANGER), true, 'two failures over two processes count together');
    assert.equal(await waits(other, STRANGER), true);
    assert.equal(await waits(other, OWNER), false, 'the owner at another address is let in');
    clock.advance(60_001);
    assert.equal(await waits(first, STRANGER), false, 'failures expire');
    await fail(first, '192.0.2.7');
    const keys = await opened.database.db.selectFrom('login_failures').select('key').orderBy('key').execute();
    assert.deepEqual(keys.map((k) => k.key), ['* owner@example.com', '192.0.2.7 owner@example.com', `${STRANGER} owner@example.com`].sort(), 'the quiet keys were removed');
  });
});

describe('per-account backoff', () => {
  let t: TestApp;
  before(async () => (t = await startTestApp({ AUTH_ATTEMPTS_PER_MINUTE: '30' })));
  after(() => t.close());

  it('six wrong passwords from one address delay it; the real owner there gets in after Retry-After', async () => {
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
