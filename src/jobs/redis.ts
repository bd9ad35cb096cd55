import { Redis } from 'ioredis';

/** One Redis connection for readiness checks (and, later, the BullMQ queue). */
export function connectRedis(url: string): Redis {
  return new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 2000 });
}

export async function pingRedis(redis: Redis): Promise<void> {
  if (redis.status === 'wait' || redis.status === 'end') await redis.connect();
  const answer = await redis.ping();
  if (answer !== 'PONG') throw new Error(`unexpected answer ${answer}`);
}
