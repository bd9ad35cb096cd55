import type { Caller } from '../../access/caller.js';
import type { Db } from '../../db/database.js';
import type { TokenScope } from '../../db/schema.js';
import { isUniqueViolation } from '../../db/errors.js';
import { transactionsOf } from '../../db/transactions.js';
import { ConflictError, NotFoundError, UnauthorizedError } from '../../http/errors.js';
import { RateLimiter } from '../../http/rate-limiter.js';
import { AuthRepository, type TokenRow } from './auth.repository.js';
import { toTokenOut, toUserOut, type RegisterBody, type TokenCreateBody, type UserOut } from './auth.schemas.js';
import { LoginFailuresRepository } from './login-failures.repository.js';
import { loginPolicy, LoginThrottle, systemClock, type LoginClock } from './login-throttle.service.js';
import { hashPassword, verifyPassword } from './passwords.logic.js';
import { hashToken, newTokenSecret } from './tokens.logic.js';

const SESSION_DAYS = 30;
const DAY_MS = 86_400_000;
/** How long a resolved token is trusted without asking the database; revocation in this process is immediate. */
const CACHE_MS = 2_000;
const TOUCH_EVERY_MS = 60_000;

interface CachedCaller {
  caller: Omit<Caller, 'via'>;
  expiresAt: number | null;
  checkedAt: number;
}

export class AuthService {
  private readonly repo: AuthRepository;
  private readonly cache = new Map<string, CachedCaller>();
  private readonly touched = new Map<number, number>();
  // A fixed hash so that logins for unknown emails cost the same time as real ones.
  private readonly dummyHash = hashPassword('not-a-real-password');

  private readonly perIp: RateLimiter;
  private readonly failedLogins: LoginThrottle;

  constructor(
    private readonly db: Db,
    attemptsPerMinute: number,
    private readonly clock: LoginClock = systemClock,
  ) {
    this.repo = new AuthRepository(db);
    this.perIp = new RateLimiter(attemptsPerMinute, 60_000, 'login or register attempts from your address');
    this.failedLogins = new LoginThrottle(loginPolicy(attemptsPerMinute), new LoginFailuresRepository(db), clock);
  }

  async register(input: RegisterBody, ip: string): Promise<UserOut> {
    this.perIp.hit(ip, this.clock.now());
    const email = input.email.trim().toLowerCase();
    const password_hash = await hashPassword(input.password);
    try {
      const user = await transactionsOf(this.db).run(async (tx) => {
        // The first account of an instance claims the admin flag; the settings key makes that race-free.
        const claimed = await this.repo.claimFirstAdmin(email, tx);
        return this.repo.insertUser(
          {
            email,
            password_hash,
            display_name: input.display_name?.trim() || email.split('@')[0],
            is_admin: claimed ? 1 : 0,
            created_at: new Date().toISOString(),
          },
          tx,
        );
      });
      return toUserOut(user);
    } catch (err) {
      if (isUniqueViolation(err)) throw new ConflictError(`An account with email ${email} already exists`);
      throw err;
    }
  }

  async login(rawEmail: string, password: string, ip: string) {
    this.perIp.hit(ip, this.clock.now());
    const email = rawEmail.trim().toLowerCase();
    await this.failedLogins.admit(email, ip);
    const user = await this.repo.findUserByEmail(email);
    const ok = user ? await verifyPassword(password, user.password_hash) : (await verifyPassword(password, await this.dummyHash), false);
    if (!user || !ok) {
      await this.failedLogins.failed(email);
      throw new UnauthorizedError('Incorrect email or password');
    }
    await this.failedLogins.succeeded(email, ip);
    const { secret, row } = await this.issueToken(user.id, 'session', 'login', SESSION_DAYS);
    return { token: secret, token_type: 'bearer' as const, expires_at: row.expires_at!, user: toUserOut(user) };
  }

  /** Ends a login session. API tokens are revoked through the token routes, not by logout. */
  async logout(caller: Caller): Promise<void> {
    if (caller.tokenKind !== 'session') return;
    const hash = await this.repo.deleteToken(caller.userId, caller.tokenId, 'session');
    if (hash) this.cache.delete(hash);
  }

  async me(caller: Caller): Promise<UserOut> {
    const user = await this.repo.findUserById(caller.userId);
    if (!user) throw new UnauthorizedError('The account no longer exists');
    return toUserOut(user);
  }

  async listTokens(caller: Caller) {
    return (await this.repo.listApiTokens(caller.userId)).map(toTokenOut);
  }

  async createToken(caller: Caller, input: TokenCreateBody) {
    const { secret, row } = await this.issueToken(caller.userId, 'api', input.name, input.expires_in_days ?? null, input.scope ?? 'read-write');
    return { id: row.id, name: row.name, token: secret, scope: row.scope, created_at: row.created_at, expires_at: row.expires_at };
  }

  async revokeToken(caller: Caller, tokenId: number): Promise<void> {
    const hash = await this.repo.deleteToken(caller.userId, tokenId, 'api');
    if (!hash) throw NotFoundError.of('Token', tokenId);
    this.cache.delete(hash);
  }

  /** Resolves a bearer secret to its caller, or null when it is unknown or expired. */
  async authenticate(secret: string, via: Caller['via']): Promise<Caller | null> {
    const hash = hashToken(secret);
    const now = Date.now();
    let entry = this.cache.get(hash);
    if (!entry || now - entry.checkedAt > CACHE_MS) {
      const row = await this.repo.findTokenWithUser(hash);
      if (!row) {
        this.cache.delete(hash);
        return null;
      }
      entry = {
        caller: { userId: row.user_id, email: row.email, isAdmin: row.is_admin === 1, tokenId: row.token_id, tokenKind: row.kind, scope: row.scope },
        expiresAt: row.expires_at ? Date.parse(row.expires_at) : null,
        checkedAt: now,
      };
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(hash, entry);
    }
    if (entry.expiresAt !== null && entry.expiresAt <= now) return null;
    const lastTouch = this.touched.get(entry.caller.tokenId) ?? 0;
    if (now - lastTouch > TOUCH_EVERY_MS) {
      this.touched.set(entry.caller.tokenId, now);
      await this.repo.touchToken(entry.caller.tokenId, new Date(now).toISOString());
    }
    return { ...entry.caller, via };
  }

  private async issueToken(userId: number, kind: TokenRow['kind'], name: string, days: number | null, scope: TokenScope = 'read-write') {
    const secret = newTokenSecret();
    const now = new Date();
    const row = await this.repo.insertToken({
      user_id: userId,
      name,
      kind,
      token_hash: hashToken(secret),
      created_at: now.toISOString(),
      expires_at: days === null ? null : new Date(now.getTime() + days * DAY_MS).toISOString(),
      last_used_at: null,
      scope,
    });
    return { secret, row };
  }
}
