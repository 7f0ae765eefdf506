import type { ApprovalView, OperationSummary } from '../../approvals/seam.js';
import type { DecisionView } from '../../approvals/records.js';
import { countInvisible, html, showJson, type Html } from './html.js';
import { page, timeLeft } from './layout.js';
import type { UiSession } from '../../principals/sessions.js';

/** A pending approval as the list shows it: `askedFor`, the viewer asked for its operation (Approvals.askedFor). */
export interface ListedApproval {
  approval: ApprovalView;
  askedFor: boolean;
}

/**
 * Why the viewer has no decision to make on a pending approval (decide would refuse it), or null
 * when it may decide: it asked for the operation, or it has decided already. The list and the
 * approval page both go by it.
 */
function noDecisionFor(session: UiSession, a: ApprovalView, askedFor: boolean): 'asked' | 'decided' | null {
  if (askedFor) return 'asked';
  return ((a.decisions ?? []) as DecisionView[]).some((d) => d.approver === session.principal.id) ? 'decided' : null;
}

const WAITING_WHY = { asked: 'You asked for this operation: someone else decides it.', decided: 'You have decided; waiting for other approvers.' } as const;

/** The pending approvals: first those the viewer may decide, then, apart, those waiting on others (noDecisionFor says why). */
export function listPage(session: UiSession, items: ListedApproval[], now: number): string {
  const toDecide: ApprovalView[] = [];
  const waiting: Array<{ approval: ApprovalView; why: string }> = [];
  for (const { approval, askedFor } of items) {
    const reason = noDecisionFor(session, approval, askedFor);
    if (reason === null) toDecide.push(approval);
    else waiting.push({ approval, why: WAITING_WHY[reason] });
  }
  const item = (a: ApprovalView, why: string | null) => {
    const s = summaryOf(a);
    return html`<li><a href="/ui/approvals/${encodeURIComponent(a.id)}">
        <div class="row"><strong>${s.operation ?? `${String(a.method)} ${String(a.route)}`}</strong><span class="muted">${timeLeft(String(a.expires_at), now)}</span></div>
        <div>${s.target ?? ''}</div>
        <div class="muted">${why ?? s.consequence ?? 'No consequence stated'}</div>
      </a></li>`;
  };
  const body = toDecide.length === 0
    ? html`<div class="card"><p>Nothing is waiting for your approval.</p></div>`
    : html`<ul class="list">${toDecide.map((a) => item(a, null))}</ul>`;
  const others = waiting.length === 0 ? '' : html`<h2>Waiting on others</h2><ul class="list" id="waiting">${waiting.map((w) => item(w.approval, w.why))}</ul>`;
  return page('Pending approvals', session, html`<h1>Pending approvals</h1>${body}${others}`);
}

/** `askedFor`: the viewer asked for this operation (Approvals.askedFor), so it may not decide. */
export function detailPage(session: UiSession, a: ApprovalView, now: number, error: { code: string; message: string } | null, askedFor: boolean): string {
  const s = summaryOf(a);
  const decisions = (a.decisions ?? []) as DecisionView[];
  const commandText = JSON.stringify(a.command) ?? '';
  const invisible = countInvisible(commandText) + countInvisible(Object.values(s).join(''));
  return page(`Approval ${a.id}`, session, html`
<h1>${s.operation ?? 'Approval request'}</h1>
${error ? html`<div class="error" role="alert"><code>${error.code}</code>: ${error.message}</div>` : ''}
${invisible > 0 ? html`<div class="notice" role="alert"><strong>Look closely:</strong> this request contains ${invisible} invisible or direction-changing character${invisible === 1 ? '' : 's'}, shown highlighted like <mark class="cp">⟨U+200B⟩</mark>.</div>` : ''}
<div class="card">
  <dl class="facts">
    <dt>State</dt><dd><span class="state state-${a.state}">${a.state}</span> <span class="muted">${a.state === 'pending' ? timeLeft(String(a.expires_at), now) : ''}</span></dd>
    <dt>Target</dt><dd id="target">${s.target ?? 'not stated'}</dd>
    <dt>Operation</dt><dd id="operation">${s.operation ?? 'not stated'}</dd>
    <dt>Consequence</dt><dd id="consequence" class="consequence">${s.consequence ?? 'not stated'}</dd>
    <dt>Reversible</dt><dd id="reversible">${reversibility(s.reversible)}</dd>
    <dt>Request</dt><dd><code>${String(a.method)} ${String(a.route)}</code></dd>
    <dt>Operation id</dt><dd><code id="operation-id">${a.operation_id}</code></dd>
    <dt>Idempotency key</dt><dd><code id="idempotency-key">${a.idempotency_key}</code></dd>
    <dt>Fingerprint</dt><dd><code id="fingerprint">${a.fingerprint}</code></dd>
    <dt>Requested</dt><dd>${a.requested_at} by <code>${a.requested_by}</code></dd>
    <dt>Expires</dt><dd>${a.expires_at}</dd>
    <dt>Approvals needed</dt><dd>${a.approvers_required} (so far ${decisions.filter((d) => d.decision === 'approve').length})</dd>
  </dl>
</div>
<h2>The command that will run</h2>
<pre class="command" id="command">${showJson(a.command)}</pre>
${decisions.length > 0 ? html`<h2>Decisions</h2><div class="card"><dl class="facts">${decisions.map((d) =>
    html`<dt>${d.decision === 'approve' ? 'Approved' : 'Denied'}</dt><dd><code>${d.approver}</code> at ${d.decided_at}${d.reason ? html` — ${d.reason}` : ''}</dd>`)}</dl></div>` : ''}
${decisionForm(session, a, askedFor)}`);
}

function decisionForm(session: UiSession, a: ApprovalView, askedFor: boolean): Html {
  if (a.state !== 'pending') return html`<p class="muted">This approval is ${a.state}; nothing is left to decide.</p>`;
  const reason = noDecisionFor(session, a, askedFor);
  if (reason === 'asked') return html`<p class="muted">You asked for this operation (your key claimed it), so someone else must decide it.</p>`;
  if (reason === 'decided') return html`<p class="muted">${WAITING_WHY.decided}</p>`;
  return html`<h2>Your decision</h2>
<form class="card" method="post" action="/ui/approvals/${encodeURIComponent(a.id)}/decisions">
  <input type="hidden" name="csrf" value="${session.csrfToken}">
  <input type="hidden" name="fingerprint" value="${a.fingerprint}">
  <label for="reason">Reason</label>
  <textarea id="reason" name="reason" required maxlength="2000" placeholder="Why you approve or deny this exact command"></textarea>
  <div class="buttons">
    <button class="approve" type="submit" name="decision" value="approve">Approve</button>
    <button class="deny" type="submit" name="decision" value="deny">Deny</button>
  </div>
</form>`;
}

function summaryOf(a: ApprovalView): OperationSummary {
  return (a.summary ?? {}) as OperationSummary;
}

function reversibility(reversible: boolean | undefined): Html {
  if (reversible === true) return html`Yes, it can be undone`;
  if (reversible === false) return html`<span class="irreversible">No — it cannot be undone</span>`;
  return html`not stated`;
}
