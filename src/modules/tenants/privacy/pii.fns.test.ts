import { describe, expect, it } from 'vitest'
import { cardPrefixPlausible, ibanChecksumValid, looksLikeSecret, luhnValid, ssnValid } from './pii-checks.js'
import { OPTIONAL_PII_TYPES, detectPii, jwtSpans, redact, type OptionalPiiType, type PiiType } from './pii.fns.js'
import { linearAgainstBaseline, ofLength } from '../../../../test/helpers/linear-time.js'

const ALL = { optional: new Set<OptionalPiiType>(OPTIONAL_PII_TYPES) }

/** The values found in `text` for one type (with every optional type on). */
function found(text: string, type: PiiType, opts = ALL): string[] {
  return detectPii(text, opts)
    .filter((e) => e.type === type)
    .map((e) => text.slice(e.start, e.end))
}
const none = (text: string, opts = ALL) => expect(detectPii(text, opts).map((e) => `${e.type}:${text.slice(e.start, e.end)}`)).toEqual([])

describe('redact', () => {
  it('replaces entities with placeholders, reports offsets in the original text and counts per type', () => {
    const text = 'Mail john.doe@example.com or call +1 (555) 234-5678, card 4111 1111 1111 1111.'
    const r = redact(text)
    expect(r.text).toBe('Mail [EMAIL] or call [PHONE], card [CARD].')
    expect(r.entities.map((e) => [e.type, text.slice(e.start, e.end)])).toEqual([
      ['EMAIL', 'john.doe@example.com'],
      ['PHONE', '+1 (555) 234-5678'],
      ['CARD', '4111 1111 1111 1111'],
    ])
    expect(r.counts).toEqual({ EMAIL: 1, PHONE: 1, CARD: 1 })
  })

  it('leaves text without PII unchanged', () => {
    const text = 'Hello! My order 12345 from 2024-01-05 arrived broken; version 1.2.3 of the app crashes at 10:30.'
    expect(redact(text, ALL)).toEqual({ text, entities: [], counts: {} })
  })

  it('optional types are redacted only when enabled', () => {
    const text = 'ssn 123-45-6789 from 192.168.1.10 via https://x.example/reset?token=abc123def'
    expect(redact(text).text).toBe(text)
    expect(redact(text, { optional: new Set<OptionalPiiType>(['IP']) }).text).toBe('ssn 123-45-6789 from [IP] via https://x.example/reset?token=abc123def')
    expect(redact(text, ALL).text).toBe('ssn [ID_DOC] from [IP] via https://x.example/reset?token=[URL_TOKEN]')
  })

  it('resolves overlaps: one entity per span, the more specific type wins', () => {
    expect(redact('https://x.example/?token=sk-proj-abcdefghijklmnop1234567890', ALL).text).toBe('https://x.example/?token=[API_KEY]')
    expect(redact('pay 4111111111111111 now', ALL).counts).toEqual({ CARD: 1 })
    expect(redact('ssn 123-45-6789', ALL).counts).toEqual({ ID_DOC: 1 })
    expect(redact('5552345678@txt.example.com', ALL).text).toBe('[EMAIL]')
  })
})

describe('EMAIL', () => {
  it.each([
    ['john.doe@example.com', 'john.doe@example.com'],
    ["write to J.O'Brien+tag@mail.example.co.uk today", "J.O'Brien+tag@mail.example.co.uk"],
    ['jürgen@exämple.de.', 'jürgen@exämple.de'],
    ['<support-team_1@sub.domain.io>', 'support-team_1@sub.domain.io'],
    ['Contact:ANNA@EXAMPLE.ORG,', 'ANNA@EXAMPLE.ORG'],
  ])('finds %j', (text, value) => expect(found(text, 'EMAIL')).toEqual([value]))

  it.each(['@mention me', 'user@localhost', 'a@b', '2@3 times', 'email at example dot com', 'price is 5@10.00'])('ignores %j', (text) =>
    expect(found(text, 'EMAIL')).toEqual([]),
  )
})

describe('PHONE', () => {
  it.each([
    '+1 (555) 234-5678',
    '(555) 234-5678',
    '555-234-5678',
    '555.234.5678',
    '+44 20 7946 0958',
    '020 7946 0958',
    '+33 1 23 45 67 89',
    '06 12 34 56 78',
    '+49 30 1234567',
    '0049 30 1234567',
    '+49 (0) 30 1234567',
    '5552345678',
    '+1-555-555-5555x1234',
    '001-555-234-5678',
    '0961-7596216',
    '+919876543210',
    '699 956 915',
    '78 651 450',
  ])('finds %j', (phone) => expect(found(`Reach me on ${phone}, thanks`, 'PHONE')).toEqual([phone]))

  it('finds short local numbers only next to a phone word, and two numbers side by side', () => {
    expect(found('call me at 555-1234', 'PHONE')).toEqual(['555-1234'])
    expect(found('Phone: 60-56-85-91', 'PHONE')).toEqual(['60-56-85-91'])
    expect(found('room 555-1234', 'PHONE')).toEqual([])
    expect(found('tel 555-234-5678 555-987-6543', 'PHONE')).toEqual(['555-234-5678', '555-987-6543'])
  })

  it.each([
    'on 2024-01-05 at noon',
    'Date: 2023-08-28 12:13:52',
    'born 05/01/1984',
    'the 31.12.2023 deadline',
    'version 1.2.3.4',
    'it costs $1 234 567',
    'it costs 1 299 000 EUR',
    'order #12345678',
    'order number 5552345678',
    'invoice no. 0123456789',
    'a 1920 x 1080 screen',
    'between 2019-2023',
    'pi is 3.14159265',
    'ISBN 978-3-16-148410-0',
    'we are at 17151 2450 Crown St',
    'steps 1 2 3 4 5 6 7 8',
    'ssn 123-45-6789',
    'card 4111 1111 1111 1112',
    'tracking 1234567',
    'incidence 38.29 (95%CI: 35.35-41.23) after adjusting',
    'over half (54.0%, 11 256/20 849) of patients',
    'recruitment 10 11 12 13 14 and growth',
    '(P<0.001) (146+/-23.5 impulses)',
    'trial 2004-002245-12 registered',
  ])('ignores %j', (text) => expect(found(text, 'PHONE')).toEqual([]))
})

describe('CARD', () => {
  it.each([
    '4111 1111 1111 1111',
    '4111-1111-1111-1111',
    '4111111111111111',
    '5500 0000 0000 0004',
    '3782 822463 10005',
    '6011111111111117',
    '3530111333300000',
    '30569309025904',
    '2223003122003222',
    '4222222222222',
  ])('finds %j', (card) => expect(found(`card: ${card}.`, 'CARD')).toEqual([card]))

  it.each([
    'card 4111 1111 1111 1112', // Luhn fails
    'ref 1234567812345670', // Luhn passes, no issuer starts with 1
    'licence U62928788557186', // glued to letters
    'id 4111 11 1111 111 111', // not a card layout
    'number 41111111111111111111111', // too long
  ])('ignores %j', (text) => expect(found(text, 'CARD')).toEqual([]))
})

describe('IBAN', () => {
  it.each([
    'DE89 3704 0044 0532 0130 00',
    'GB82 WEST 1234 5698 7654 32',
    'FR1420041010050500013M02606',
    'NL91ABNA0417164300',
    'be68539007547034',
    'CH93-0076-2011-6238-5295-7',
  ])('finds %j', (iban) => expect(found(`IBAN: ${iban}, thanks`, 'IBAN')).toEqual([iban]))

  it('stops at the country length even when more text follows', () => {
    expect(found('DE89370400440532013000 and more', 'IBAN')).toEqual(['DE89370400440532013000'])
  })

  it.each(['DE89 3704 0044 0532 0130 01', 'AB12 3456 7890 1234 5678', 'DE89 3704 0044 0532 0130', 'XDE89370400440532013000'])('ignores %j', (text) =>
    expect(found(text, 'IBAN')).toEqual([]),
  )
})

describe('API_KEY', () => {
  it.each([
    'sk-proj-abcdefghijklmnop1234567890',
    'sk-ant-api03-abcdefghijklmnopqrstuv',
    'sk_live_4eC39HqLyjWDarjtT1zdp7dc',
    'ck_4f9a8b7c6d5e4f3a2b1c0d9e',
    'ghp_abcdefghijklmnopqrstuvwxyz0123456789',
    'xoxb-123456789012-abcdefghij',
    'AKIAIOSFODNN7EXAMPLE',
    'AIzaSyA1234567890abcdefghijklmnopqrstuv',
    'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk',
    'Zx8Qp2Lm9Vt4Rk7Yw1Nc5Hb3Jd6Fs0Ga',
    'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  ])('finds %j', (key) => expect(found(`here: ${key} ok`, 'API_KEY')).toEqual([key]))

  it('finds credentials after Bearer, Basic and key words, and PEM private keys', () => {
    expect(found('Authorization: Bearer abcdef1234567890abcdef.', 'API_KEY')).toEqual(['abcdef1234567890abcdef'])
    expect(found('Authorization: Basic dXNlcjpwYXNzd29yZA==', 'API_KEY')).toEqual(['dXNlcjpwYXNzd29yZA=='])
    expect(found('api_key=9f8e7d6c5b4a39281706', 'API_KEY')).toEqual(['9f8e7d6c5b4a39281706'])
    expect(found('my client secret is 8d7f6e5d4c3b2a1f0e9d.', 'API_KEY')).toEqual(['8d7f6e5d4c3b2a1f0e9d'])
    const pem = '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----'
    expect(found(`key:\n${pem}\nthanks`, 'API_KEY')).toEqual([pem])
  })

  it.each([
    'getUserAccountBalanceReport2024',
    '550e8400-e29b-41d4-a716-446655440000',
    'supercalifragilisticexpialidocious',
    'https://docs.example.com/en/latest/getting-started/installation',
    'the token is expired',
    'task-abcdefghijklmnopqrstuvwxyz',
    'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789',
    'the PI3K-Akt-mTORC1-S6K1/2 axis',
    'Oct4/Sox2/Klf4/Myc-mediated reprogramming',
    'ThisIsAVeryLongIdentifier2',
  ])('ignores %j', (text) => expect(found(text, 'API_KEY')).toEqual([]))
})

describe('PASSWORD', () => {
  it.each([
    ['password: hunter2', 'hunter2'],
    ['pwd=S3cr3t!', 'S3cr3t!'],
    ['my password is Tr0ub4dor&3.', 'Tr0ub4dor&3'],
    ["the password for my account is 'open sesame'", 'open sesame'],
    ['Password is: "p@ss w0rd"', 'p@ss w0rd'],
    ['mot de passe : azerty123', 'azerty123'],
    ['Passwort ist geheim123', 'geheim123'],
    ['PIN: 4821', '4821'],
    ['login https://user:pa55word@host.example/x', 'pa55word'],
  ])('finds the value in %j', (text, value) => expect(found(text, 'PASSWORD')).toEqual([value]))

  it.each([
    'my password is not working',
    'I forgot my password',
    'send me a password reset link',
    'the password is incorrect',
    'the pin is in the drawer',
    'boarding pass is ready',
    'password: [PASSWORD]',
  ])('ignores %j', (text) => expect(found(text, 'PASSWORD')).toEqual([]))
})

describe('ID_DOC (optional)', () => {
  it('finds valid US SSNs', () => {
    expect(detectPii('ssn 123-45-6789', ALL)).toEqual([{ type: 'ID_DOC', start: 4, end: 15, subtype: 'SSN' }])
    expect(found('SSN: 123 45 6789', 'ID_DOC')).toEqual(['123 45 6789'])
    expect(found('my social security number is 123456789', 'ID_DOC')).toEqual(['123456789'])
  })

  it.each(['078-05-1120', '666-12-3456', '900-12-3456', '000-12-3456', '123-00-6789', '123-45-0000', '111-11-1111', '123-45-67890', 'order 123456789'])(
    'ignores %j',
    (text) => expect(found(text, 'ID_DOC')).toEqual([]),
  )

  it('finds document numbers after a keyword', () => {
    expect(detectPii('passport number: X12345678', ALL)).toEqual([{ type: 'ID_DOC', start: 17, end: 26, subtype: 'PASSPORT' }])
    expect(found("driver's license D1234567", 'ID_DOC')).toEqual(['D1234567'])
    expect(found('national id: 12345678Z, thanks', 'ID_DOC')).toEqual(['12345678Z'])
    expect(found('NINO is AB 12 34 56 C', 'ID_DOC')).toEqual(['AB 12 34 56 C'])
    expect(found('tax id 12-3456789', 'ID_DOC')).toEqual(['12-3456789'])
  })

  it.each(['my ID card is lost', 'passport expired last year', 'id 42', 'license agreement v2'])('ignores %j', (text) =>
    expect(found(text, 'ID_DOC')).toEqual([]),
  )
})

describe('IP (optional)', () => {
  it.each([
    '192.168.1.10',
    '8.8.8.8',
    '255.255.255.0',
    '2001:db8::1',
    'fe80::1ff:fe23:4567:890a',
    '::ffff:192.0.2.1',
    '2001:0db8:85a3:0000:0000:8a2e:0370:7334',
  ])('finds %j', (ip) => expect(found(`from ${ip}.`, 'IP')).toEqual([ip]))

  it.each(['256.1.1.1', '1.2.3.4.5', 'version 1.2.3.4', 'at 10:30:00', 'mac 00:1A:2B:3C:4D:5E', 'ratio 1:2:3', 'v1.2.3.4'])('ignores %j', (text) =>
    expect(found(text, 'IP')).toEqual([]),
  )
})

describe('URL_TOKEN (optional)', () => {
  it('finds sensitive query values only', () => {
    expect(found('https://x.example/reset?token=abc123def&lang=en', 'URL_TOKEN')).toEqual(['abc123def'])
    expect(found('https://s3.example/f?X-Amz-Signature=abcdef123&code=987654.', 'URL_TOKEN')).toEqual(['abcdef123', '987654'])
    expect(found('https://x.example/cb?session_id=s3ss10n&state=ok', 'URL_TOKEN')).toEqual(['s3ss10n'])
  })

  it.each(['https://x.example/?page=2&sort=asc', 'https://x.example/?postcode=12345', 'https://x.example/?token=ab'])('ignores %j', (text) =>
    expect(found(text, 'URL_TOKEN')).toEqual([]),
  )
})

describe('checks', () => {
  it('luhn, issuer prefixes, IBAN mod 97, SSN rules, secret-likeness', () => {
    expect(luhnValid('79927398713')).toBe(true)
    expect(luhnValid('79927398710')).toBe(false)
    expect(cardPrefixPlausible('4111111111111111')).toBe(true)
    expect(cardPrefixPlausible('9111111111111111')).toBe(false)
    expect(ibanChecksumValid('GB82WEST12345698765432')).toBe(true)
    expect(ibanChecksumValid('GB82WEST12345698765433')).toBe(false)
    expect(ssnValid('123', '45', '6789')).toBe(true)
    expect(ssnValid('666', '45', '6789')).toBe(false)
    expect(looksLikeSecret('Zx8Qp2Lm9Vt4Rk7Yw1Nc5Hb3')).toBe(true)
    expect(looksLikeSecret('ThisIsAVeryLongIdentifier2')).toBe(false)
  })
})

describe('speed', () => {
  const N = 100_000
  const adversarial: Record<string, string> = {
    letters: 'a'.repeat(N),
    digits: '1'.repeat(N),
    'digits and spaces': '1 '.repeat(N / 2),
    'digits and dashes': '12-'.repeat(N / 3),
    'at signs': 'a@'.repeat(N / 2),
    'long local parts': ('a'.repeat(60) + '@').repeat(N / 61),
    dots: 'a.'.repeat(N / 2),
    colons: 'a:'.repeat(N / 2),
    'ip-like': '1.'.repeat(N / 2),
    'password keywords': 'password is '.repeat(N / 12),
    'password fillers': 'password for a b c d '.repeat(N / 21),
    'iban starts': 'DE12 '.repeat(N / 5),
    base64: 'aB3/'.repeat(N / 4),
    parentheses: '(1'.repeat(N / 2),
    'query params': '&token=a'.repeat(N / 8),
    'pem without end': '-----BEGIN PRIVATE KEY-----'.repeat(N / 27),
    'id keywords': 'passport '.repeat(N / 9),
    prose: 'Hello, my name is Jo and I need help with order 12345 on 2024-01-05, call 555-234-5678. '.repeat(N / 88),
  }
  it.each(Object.keys(adversarial))('redacts 100 KB of %s in linear time (well under a second of CPU, even on a loaded machine)', (name) => {
    const text = adversarial[name]
    redact(text.slice(0, 2000), ALL) // warm up
    let best = Number.POSITIVE_INFINITY
    for (let i = 0; i < 3; i++) {
      // CPU time, not wall time: a machine shared with other work stretches the wall clock, not the work done
      const t = process.cpuUsage()
      redact(text, ALL)
      const used = process.cpuUsage(t)
      best = Math.min(best, (used.user + used.system) / 1000)
    }
    // catastrophic backtracking takes far longer than seconds on 100 KB; linear work is about 30 ms of CPU on an idle
    // machine and was measured at 360 ms on one shared by several test runs, so the bound is a second
    expect(best).toBeLessThan(1000)
  })
})

describe('JWTs by a scan (issue 50: an unknown verdict that was quadratic)', () => {
  it('jwtSpans finds what the JWT pattern found', () => {
    let seed = 50
    const pick = (xs: string[]) => xs[(seed = (seed * 1103515245 + 12345) & 0x7fffffff) % xs.length]!
    const alphabet = ['eyJ', 'eyJ', '.', '.eyJ', '-', '_', 'a', '0', 'x', ' ', 'é', 'abcdefgh']
    for (let i = 0; i < 60_000; i++) {
      const s = Array.from({ length: seed % 14 }, () => pick(alphabet)).join('')
      const want = Array.from(s.matchAll(/\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g), (m) => [m.index, m.index + m[0].length])
      expect(jwtSpans(s), JSON.stringify(s)).toEqual(want)
    }
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U'
    expect(redact(`token: ${jwt} ok`).text).not.toContain('eyJzdWIi')
  })
  it('reads a run of eyJ in linear time', () => {
    // the longest text redacted on the event loop: an attachment's text (maxTextChars, 50,000)
    const n = 50_000
    const ordinary = ofLength('Hello, my order 12345 did not arrive; the token eyJhbGciOiJI.eyJzdWIiOiIx.sig was sent. ', n)
    linearAgainstBaseline(jwtSpans, ofLength('eyJ0000000-', n), ordinary)
    linearAgainstBaseline(jwtSpans, ofLength('eyJ00000000.eyJ0000000-', n), ordinary)
  })
})
