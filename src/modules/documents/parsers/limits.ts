/** What one upload may make a parser do; the parser threads receive them (parse.ts, pool.ts). */
export interface ParseLimits {
  pdfMaxPages: number
  pdfMaxInflatedBytes: number
  zipMaxEntries: number
  zipMaxXmlBytes: number
}

export const DEFAULT_PARSE_LIMITS: ParseLimits = {
  pdfMaxPages: 5000,
  // text content streams and fonts; images count only beyond their declared size
  pdfMaxInflatedBytes: 128 * 1024 * 1024,
  zipMaxEntries: 5000,
  zipMaxXmlBytes: 200 * 1024 * 1024,
}
