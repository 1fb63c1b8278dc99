import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { bearerSecurity, type Guards } from '../../http/auth.js'
import { ErrorBody, commonErrors } from '../../http/schemas.js'
import { AgentsResponse, RangeQuery, SummaryResponse, TimeseriesQuery, TimeseriesResponse, UnansweredQuery, UnansweredResponse } from './analytics.schemas.js'
import type { AnalyticsService } from './analytics.service.js'

/** GET /analytics/summary, /analytics/agents, /analytics/timeseries, /analytics/unanswered: owners, admins and analysts. */
export const analyticsRoutes =
  (deps: { guards: Guards; analytics: AnalyticsService }): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { guards, analytics } = deps
    const base = { tags: ['analytics'], security: bearerSecurity }
    const errors = { ...commonErrors, 403: ErrorBody, 404: ErrorBody }
    const pre = { preHandler: guards.can('analytics') }

    app.get(
      '/analytics/summary',
      { ...pre, schema: { ...base, operationId: 'getAnalyticsSummary', querystring: RangeQuery, response: { 200: SummaryResponse, ...errors } } },
      async (req) => analytics.summary(req.tenantId!, req.query, req.member?.botIds ?? null),
    )
    app.get(
      '/analytics/agents',
      { ...pre, schema: { ...base, operationId: 'getAnalyticsAgents', querystring: RangeQuery, response: { 200: AgentsResponse, ...errors } } },
      async (req) => analytics.agents(req.tenantId!, req.query, req.member?.botIds ?? null),
    )
    app.get(
      '/analytics/timeseries',
      { ...pre, schema: { ...base, operationId: 'getAnalyticsTimeseries', querystring: TimeseriesQuery, response: { 200: TimeseriesResponse, ...errors } } },
      async (req) => analytics.timeseries(req.tenantId!, req.query, req.member?.botIds ?? null),
    )
    app.get(
      '/analytics/unanswered',
      { ...pre, schema: { ...base, operationId: 'getUnansweredTopics', querystring: UnansweredQuery, response: { 200: UnansweredResponse, ...errors } } },
      async (req) => analytics.unanswered(req.tenantId!, req.query, req.member?.botIds ?? null),
    )
  }
