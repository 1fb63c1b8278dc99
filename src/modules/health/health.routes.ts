import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Redis } from 'ioredis'

const HealthResponse = Type.Object({ status: Type.String(), redis: Type.String() })

/** Redis health: `disabled` when not configured, else a PING answered within a second or `unavailable`. */
export async function redisHealth(redis: Redis | null): Promise<'disabled' | 'ok' | 'unavailable'> {
  if (!redis) return 'disabled'
  try {
    const pong = await Promise.race([redis.ping(), new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), 1000).unref())])
    return pong === 'PONG' ? 'ok' : 'unavailable'
  } catch {
    return 'unavailable'
  }
}

export const healthRoutes =
  (deps: { redis: Redis | null }): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/health',
      { logLevel: 'warn', schema: { tags: ['health'], operationId: 'health', response: { 200: HealthResponse, 503: HealthResponse } } },
      async (_req, reply) => {
        const redis = await redisHealth(deps.redis)
        if (redis === 'unavailable') return reply.code(503).send({ status: 'degraded', redis })
        return { status: 'ok', redis }
      },
    )
  }
