import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FAKE_EMBEDDING_FLOOR, startFakeLlm, type FakeLlm } from './fakes/fake-llm.js'
import { startApp, type TestApp } from './helpers/app.js'
import { callsSince, chatApi, isAnswer, system, withDocs } from './helpers/chat.js'
import { createTenant, type Tenant } from './helpers/factories.js'

/**
 * The answer must reach the model: the passage that answers a visitor's question is in the prompt of the turn's
 * generation call, within a bounded prompt. A help centre where many pages share the question's words (a phone,
 * the app, settings) and the answering passage is not among the first six hits; a question with a slip in a short
 * word; inline links whose targets the model never needs.
 */
let t: TestApp
let fake: FakeLlm
let owner: Tenant

const ANSWER = 'Scan the code shown on the other device with the new phone, and your bookmarks and passwords follow'
const pages: Record<string, string> = {
  'sync.md': `# Sync and Backup\n\n## Adding a device\n\n${ANSWER}. Sync is end-to-end encrypted.\n`,
  'lost-phone.md':
    '# Lost phone\n\nIf you lost your phone, turn off the app on the lost phone from a new phone: the app on a new phone signs out the old phone.\n',
  'phone-settings.md':
    '# Phone settings\n\nThe app settings on your phone: open the app on the phone, then Settings. A new phone starts with the default settings.\n',
  'new-phone.md':
    '# Moving to a new phone\n\nOn a new phone, install the app from the store. The new phone gets a new app with new settings; add the app to the home screen of the new phone.\n',
  'phone-battery.md':
    '# Battery use on your phone\n\nThe app uses little battery on a phone. A new phone may report new battery figures for the app in its first week.\n',
  'phone-notifications.md':
    '# Notifications on a phone\n\nAdd or remove notifications of the app on your phone: a new phone asks again whether the app may notify you.\n',
  'phone-widgets.md':
    '# Phone widgets\n\nAdd the search widget to a phone home screen. On a new phone, add the widget again: widgets do not move to a new phone.\n',
  'phone-language.md':
    '# Language on a phone\n\nThe app follows the phone language. On a new phone, set the language before you add the app to see it in your language.\n',
  'links.md':
    '# Where to get the app\n\nGet the app from the [App Store](https://apps.example.com/store/app/id-0123456789?campaign=help-centre-links) or <a href="{{ site.baseurl }}/android/">Google Play</a> for your phone.\n',
}

beforeAll(async () => {
  fake = await startFakeLlm()
  t = await startApp({ env: { LLM_BASE_URL: fake.url, ...FAKE_EMBEDDING_FLOOR } })
  owner = await createTenant(t)
  await withDocs(t, owner, pages)
}, 120_000)

afterAll(async () => {
  await t?.close()
  await fake?.close()
})

async function generationPrompt(question: string) {
  const before = fake.chatCalls().length
  const r = await chatApi(t, owner).post('/chat', { question })
  expect(r.status, r.text).toBe(200)
  const call = callsSince(fake, before).filter(isAnswer).pop()
  expect(call, 'the turn called the answer model').toBeTruthy()
  return { prompt: call!.messages.map((m) => m.content).join('\n'), sources: system(call!).split('=== Sources ===')[1] ?? '', reply: r.body }
}

describe('the answering passage reaches the model', () => {
  it('with a slip in a short word ("snyc" for sync), which alone names the subject', async () => {
    // (whether the answer model then answers is its own verdict: the fake reads "snyc" literally)
    const { sources } = await generationPrompt('how does snyc work')
    expect(sources).toContain(ANSWER)
  })

  it('as whole passages within the token budget, more of them than the old fixed six when they are short', async () => {
    const { sources } = await generationPrompt('how do I add my new phone')
    const numbered = sources.match(/^\[\d+\]/gm) ?? []
    expect(numbered.length).toBeGreaterThan(6)
    expect(sources).toContain(ANSWER)
    // RETRIEVAL_SOURCE_TOKENS (1,500, about four characters a token), with the sources' titles
    expect(sources.length).toBeLessThan(1500 * 4 + 400)
  })

  it("without inline links' targets or template markup, which the model cannot use", async () => {
    const { sources } = await generationPrompt('where do i get the app for my phone')
    expect(sources).toContain('Get the app from the App Store or Google Play for your phone.')
    expect(sources).not.toContain('apps.example.com')
    expect(sources).not.toContain('site.baseurl')
  })
})
