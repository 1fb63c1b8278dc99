import { Type, type Static } from '@sinclair/typebox'

const Code = Type.String({ minLength: 2, maxLength: 12, description: 'an ISO 639-1 code, e.g. en, de, fr' })

export const LanguageSettingsBody = Type.Object(
  {
    knowledge: Code,
    answer: Type.Array(Code, { maxItems: 30, description: 'the languages the bot answers in; empty: any' }),
    fallback: Code,
  },
  { additionalProperties: false },
)
export type LanguageSettingsBodyT = Static<typeof LanguageSettingsBody>

export const DetectedKnowledge = Type.Union(
  [
    Type.Object({
      language: Type.String(),
      /** the share of the sampled passages in that language */
      share: Type.Number(),
      sampled: Type.Integer(),
    }),
    Type.Null(),
  ],
  { description: 'the language read from a sample of the indexed pages, proposed for `knowledge`; null when nothing is indexed yet' },
)

export const LanguageSettingsResponse = Type.Object({
  knowledge: Type.String(),
  answer: Type.Array(Type.String()),
  fallback: Type.String(),
  detected_knowledge: DetectedKnowledge,
  /** whether the workspace has saved its settings (false: the defaults) */
  configured: Type.Boolean(),
  /** the codes a setting may name, with their English names */
  available: Type.Array(Type.Object({ code: Type.String(), name: Type.String() })),
})
