/** Served as /ui/style.css so the Content-Security-Policy can forbid inline styles and every script. */
export const STYLESHEET = `
:root { color-scheme: light; --ink: #1c2430; --muted: #5b6472; --line: #dde2e8; --bg: #f5f7fa; --card: #fff;
  --accent: #1d4ed8; --ok: #15803d; --bad: #b91c1c; --warn-bg: #fff4d6; --warn-line: #e0b341; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: var(--bg); }
header.top { display: flex; align-items: center; justify-content: space-between; gap: 1rem; padding: .75rem 1.25rem;
  background: var(--ink); color: #fff; }
header.top a { color: #fff; text-decoration: none; font-weight: 600; }
header.top form { margin: 0; }
header.top .who { font-size: .875rem; color: #cbd5e1; display: flex; align-items: center; gap: .75rem; flex-wrap: wrap; }
main { max-width: 60rem; margin: 0 auto; padding: 1.25rem; }
h1 { font-size: 1.5rem; margin: .25rem 0 1rem; }
h2 { font-size: 1.125rem; margin: 1.5rem 0 .5rem; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: .5rem; padding: 1rem 1.25rem; margin-bottom: 1rem; }
dl.facts { display: grid; grid-template-columns: minmax(9rem, max-content) 1fr; gap: .4rem 1rem; margin: 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .875rem; }
pre.command { background: #0f172a; color: #e2e8f0; padding: 1rem; border-radius: .5rem; overflow-x: auto;
  white-space: pre-wrap; overflow-wrap: anywhere; direction: ltr; unicode-bidi: isolate; margin: 0; }
mark.cp { background: #facc15; color: #111; border-radius: .2rem; padding: 0 .15rem; font-weight: 700; }
.notice { background: var(--warn-bg); border: 1px solid var(--warn-line); border-radius: .5rem; padding: .75rem 1rem; margin-bottom: 1rem; }
.error { background: #fde8e8; border: 1px solid #f3a5a5; color: #7f1d1d; border-radius: .5rem; padding: .75rem 1rem; margin-bottom: 1rem; }
.state { display: inline-block; padding: .05rem .55rem; border-radius: 999px; font-size: .8125rem; font-weight: 600; background: #e2e8f0; }
.state-pending { background: #dbeafe; color: #1e3a8a; } .state-approved { background: #dcfce7; color: #14532d; }
.state-denied { background: #fee2e2; color: #7f1d1d; } .state-expired { background: #e5e7eb; color: #374151; }
.consequence { font-size: 1.0625rem; font-weight: 600; }
.irreversible { color: var(--bad); font-weight: 700; }
ul.list { list-style: none; padding: 0; margin: 0; }
ul.list li a { display: block; padding: .9rem 1.1rem; color: inherit; text-decoration: none; }
ul.list li { background: var(--card); border: 1px solid var(--line); border-radius: .5rem; margin-bottom: .6rem; }
ul.list li a:hover, ul.list li a:focus { background: #eef2ff; }
.row { display: flex; justify-content: space-between; gap: 1rem; flex-wrap: wrap; }
.muted { color: var(--muted); font-size: .875rem; }
label { display: block; font-weight: 600; margin-bottom: .35rem; }
textarea, input[type=password], input[type=text] { width: 100%; font: inherit; padding: .6rem .7rem; border: 1px solid #b8c0cc; border-radius: .4rem; }
textarea { min-height: 5rem; }
.buttons { display: flex; gap: .75rem; margin-top: .75rem; flex-wrap: wrap; }
button { font: inherit; font-weight: 600; padding: .6rem 1.2rem; border-radius: .4rem; border: 1px solid transparent; cursor: pointer; }
button.approve { background: var(--ok); color: #fff; } button.deny { background: #fff; color: var(--bad); border-color: var(--bad); }
button.primary { background: var(--accent); color: #fff; } button.link { background: none; color: #fff; border-color: #64748b; padding: .3rem .8rem; }
.login { max-width: 26rem; margin: 3rem auto; }
header.top { flex-wrap: wrap; }
nav.sections { display: flex; gap: 1rem; flex-wrap: wrap; }
nav.sections a { font-weight: 500; color: #cbd5e1; }
main:has(table.results) { max-width: 80rem; }
.fields { display: grid; grid-template-columns: repeat(auto-fill, minmax(14rem, 1fr)); gap: .75rem 1rem; }
select { width: 100%; font: inherit; padding: .55rem .6rem; border: 1px solid #b8c0cc; border-radius: .4rem; background: #fff; }
table.results { width: 100%; border-collapse: collapse; background: var(--card); border: 1px solid var(--line); font-size: .875rem; margin-bottom: 1rem; }
table.results th, table.results td { text-align: left; padding: .45rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; overflow-wrap: anywhere; }
table.results th { background: #eef1f5; font-weight: 600; }
code.hash { font-size: .75rem; }
main code, main a { overflow-wrap: anywhere; }
.state-succeeded { background: #dcfce7; color: #14532d; } .state-failed, .state-unknown { background: #fee2e2; color: #7f1d1d; }
.state-running, .state-sent, .state-accepted { background: #dbeafe; color: #1e3a8a; }
section.group h2 { margin-top: 0; }
a.next { font-weight: 600; }
@media (max-width: 40rem) {
  table.results, table.results tbody, table.results tr, table.results td { display: block; width: 100%; }
  table.results thead { display: none; }
  table.results tr { border-bottom: 2px solid var(--line); padding: .35rem 0; }
  table.results td { border: 0; padding: .15rem .6rem; }
  table.results td::before { content: attr(data-label); display: inline-block; min-width: 6.5rem; color: var(--muted); font-weight: 600; }
  main { padding: .75rem; }
  dl.facts { grid-template-columns: 1fr; gap: .1rem; }
  dl.facts dd { margin-bottom: .5rem; }
  .buttons button { flex: 1; }
}
`;
