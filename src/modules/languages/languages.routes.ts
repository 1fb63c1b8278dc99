import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { bearerSecurity, type Guards } from '../../http/auth.js'
import { ErrorBody, commonErrors } from '../../http/schemas.js'
import { LanguageSettingsBody, LanguageSettingsResponse } from './languages.schemas.js'
import type { LanguagesService } from './languages.service.js'

/** /tenants/me/languages: the workspace's languages; read and written by those who change its settings (owners, admins). */
export const languagesRoutes =
  (deps: { guards: Guards; languages: LanguagesService }): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { guards, languages } = deps
    const base = { tags: ['tenants'], security: bearerSecurity }
    const errors = { ...commonErrors, 403: ErrorBody, 404: ErrorBody }
    const settings = { preHandler: guards.can('settings') }
    app.get(
      '/tenants/me/languages',
      {
        ...settings,
        schema: {
          ...base,
          operationId: 'getLanguageSettings',
          description:
            "The knowledge's language, the languages the bot answers in (empty: any) and the fallback for a visitor outside them. `detected_knowledge`: the language read from a sample of the indexed pages, proposed for `knowledge`.",
          response: { 200: LanguageSettingsResponse, ...errors },
        },
      },
      (req) => languages.get(req.tenantId!),
    )
    app.put(
      '/tenants/me/languages',
      {
        ...settings,
        schema: {
          ...base,
          operationId: 'updateLanguageSettings',
          description: 'An unknown language code is a 422 naming it; the fallback must be one of `answer` when that is not empty.',
          body: LanguageSettingsBody,
          response: { 200: LanguageSettingsResponse, ...errors },
        },
      },
      (req) => languages.update(req.tenantId!, req.body),
    )
  }
