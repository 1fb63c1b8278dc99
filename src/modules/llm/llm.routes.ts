import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { bearerSecurity, type Guards } from '../../http/auth.js'
import { DateTime, ErrorBody, Nullable, commonErrors, iso } from '../../http/schemas.js'
import type { ProviderMonitor } from './provider-status.js'

const ProviderStatusResponse = Type.Object({
  base_url: Type.String({ description: 'LLM_BASE_URL as this server uses it, without credentials' }),
  variable: Type.Literal('LLM_BASE_URL', { description: 'the setting that changes the address' }),
  state: Type.Union([Type.Literal('unknown'), Type.Literal('ok'), Type.Literal('unreachable'), Type.Literal('error')]),
  checked_at: Nullable(DateTime),
  last_success_at: Nullable(DateTime),
  last_error: Nullable(Type.Object({ kind: Type.String(), status: Nullable(Type.Integer()), message: Type.String(), at: DateTime })),
  hint: Nullable(Type.String({ description: 'what to change, in words, when the state is not ok' })),
  chat_model: Type.String(),
  embedding_model: Type.String(),
})

const StatusQuery = Type.Object({
  probe: Type.Boolean({ default: false, description: 'ask the provider now instead of reporting the last calls' }),
})

/**
 * `GET /llm/status`: the language-model provider as this server sees it, for the operator's dashboard.
 * Nothing was called yet (fresh install) or `probe=true`: the provider is asked now, so a wrong
 * LLM_BASE_URL shows before the first visitor meets it.
 */
export const llmRoutes =
  (deps: {
    guards: Guards
    monitor: ProviderMonitor
    llmKey: (tenantId: string) => Promise<string | null>
    models: { chat: string; embedding: string }
  }): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { guards, monitor } = deps
    app.get(
      '/llm/status',
      {
        preHandler: guards.can('member'),
        schema: {
          tags: ['llm'],
          security: bearerSecurity,
          operationId: 'llmStatus',
          summary: 'Whether the language-model provider answers, and what to change when not',
          querystring: StatusQuery,
          response: { 200: ProviderStatusResponse, ...commonErrors, 403: ErrorBody, 404: ErrorBody },
        },
      },
      async (req) => {
        if (req.query.probe || monitor.status().state === 'unknown') await monitor.probe(await deps.llmKey(req.tenantId!))
        const s = monitor.status()
        return {
          ...s,
          checked_at: iso(s.checked_at),
          last_success_at: iso(s.last_success_at),
          last_error: s.last_error && { ...s.last_error, at: iso(s.last_error.at)! },
          chat_model: deps.models.chat,
          embedding_model: deps.models.embedding,
        }
      },
    )
  }
