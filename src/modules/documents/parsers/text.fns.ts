import { trimLineEnds } from '../../../lib/trim-run.fns.js'

/**
 * Bytes to clean text: BOMs (UTF-8, UTF-16 LE/BE) honoured, UTF-8 when valid, else Windows-1252 (what
 * old Windows editors wrote); line endings unified, control characters and NULs removed, NFC.
 */
export function decodeText(bytes: Uint8Array): string {
  let text: string
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) text = new TextDecoder('utf-8').decode(bytes.subarray(3))
  else if (bytes[0] === 0xff && bytes[1] === 0xfe) text = new TextDecoder('utf-16le').decode(bytes.subarray(2))
  else if (bytes[0] === 0xfe && bytes[1] === 0xff) text = new TextDecoder('utf-16be').decode(bytes.subarray(2))
  else {
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
    } catch {
      text = new TextDecoder('windows-1252').decode(bytes)
    }
  }
  return cleanText(text)
}

/** Line endings, control characters, trailing spaces and runs of blank lines; Unicode NFC. */
export function cleanText(text: string): string {
  return trimLineEnds(text.replace(/\r\n?/g, '\n').replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\u200b\ufeff]/g, ''))
    .replace(/\n{3,}/g, '\n\n')
    .normalize('NFC')
    .trim()
}
