import { Type, type Static } from 'typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';

export const PageQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 10_000, default: 100 }),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 2_147_483_647 })),
  after: Type.Optional(Type.Integer({ minimum: 0, maximum: 2_147_483_647, description: 'Last id of the previous page (fast deep paging)' })),
});
export type PageQuery = Static<typeof PageQuery>;

export interface Page<T> {
  items: T[];
  total: number;
}

/** `X-Total-Count`, and a `Link: <…>; rel="next"` using the `after` cursor when a further page may exist. */
export function sendPage<T extends { id: number }>(request: FastifyRequest, reply: FastifyReply, page: Page<T>, limit: number): T[] {
  reply.header('X-Total-Count', String(page.total));
  const last = page.items.at(-1);
  if (last && page.items.length === limit) {
    const url = new URL(request.url, 'http://placeholder');
    url.searchParams.delete('offset');
    url.searchParams.set('after', String(last.id));
    url.searchParams.set('limit', String(limit));
    reply.header('Link', `<${url.pathname}${url.search}>; rel="next"`);
  }
  return page.items;
}
