import { type Static, Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { bearerSecurity, type Guards } from '../../http/auth.js'
import { DateTime, ErrorBody, Nullable, commonErrors, iso } from '../../http/schemas.js'
import type { CheckCache } from './capability-checks.js'
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
  checks: Type.Array(
    Type.Object({
      name: Type.Union([Type.Literal('chat_stream'), Type.Literal('json_mode'), Type.Literal('tool_call'), Type.Literal('embedding'), Type.Literal('vision')]),
      ok: Type.Boolean(),
      detail: Type.String({ description: 'what was seen, and what to change when not ok' }),
    }),
    { description: 'what the server can do, tried with the workspace key (empty: not run, see hint)' },
  ),
  checks_at: Nullable(DateTime),
  capabilities: Type.Object({
    tools: Nullable(Type.Boolean({ description: 'false: the chat model refuses tools, so actions are not offered to it' })),
    tools_reason: Nullable(Type.String()),
    json_mode: Nullable(Type.Union([Type.Literal('json_schema'), Type.Literal('json_object'), Type.Literal('plain')])),
    embedding_width: Nullable(Type.Integer()),
    vision: Nullable(Type.Boolean({ description: "false: the chat model refuses image parts, so a visitor's images reach it as their names" })),
  }),
  vector_search: Type.Object(
    {
      mode: Type.Union([
        Type.Literal('none'),
        Type.Literal('pgvector_index'),
        Type.Literal('pgvector_exact'),
        Type.Literal('in_process'),
        Type.Literal('rerank_only'),
      ]),
      embedded_chunks: Type.Integer(),
      detail: Nullable(Type.String({ description: 'why the vectors do less than their own search (rerank_only), and what to change' })),
    },
    {
      description:
        "how this workspace's vectors are searched: rerank_only means no pgvector and more vectors than the in-process cache holds, so they only re-rank what the words found",
    },
  ),
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
    checks: CheckCache
    /** the retrieval's account of how the workspace's vectors are searched (retrieval.service.ts vectorSearchState) */
    vectorSearch: (tenantId: string) => Promise<Static<typeof ProviderStatusResponse>['vector_search']>
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
        const apiKey = await deps.llmKey(req.tenantId!)
        if (req.query.probe || monitor.status().state === 'unknown') await monitor.probe(apiKey)
        // the capability checks: cached per key (model calls at most every few minutes), skipped while unreachable
        const report = apiKey && monitor.status().state !== 'unreachable' ? await deps.checks.get(apiKey, req.query.probe) : null
        const s = monitor.status()
        const essentialFailed = report?.checks.some((c) => !c.ok && (c.name === 'chat_stream' || c.name === 'embedding'))
        const quirks = monitor.quirks.get(deps.models.chat)
        const tools = quirks.noTools ? false : (report?.capabilities.tools ?? null)
        return {
          ...s,
          state: essentialFailed && s.state !== 'unreachable' ? ('error' as const) : s.state,
          hint:
            s.hint ??
            (essentialFailed
              ? report!.checks.find((c) => !c.ok)!.detail
              : !apiKey
                ? 'No model key is set for this workspace: the checks run once one is.'
                : null),
          checks: report?.checks ?? [],
          checks_at: iso(report?.ran_at ?? null),
          capabilities: {
            tools,
            tools_reason:
              tools === false
                ? `The model server refuses tool calls for ${deps.models.chat}: actions are not offered to the model. Set CHAT_MODEL to a model with tool support.`
                : null,
            json_mode: quirks.json ?? report?.capabilities.json_mode ?? null,
            embedding_width: report?.capabilities.embedding_width ?? null,
            vision: quirks.noImages ? false : (report?.capabilities.vision ?? null),
          },
          checked_at: iso(s.checked_at),
          last_success_at: iso(s.last_success_at),
          last_error: s.last_error && { ...s.last_error, at: iso(s.last_error.at)! },
          chat_model: deps.models.chat,
          embedding_model: deps.models.embedding,
          vector_search: await deps.vectorSearch(req.tenantId!),
        }
      },
    )
  }
