/** Who is making a request, as resolved by the authentication hook. */
export interface Caller {
  readonly userId: number;
  readonly email: string;
  readonly isAdmin: boolean;
  readonly tokenId: number;
  readonly tokenKind: 'session' | 'api';
  /** `read-only` API tokens may only read (GET, HEAD, OPTIONS). */
  readonly scope: 'read-only' | 'read-write';
  /** How the request authenticated: cookie-authenticated writes get cross-site checks. */
  readonly via: 'bearer' | 'cookie';
}
