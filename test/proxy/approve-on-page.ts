// An approver's visit to Gatehouse's approval page, as a browser makes it: sign in with the key,
// open the approval, post the form with its CSRF token and the fingerprint the page showed.
export async function approveOnPage(gatehouseUrl: string, approverKey: string, approvalId: string, reason: string): Promise<void> {
  const signIn = await fetch(`${gatehouseUrl}/ui/login`, {
    method: 'POST', redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
    body: new URLSearchParams({ key: approverKey }).toString(),
  });
  const cookie = (signIn.headers.getSetCookie?.() ?? []).map((c) => c.split(';')[0]).join('; ');
  if (![302, 303].includes(signIn.status) || !cookie) throw new Error(`sign-in answered ${signIn.status}`);
  const page = await fetch(`${gatehouseUrl}/ui/approvals/${encodeURIComponent(approvalId)}`, { headers: { cookie } });
  const html = await page.text();
  const field = (name: string) => html.match(new RegExp(`name="${name}" value="([^"]+)"`))?.[1];
  const csrf = field('csrf');
  const fingerprint = field('fingerprint');
  if (!csrf || !fingerprint) throw new Error(`the approval page has no form (${page.status})`);
  const decided = await fetch(`${gatehouseUrl}/ui/approvals/${encodeURIComponent(approvalId)}/decisions`, {
    method: 'POST', redirect: 'manual',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
    body: new URLSearchParams({ csrf, fingerprint, decision: 'approve', reason }).toString(),
  });
  if (![302, 303].includes(decided.status)) throw new Error(`the decision answered ${decided.status}: ${await decided.text()}`);
}
