import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf, SESSION_COOKIE } from '../../http/authenticate.js';
import { errors, Id } from '../../http/schemas.js';
import type { AuthService } from './auth.service.js';
import { LoginBody, LoginOut, RegisterBody, TokenCreateBody, TokenCreatedOut, TokenOut, UserOut } from './auth.schemas.js';

export function authRoutes(server: FastifyInstance, auth: AuthService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['auth'];

  app.post('/api/auth/register', {
    config: { public: true },
    schema: { tags, summary: 'Create an account (the first one becomes instance admin)', body: RegisterBody, response: { 201: UserOut, ...errors(409, 422, 429) } },
  }, async (request, reply) => reply.status(201).send(await auth.register(request.body, request.ip)));

  app.post('/api/auth/login', {
    config: { public: true },
    schema: { tags, summary: 'Log in: returns a bearer token and sets the session cookie', body: LoginBody, response: { 200: LoginOut, ...errors(401, 422, 429) } },
  }, async (request, reply) => {
    const session = await auth.login(request.body.email, request.body.password, request.ip);
    reply.setCookie(SESSION_COOKIE, session.token, {
      httpOnly: true,
      sameSite: 'lax',
      path: '/',
      secure: request.protocol === 'https',
      expires: new Date(session.expires_at),
    });
    return session;
  });

  app.post('/api/auth/logout', {
    schema: { tags, summary: 'End the current login session', response: { 204: Type.Null(), ...errors(401) } },
  }, async (request, reply) => {
    await auth.logout(callerOf(request));
    reply.clearCookie(SESSION_COOKIE, { path: '/' });
    return reply.status(204).send(null);
  });

  app.get('/api/auth/me', {
    schema: { tags, summary: 'The current user', response: { 200: UserOut, ...errors(401) } },
  }, async (request) => auth.me(callerOf(request)));

  app.get('/api/auth/tokens', {
    schema: { tags, summary: 'Your API tokens (secrets are never shown again)', response: { 200: Type.Array(TokenOut), ...errors(401) } },
  }, async (request) => auth.listTokens(callerOf(request)));

  app.post('/api/auth/tokens', {
    schema: { tags, summary: 'Create an API token', body: TokenCreateBody, response: { 201: TokenCreatedOut, ...errors(401, 422) } },
  }, async (request, reply) => reply.status(201).send(await auth.createToken(callerOf(request), request.body)));

  app.delete('/api/auth/tokens', {
    schema: { tags, summary: 'Revoke an API token', querystring: Type.Object({ id: Id }), response: { 204: Type.Null(), ...errors(401, 404, 422) } },
  }, async (request, reply) => {
    await auth.revokeToken(callerOf(request), request.query.id);
    return reply.status(204).send(null);
  });

  app.delete('/api/auth/tokens/:id', {
    schema: { tags, summary: 'Revoke an API token', params: Type.Object({ id: Id }), response: { 204: Type.Null(), ...errors(401, 404, 422) } },
  }, async (request, reply) => {
    await auth.revokeToken(callerOf(request), request.params.id);
    return reply.status(204).send(null);
  });
}
