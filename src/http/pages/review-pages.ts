/**
 * The review console's HTML (docs/http-api.md). Everything shown goes through `html`, so values
 * are text and invisible or direction-changing characters show as markers; the stylesheet
 * turns each table into stacked cards below 40rem, so a phone at 360 px reads it too.
 */
import type { OperationJson } from '../../core/wire.js';
import type { UiSession } from '../../principals/sessions.js';
import type { SearchQuery } from '../../operations/search-params.js';
import type { OperationPage } from '../../operations/search.js';
import type { DuplicatesPage } from '../../operations/duplicates.js';
import type { DuplicatesQuery } from '../../operations/duplicates-params.js';
import { OPERATION_STATES } from '../../operations/states.js';
import type { RawParams } from '../../operations/query-params.js';
import type { ChainPanel } from '../../ledger/chain-panel.js';
import { countInvisible, html, Html, showJson, showText } from './html.js';
import { page } from './layout.js';
import type { AppContext } from '../../context.js';
import type { approvalsOfOperation } from '../../approvals/for-operation.js';

/** What the operation page shows (gathered by review-routes.ts). */
export interface OperationData {
  operation: Awaited<ReturnType<AppContext['operations']['get']>>;
  command: unknown;
  events: Awaited<ReturnType<AppContext['operations']['timeline']>>['events'];
  approvals: Awaited<ReturnType<typeof approvalsOfOperation>>;
}

const FIELDS: Array<[string, string, string]> = [
  ['account_id', 'Account', 'acme'], ['agent_run_id', 'Agent run', 'run-42'], ['idempotency_key', 'Idempotency key', ''],
  ['business_key', 'Business key', ''], ['fingerprint', 'Fingerprint', '64 hex digits'], ['method', 'Method', 'POST'],
  ['route', 'Route or pattern', '/v1/refunds/*'], ['since', 'Since (RFC 3339)', '2025-03-01T02:00:00Z'], ['until', 'Until (RFC 3339)', ''],
];

export function searchPage(session: UiSession, query: SearchQuery | null, result: OperationPage | null, error: string | null, raw: RawParams): string {
  const values: Record<string, string | undefined> = query ? { ...query.filters, account_id: query.accountId } : stringsOf(raw);
  const params = new URLSearchParams(Object.entries(values).filter((e): e is [string, string] => e[1] !== undefined));
  if (query?.order === 'asc') params.set('order', 'asc');
  return page('Search operations', session, html`<h1>Operations</h1>
${error ? html`<div class="error" role="alert">${error}</div>` : ''}
<form class="card search" method="get" action="/ui/review">
  <div class="fields">${FIELDS.map(([name, label, hint]) => html`<div><label for="f-${name}">${label}</label><input type="text" id="f-${name}" name="${name}" value="${attr(values[name] ?? '')}" placeholder="${hint}"></div>`)}
  <div><label for="f-state">State</label><select id="f-state" name="state"><option value="">any</option>${OPERATION_STATES.map((s) => html`<option${values.state === s ? html` selected` : ''}>${s}</option>`)}</select></div>
  <div><label for="f-order">Order</label><select id="f-order" name="order"><option value="desc">newest first</option><option value="asc"${query?.order === 'asc' ? html` selected` : ''}>oldest first</option></select></div>
  </div>
  <div class="buttons"><button class="primary" type="submit">Search</button></div>
</form>
${result ? html`<p class="muted">${result.items.length} operation${result.items.length === 1 ? '' : 's'} on this page · <a href="/ui/review?${withJson(params)}">this page as JSON</a> · the API: <code>GET /v1/operations?${params.toString()}</code></p>
${resultTable(result.items)}
${result.next_cursor ? html`<p><a class="next" href="/ui/review?cursor=${encodeURIComponent(result.next_cursor)}">Next page</a></p>` : ''}`
    : html`<p class="muted">Choose an account, then any filters: a route pattern takes <code>*</code> for one segment.</p>`}`);
}

function resultTable(items: OperationJson[]): Html {
  if (items.length === 0) return html`<div class="card"><p>No operation matches.</p></div>`;
  return html`<table class="results"><thead><tr><th>Time</th><th>State</th><th>Method</th><th>Route</th><th>Key</th><th>Agent run</th><th>Fingerprint</th><th>Response</th></tr></thead><tbody>
${items.map((o) => html`<tr>
<td data-label="Time"><a href="/ui/review/operations/${encodeURIComponent(o.id)}">${o.created_at}</a></td>
<td data-label="State">${stateBadge(o.state)}</td><td data-label="Method">${o.method}</td><td data-label="Route"><code>${o.route}</code></td>
<td data-label="Key"><code>${o.idempotency_key}</code></td><td data-label="Agent run">${o.agent_run_id ?? '—'}</td>
<td data-label="Fingerprint"><code title="${attr(o.fingerprint)}">${o.fingerprint.slice(0, 12)}…</code></td><td data-label="Response">${o.response?.status ?? '—'}</td></tr>`)}
</tbody></table>`;
}

export function operationPage(session: UiSession, data: OperationData): string {
  const o = data.operation;
  const invisible = countInvisible(JSON.stringify(data.command) ?? '') + countInvisible(JSON.stringify(o));
  return page(`Operation ${o.id}`, session, html`<h1>${o.method} <code>${o.route}</code></h1>
${invisible > 0 ? html`<div class="notice" role="alert"><strong>Look closely:</strong> this operation contains ${invisible} invisible or direction-changing character${invisible === 1 ? '' : 's'}, shown highlighted like <mark class="cp">⟨U+200B⟩</mark>.</div>` : ''}
<p class="muted"><a href="/ui/review/operations/${encodeURIComponent(o.id)}?format=json">This page as JSON</a> · the API: <code>GET /v1/operations/${o.id}/timeline</code></p>
<div class="card"><dl class="facts">
  <dt>State</dt><dd>${stateBadge(o.state)}</dd>
  <dt>Operation id</dt><dd><code id="operation-id">${o.id}</code></dd>
  <dt>Account</dt><dd><a href="/ui/review/chain?account_id=${encodeURIComponent(o.account_id)}">${o.account_id}</a></dd>
  <dt>Idempotency key</dt><dd><code id="idempotency-key">${o.idempotency_key}</code></dd>
  <dt>Fingerprint</dt><dd><a href="/ui/review?account_id=${encodeURIComponent(o.account_id)}&amp;fingerprint=${o.fingerprint}"><code id="fingerprint">${o.fingerprint}</code></a></dd>
  <dt>Agent run</dt><dd>${o.agent_run_id ? html`<a href="/ui/review?account_id=${encodeURIComponent(o.account_id)}&amp;agent_run_id=${encodeURIComponent(o.agent_run_id)}" id="agent-run">${o.agent_run_id}</a>` : '—'}</dd>
  <dt>Business key</dt><dd>${o.business_key ?? '—'}</dd><dt>Exclusive scope</dt><dd>${o.exclusive_scope ?? '—'}</dd>
  <dt>Provider ref</dt><dd>${o.provider_ref ?? '—'}</dd><dt>Created</dt><dd>${o.created_at}</dd><dt>Updated</dt><dd>${o.updated_at}</dd>
</dl></div>
<h2>Command</h2>
<pre class="command" id="command">${showJson(data.command)}</pre>
<h2>Stored response</h2>
${o.response ? html`<pre class="command" id="response">${showJson(o.response)}</pre>` : html`<p class="muted">None stored${o.response === null ? ' (none was given, or the account was shredded)' : ' yet'}.</p>`}
<h2>Timeline</h2>
<table class="results timeline" id="timeline"><thead><tr><th>Seq</th><th>Time</th><th>Type</th><th>Actor</th><th>Agent run</th><th>Key</th><th>Fingerprint</th><th>State</th><th>Response</th><th>Hash</th></tr></thead><tbody>
${data.events.map((e) => html`<tr><td data-label="Seq">${e.seq}</td><td data-label="Time">${e.ts}</td><td data-label="Type"><strong>${e.type}</strong></td>
<td data-label="Actor"><code>${e.actor ?? '—'}</code></td><td data-label="Agent run">${e.agent_run_id ?? '—'}</td><td data-label="Key"><code>${e.idempotency_key ?? '—'}</code></td>
<td data-label="Fingerprint"><code class="hash">${e.fingerprint ?? '—'}</code></td><td data-label="State">${e.state ?? '—'}</td><td data-label="Response">${e.response_status ?? '—'}</td>
<td data-label="Hash"><code class="hash">${e.hash}</code></td></tr>`)}
</tbody></table>
<h2>Approvals</h2>
${data.approvals.length === 0 ? html`<p class="muted">This operation needed no approval.</p>` : data.approvals.map((a) => html`<div class="card"><dl class="facts">
  <dt>Approval</dt><dd><code>${a.id}</code> ${stateBadge(a.state)}</dd><dt>Requested</dt><dd>${a.requested_at} by <code>${a.requested_by}</code></dd>
  <dt>Approvers needed</dt><dd>${a.approvers_required}</dd>
  ${(a.decisions as Array<{ approver: string; decision: string; reason: string | null; decided_at: string }>).map((d) => html`<dt>${d.decision === 'approve' ? 'Approved' : 'Denied'}</dt><dd><code>${d.approver}</code> at ${d.decided_at}${d.reason ? html` — ${d.reason}` : ''}</dd>`)}
</dl></div>`)}`);
}

export function duplicatesPage(session: UiSession, query: DuplicatesQuery, result: DuplicatesPage | null, error: string | null): string {
  const params = new URLSearchParams();
  if (query.accountId) params.set('account_id', query.accountId);
  if (query.since) params.set('since', query.since);
  if (query.until) params.set('until', query.until);
  params.set('window_seconds', String(query.windowSeconds));
  return page('Possible duplicates', session, html`<h1>Possible duplicates</h1>
<p class="muted">Operations with one fingerprint under different idempotency keys, each created within the window of the previous one: an agent that minted a new key for the same write. Two <code>succeeded</code>, or one <code>succeeded</code> and one <code>unknown</code>, means the write may have run twice.</p>
${error ? html`<div class="error" role="alert">${error}</div>` : ''}
<form class="card search" method="get" action="/ui/review/duplicates"><div class="fields">
  <div><label for="d-account">Account</label><input type="text" id="d-account" name="account_id" value="${attr(String(query.accountId ?? ''))}" placeholder="acme"></div>
  <div><label for="d-window">Window (seconds)</label><input type="text" id="d-window" name="window_seconds" value="${attr(String(query.windowSeconds))}"></div>
  <div><label for="d-since">Since</label><input type="text" id="d-since" name="since" value="${attr(String(query.since ?? ''))}"></div>
  <div><label for="d-until">Until</label><input type="text" id="d-until" name="until" value="${attr(String(query.until ?? ''))}"></div>
</div><div class="buttons"><button class="primary" type="submit">Find duplicates</button></div></form>
${result ? html`<p class="muted"><a href="/ui/review/duplicates?${withJson(params)}">This page as JSON</a> · the API: <code>GET /v1/review/duplicates?${params.toString()}</code></p>
${result.items.length === 0 ? html`<div class="card"><p>No possible duplicates in this account and window.</p></div>` : result.items.map((g) => html`<section class="card group">
  <h2><code>${g.method} ${g.route}</code></h2><p class="muted">fingerprint <code class="hash">${g.fingerprint}</code></p>
  ${resultTable(g.operations)}
</section>`)}
${result.next_cursor ? html`<p><a class="next" href="/ui/review/duplicates?cursor=${encodeURIComponent(result.next_cursor)}">Next page</a></p>` : ''}` : ''}`);
}

export function chainPage(session: UiSession, accountId: string | null, panel: ChainPanel | null): string {
  return page('Chain', session, html`<h1>Chain${accountId ? html` of ${accountId}` : ''}</h1>
<form class="card search" method="get" action="/ui/review/chain"><div class="fields"><div><label for="c-account">Account</label><input type="text" id="c-account" name="account_id" value="${attr(String(accountId ?? ''))}" placeholder="acme"></div></div>
<div class="buttons"><button class="primary" type="submit">Show</button></div></form>
${panel ? html`<p class="muted"><a href="/ui/review/chain?account_id=${encodeURIComponent(panel.account_id)}&amp;format=json">This page as JSON</a> · check it offline: <code>gatehouse verify --db FILE --account ${panel.account_id} --keys keys.json</code></p>
<div class="card"><dl class="facts">
  <dt>Events</dt><dd id="chain-size">${panel.size}</dd><dt>Head hash</dt><dd><code class="hash">${panel.head_hash ?? '—'}</code></dd>
  ${panel.latest_checkpoint ? html`<dt>Latest checkpoint</dt><dd id="checkpoint-size">${panel.latest_checkpoint.tree_size} events, signed ${panel.latest_checkpoint.created_at}</dd>
  <dt>Root hash</dt><dd><code class="hash">${panel.latest_checkpoint.root_hash}</code></dd>
  <dt>Witness cosignatures</dt><dd id="cosignatures">${panel.latest_checkpoint.cosignatures === 0 ? 'none on this checkpoint' : panel.latest_checkpoint.signatures.filter((s) => s.by === 'witness').map((s) => html`<code>${s.name}</code> `)}</dd>` : html`<dt>Latest checkpoint</dt><dd>none yet</dd>`}
</dl></div>
${panel.latest_checkpoint ? html`<h2>Signed note</h2><pre class="command" id="note">${lines(panel.latest_checkpoint.note)}</pre>` : ''}
<h2>Newest events</h2>
<table class="results"><thead><tr><th>Seq</th><th>Time</th><th>Type</th><th>Operation</th><th>Key</th><th>State</th><th>Hash</th></tr></thead><tbody>
${panel.events.map((e) => html`<tr><td data-label="Seq">${e.seq}</td><td data-label="Time">${e.ts}</td><td data-label="Type">${e.type}</td>
<td data-label="Operation">${e.operation_id ? html`<a href="/ui/review/operations/${encodeURIComponent(e.operation_id)}"><code>${e.operation_id}</code></a>` : '—'}</td>
<td data-label="Key"><code>${e.idempotency_key ?? '—'}</code></td><td data-label="State">${e.state ?? '—'}</td><td data-label="Hash"><code class="hash">${e.hash}</code></td></tr>`)}
</tbody></table>
${panel.next_before_seq ? html`<p><a class="next" href="/ui/review/chain?account_id=${encodeURIComponent(panel.account_id)}&amp;before_seq=${panel.next_before_seq}">Older events</a></p>` : ''}` : ''}`);
}

/** An attribute value: escaped, characters kept as they are (a marker inside an attribute would end it). */
function attr(value: string): Html {
  return new Html(value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`));
}

/** Text whose line breaks are layout (a signed note): each line marked, the breaks kept. */
function lines(text: string): Html {
  return new Html(text.split('\n').map(showText).join('\n'));
}

function stateBadge(state: string): Html {
  return html`<span class="state state-${state}">${state}</span>`;
}

function withJson(params: URLSearchParams): string {
  const copy = new URLSearchParams(params);
  copy.set('format', 'json');
  return copy.toString();
}

function stringsOf(raw: RawParams): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(raw).filter((e): e is [string, string] => typeof e[1] === 'string'));
}
