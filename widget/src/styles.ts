/**
 * All widget styles live inside its shadow root: the host page's CSS cannot reach in (`all: initial` on
 * the host cuts inheritance too) and ours cannot leak out.
 */
export const CSS = `
:host{all:initial;--a:#2563eb;--fg:#111827;--mute:#6b7280;--bg:#fff;--soft:#f3f4f6;--line:#e5e7eb;
font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--fg)}
*{box-sizing:border-box}
[hidden]{display:none!important}
button,textarea{font:inherit;color:inherit}
button{cursor:pointer}
:focus-visible{outline:2px solid var(--a);outline-offset:2px}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.launcher{position:fixed;bottom:20px;right:20px;z-index:2147483000;width:56px;height:56px;border-radius:50%;border:0;
background:var(--a);color:#fff;box-shadow:0 6px 20px rgba(0,0,0,.2);display:flex;align-items:center;justify-content:center;transition:transform .15s}
.launcher:hover{transform:scale(1.05)}
.left .launcher{right:auto;left:20px}
.launcher svg{width:26px;height:26px;fill:currentColor}
.panel{position:fixed;bottom:88px;right:20px;z-index:2147483000;width:380px;max-width:calc(100vw - 40px);height:600px;max-height:calc(100vh - 108px);
background:var(--bg);border-radius:14px;box-shadow:0 12px 40px rgba(0,0,0,.22);display:flex;flex-direction:column;overflow:hidden}
.left .panel{right:auto;left:20px}
.inline .panel{position:relative;bottom:auto;right:auto;left:auto;width:100%;max-width:none;height:100%;min-height:420px;max-height:none;box-shadow:none;border:1px solid var(--line)}
header{display:flex;align-items:center;gap:8px;padding:12px 12px 12px 16px;background:var(--a);color:#fff}
header h2{flex:1;margin:0;font-size:15px;font-weight:600;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
header select.lang{border:0;background:rgba(0,0,0,.2);color:#fff;border-radius:8px;padding:5px 4px;font:inherit;font-size:12.5px;max-width:104px}
header select.lang option{color:#111;background:#fff}
header select.lang:focus-visible{outline:2px solid #fff;outline-offset:1px}
.hbtn{border:0;background:rgba(0,0,0,.2);color:#fff;border-radius:8px;padding:6px 10px;font-size:12.5px}
.hbtn:hover{background:rgba(0,0,0,.32)}
header h2{min-width:5em}
.human{display:inline-flex;align-items:center;gap:5px;flex:0 1 auto;max-width:32%;white-space:normal;line-height:1.15;text-align:left}
.human svg{width:16px;height:16px;flex:none;fill:currentColor}
header.crowded .human .hlabel{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
header.crowded .human{padding:6px 8px}
@media (max-width:480px){.human .hlabel{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}.human{padding:6px 8px}header select.lang{max-width:88px}}
.x{width:32px;height:32px;padding:0;font-size:20px;line-height:1}
.log{flex:1;overflow-y:auto;padding:14px;display:flex;flex-direction:column;gap:10px;background:var(--bg);overscroll-behavior:contain}
.msg{display:flex;flex-direction:column;max-width:88%}
.msg.user{align-self:flex-end;align-items:flex-end}
.bubble{padding:9px 12px;border-radius:14px;background:var(--soft);word-wrap:break-word;overflow-wrap:anywhere}
.user .bubble{background:var(--a);color:#fff;border-bottom-right-radius:4px;white-space:pre-wrap}
.assistant .bubble{border-bottom-left-radius:4px}
.operator .bubble{background:#ecfdf5;border:1px solid #a7f3d0}
.who{font-size:11.5px;color:var(--mute);margin:0 4px 2px}
.system{align-self:center;max-width:92%;text-align:center;font-size:12.5px;color:#4b5563;background:var(--soft);border-radius:10px;padding:6px 10px}
.bubble p{margin:0 0 .5em}.bubble p:last-child{margin:0}
.bubble h3,.bubble h4{margin:.3em 0;font-size:1em}
.bubble ul,.bubble ol{margin:.3em 0;padding-left:1.3em}
.bubble pre{margin:.4em 0;padding:8px;background:#0f172a;color:#e2e8f0;border-radius:8px;overflow-x:auto;font-size:12.5px}
.bubble code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.92em}
.bubble :not(pre)>code{background:rgba(0,0,0,.07);padding:1px 4px;border-radius:4px}
.bubble blockquote{margin:.3em 0;padding-left:10px;border-left:3px solid var(--line);color:var(--mute)}
.bubble a{color:var(--a);text-decoration:underline}
.user .bubble a{color:#fff}
.stage{display:flex;align-items:center;gap:6px;font-size:12.5px;color:var(--mute);margin:4px 4px 0}
.dots{display:inline-flex;gap:3px}.dots i{width:5px;height:5px;border-radius:50%;background:var(--mute);animation:b 1s infinite ease-in-out}
.dots i:nth-child(2){animation-delay:.15s}.dots i:nth-child(3){animation-delay:.3s}
@keyframes b{0%,80%,100%{opacity:.3}40%{opacity:1}}
@media (prefers-reduced-motion:reduce){.dots i{animation:none}.launcher{transition:none}}
.sources{margin:6px 4px 0;font-size:12.5px;color:var(--mute)}
.sources ul{margin:2px 0 0;padding-left:1.1em}
.sources a{color:var(--a)}
.err{color:#b91c1c;background:#fef2f2;border:1px solid #fecaca}
.retry{margin-top:6px;border:1px solid currentColor;background:transparent;border-radius:8px;padding:3px 10px;font-size:12.5px}
.box{padding:12px 14px;border-top:1px solid var(--line);background:#fafafa;display:flex;flex-direction:column;gap:8px}
.box p{margin:0}
.box textarea{width:100%;min-height:56px;resize:vertical;border:1px solid var(--line);border-radius:8px;padding:8px}
.row{display:flex;gap:8px;justify-content:flex-end}
.btn{border:0;border-radius:8px;padding:7px 14px;background:var(--a);color:#fff;font-weight:600}
.btn.ghost{background:transparent;color:var(--fg);border:1px solid var(--line);font-weight:400}
.composer{display:flex;align-items:flex-end;gap:8px;padding:10px 12px;border-top:1px solid var(--line);background:var(--bg)}
.composer textarea{flex:1;resize:none;border:1px solid var(--line);border-radius:10px;padding:9px 11px;max-height:120px;min-height:40px;outline:none;background:var(--bg)}
.composer textarea:focus{border-color:var(--a)}
.send{width:40px;height:40px;border-radius:10px;border:0;background:var(--a);color:#fff;display:flex;align-items:center;justify-content:center;flex:none}
.send:disabled{opacity:.45;cursor:default}
.attach{width:40px;height:40px;border-radius:10px;border:1px solid var(--line);background:var(--bg);color:inherit;display:flex;align-items:center;justify-content:center;flex:none}
.attach svg{width:18px;height:18px;fill:currentColor}
.tray{list-style:none;margin:0;padding:6px 10px 0;display:flex;flex-wrap:wrap;gap:6px}
.tray .file{display:flex;align-items:center;gap:6px;max-width:100%;border:1px solid var(--line);border-radius:8px;padding:3px 4px 3px 6px;font-size:12px}
.tray .file.busy{opacity:.6}
.tray img{width:32px;height:32px;object-fit:cover;border-radius:4px}
.tray .name{max-width:140px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.tray .rm{border:0;background:none;font-size:16px;line-height:1;padding:2px 4px;cursor:pointer;color:inherit}
.msg .files{list-style:none;margin:4px 0 0;padding:0;font-size:12px;opacity:.8}
.msg .files svg{width:12px;height:12px;margin-right:3px;vertical-align:-2px;fill:currentColor}
.msg .files .thumb{display:block;max-width:160px;max-height:120px;margin:2px 0 2px auto;border-radius:6px;border:1px solid rgba(0,0,0,.15);object-fit:contain;background:#fff}
.msg.assistant .files .thumb{margin-left:0}
.send svg{width:18px;height:18px;fill:currentColor}
.avail{margin:0;padding:6px 14px;font-size:12.5px;color:var(--fg);background:var(--soft);border-bottom:1px solid var(--line)}
.field{display:flex;flex-direction:column;gap:4px}
.field label{font-weight:600;font-size:13px}
.field input{width:100%;border:1px solid #6b7280;border-radius:8px;padding:8px;font:inherit;color:inherit;background:var(--bg)}
.field input[aria-invalid=true]{border-color:#b91c1c}
.field-error{margin:0;font-size:12.5px;color:#b91c1c}
.field-error:empty{display:none}
.foot{padding:0 12px 8px;font-size:11px;color:var(--mute);text-align:center;background:var(--bg)}
.count{font-size:11px;color:#b91c1c;padding:0 14px}
.veil{position:absolute;inset:0;background:rgba(17,24,39,.45);display:flex;align-items:center;justify-content:center;padding:20px}
.dialog{background:var(--bg);border-radius:12px;padding:18px;max-width:320px;width:100%;box-shadow:0 10px 30px rgba(0,0,0,.3)}
.dialog h3{margin:0 0 6px;font-size:15px}
.dialog p{margin:0 0 14px;overflow-wrap:anywhere;color:var(--fg)}
@media (max-width:480px){
.panel{inset:0;width:100%;max-width:none;height:100%;max-height:none;border-radius:0}
.open .launcher{display:none}
.inline .panel{position:relative;inset:auto}
}`
