import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { bearerSecurity, type Guards } from '../../http/auth.js'
import { rateLimits } from '../../http/rate-limit.js'
import { ErrorBody, RateLimitBody, commonErrors } from '../../http/schemas.js'
import {
  AttemptList,
  DeliveryList,
  DeliveryListQuery,
  DeliveryParams,
  EndpointCreate,
  EndpointCreated,
  Endpoint,
  EndpointList,
  EndpointParams,
  EndpointUpdate,
  ResendAccepted,
  ResendFailedRequest,
  ResendFailedResponse,
  SecretResponse,
  TestResponse,
} from './webhooks.schemas.js'
import type { Actor, WebhooksService } from './webhooks.service.js'

const actor = (req: FastifyRequest): Actor => ({ userId: req.authUser?.id ?? null, ip: req.ip ?? null })

/** Outbound webhooks and Slack (contract section "Webhooks"): owners and admins only. */
export const webhooksRoutes =
  (deps: { guards: Guards; webhooks: WebhooksService; onClose?: () => Promise<void> }): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { guards, webhooks } = deps
    if (deps.onClose) app.addHook('onClose', deps.onClose)
    const base = { tags: ['webhooks'], security: bearerSecurity }
    const errors = { ...commonErrors, 403: ErrorBody, 404: ErrorBody }
    const pre = { preHandler: guards.can('integrations') }

    app.get(
      '/webhooks/endpoints',
      { ...pre, schema: { ...base, operationId: 'listWebhookEndpoints', response: { 200: EndpointList, ...errors } } },
      async (req) => ({
        items: await webhooks.list(req.tenantId!),
      }),
    )

    app.post(
      '/webhooks/endpoints',
      {
        ...pre,
        schema: {
          ...base,
          operationId: 'createWebhookEndpoint',
          description:
            'The answer carries the signing secret (whsec_...), shown only here. 422 for a URL the SSRF guard refuses (private or loopback addresses, unless CRAWLER_ALLOW_PRIVATE_NETWORKS).',
          body: EndpointCreate,
          response: { 201: EndpointCreated, 409: ErrorBody, ...errors },
        },
      },
      async (req, reply) => reply.code(201).send(await webhooks.create(req.tenantId!, req.body, actor(req))),
    )

    app.patch(
      '/webhooks/endpoints/:id',
      {
        ...pre,
        schema: {
          ...base,
          operationId: 'updateWebhookEndpoint',
          description: 'Disabling fails its pending deliveries (resend them later); enabling clears disabled_reason.',
          params: EndpointParams,
          body: EndpointUpdate,
          response: { 200: Endpoint, ...errors },
        },
      },
      async (req) => webhooks.update(req.tenantId!, req.params.id, req.body, actor(req)),
    )

    app.delete(
      '/webhooks/endpoints/:id',
      { ...pre, schema: { ...base, operationId: 'deleteWebhookEndpoint', params: EndpointParams, response: { 204: Type.Null(), ...errors } } },
      async (req, reply) => {
        await webhooks.remove(req.tenantId!, req.params.id, actor(req))
        return reply.code(204).send(null)
      },
    )

    app.post(
      '/webhooks/endpoints/:id/rotate-secret',
      {
        ...pre,
        schema: {
          ...base,
          operationId: 'rotateWebhookSecret',
          description: 'A new secret, shown only here; the previous one also signs for 24 h (two v1 signatures). Audited as rotated_key.',
          params: EndpointParams,
          response: { 200: SecretResponse, ...errors },
        },
      },
      async (req) => webhooks.rotateSecret(req.tenantId!, req.params.id, actor(req)),
    )

    app.post(
      '/webhooks/endpoints/:id/test',
      {
        ...pre,
        config: { rateLimit: rateLimits.webhookTest },
        schema: {
          ...base,
          operationId: 'testWebhookEndpoint',
          description: `Queues a webhook.test event for this endpoint. ${rateLimits.webhookTest.max} a minute per workspace (429 with Retry-After beyond).`,
          params: EndpointParams,
          response: { 202: TestResponse, 409: ErrorBody, 429: RateLimitBody, ...errors },
        },
      },
      async (req, reply) => reply.code(202).send(await webhooks.sendTest(req.tenantId!, req.params.id)),
    )

    app.get(
      '/webhooks/endpoints/:id/deliveries',
      {
        ...pre,
        schema: {
          ...base,
          operationId: 'listWebhookDeliveries',
          description: 'Newest first, kept 30 days. Pass next_cursor as cursor for the next page.',
          params: EndpointParams,
          querystring: DeliveryListQuery,
          response: { 200: DeliveryList, ...errors },
        },
      },
      async (req) => webhooks.deliveries(req.tenantId!, req.params.id, req.query),
    )

    app.post(
      '/webhooks/endpoints/:id/resend-failed',
      {
        ...pre,
        schema: {
          ...base,
          operationId: 'resendFailedWebhookDeliveries',
          description: 'Sends again every failed delivery of the endpoint created at or after `since` (at most 10,000; deliveries are kept 30 days).',
          params: EndpointParams,
          body: ResendFailedRequest,
          response: { 202: ResendFailedResponse, 409: ErrorBody, ...errors },
        },
      },
      async (req, reply) => reply.code(202).send(await webhooks.resendFailed(req.tenantId!, req.params.id, new Date(req.body.since))),
    )

    app.get(
      '/webhooks/deliveries/:id/attempts',
      {
        ...pre,
        schema: {
          ...base,
          operationId: 'listWebhookAttempts',
          description: 'Each attempt of the delivery: status code, latency, the first 500 characters of the answer, the next retry.',
          params: DeliveryParams,
          response: { 200: AttemptList, ...errors },
        },
      },
      async (req) => webhooks.attempts(req.tenantId!, req.params.id),
    )

    app.post(
      '/webhooks/deliveries/:id/resend',
      {
        ...pre,
        schema: {
          ...base,
          operationId: 'resendWebhookDelivery',
          description: 'Sends the delivery again with the same webhook-id, signed afresh, from the start of the retry schedule.',
          params: DeliveryParams,
          response: { 202: ResendAccepted, 409: ErrorBody, ...errors },
        },
      },
      async (req, reply) => reply.code(202).send(await webhooks.resend(req.tenantId!, req.params.id)),
    )
  }
