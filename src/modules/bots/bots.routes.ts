import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { actorOf, bearerSecurity, scopeOf, type Guards } from '../../http/auth.js'
import { ErrorBody, commonErrors } from '../../http/schemas.js'
import { Bot, BotCreate, BotList, BotParams, BotUpdate, DisclosureConfig, DisclosureUpdate } from './bots.schemas.js'
import { presentBot, type BotRow, type BotsService } from './bots.service.js'

const presentDisclosure = (b: BotRow) => ({ bot_id: b.id, level: b.disclosure_level, updated_at: b.updated_at.toISOString() })

export const botsRoutes =
  (deps: { guards: Guards; bots: BotsService }): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { guards, bots } = deps
    const base = { tags: ['bots'], security: bearerSecurity }
    const errors = { ...commonErrors, 403: ErrorBody, 404: ErrorBody }

    // Reading bots is every member's (scoped to its bots): agents and analysts filter their inbox and figures by bot.
    const read = guards.can('member')
    const write = guards.can('settings')

    app.get(
      '/bots',
      {
        preHandler: read,
        schema: { ...base, operationId: 'listBots', description: "The workspace's bots the caller sees.", response: { 200: BotList, ...errors } },
      },
      async (req) => ({ items: (await bots.listFor(req.tenantId!, scopeOf(req))).map(presentBot) }),
    )

    app.post(
      '/bots',
      { preHandler: write, schema: { ...base, operationId: 'createBot', body: BotCreate, response: { 201: Bot, ...errors } } },
      async (req, reply) => reply.code(201).send(presentBot(await bots.create(req.tenantId!, req.body, undefined, actorOf(req)))),
    )

    app.get(
      '/bots/:bot_id',
      { preHandler: read, schema: { ...base, operationId: 'getBot', params: BotParams, response: { 200: Bot, ...errors } } },
      async (req) => presentBot(await bots.get(req.tenantId!, req.params.bot_id, scopeOf(req))),
    )

    app.patch(
      '/bots/:bot_id',
      {
        preHandler: write,
        schema: { ...base, operationId: 'updateBot', params: BotParams, body: BotUpdate, response: { 200: Bot, 409: ErrorBody, ...errors } },
      },
      async (req) => presentBot(await bots.update(req.tenantId!, req.params.bot_id, req.body, actorOf(req))),
    )

    app.delete(
      '/bots/:bot_id',
      {
        preHandler: write,
        schema: { ...base, operationId: 'deleteBot', params: BotParams, response: { 204: Type.Null(), 409: ErrorBody, ...errors } },
      },
      async (req, reply) => {
        await bots.remove(req.tenantId!, req.params.bot_id, actorOf(req))
        return reply.code(204).send(null)
      },
    )

    app.get(
      '/bots/:bot_id/disclosure',
      { preHandler: read, schema: { ...base, operationId: 'getBotDisclosure', params: BotParams, response: { 200: DisclosureConfig, ...errors } } },
      async (req) => presentDisclosure(await bots.get(req.tenantId!, req.params.bot_id, scopeOf(req))),
    )

    app.put(
      '/bots/:bot_id/disclosure',
      {
        preHandler: write,
        schema: { ...base, operationId: 'updateBotDisclosure', params: BotParams, body: DisclosureUpdate, response: { 200: DisclosureConfig, ...errors } },
      },
      async (req) => presentDisclosure(await bots.setDisclosure(req.tenantId!, req.params.bot_id, req.body.level, actorOf(req))),
    )
  }
