/**
 * The preview frame: a blank page with the real loader for one bot, drawn inline. The bot id and locale are
 * validated by the route's schema (`ch_` + [A-Za-z0-9_-], a BCP 47 tag), so they are safe in an attribute.
 */
export function previewPage(botPublicId: string, locale?: string): string {
  const lang = locale ? ` data-locale="${locale}"` : ''
  return `<!doctype html>
<html lang="${locale ?? 'en'}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Bot preview</title></head>
<body>
<div id="chat"></div>
<script src="/embed.js" data-bot-id="${botPublicId}" data-mode="inline" data-target="#chat"${lang}></script>
</body>
</html>
`
}
