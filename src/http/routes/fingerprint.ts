import type { AppContext } from '../../context.js';
import { principalOf } from '../auth.js';
import { readJsonBody } from '../body.js';
import { newRouter, type RouteModule } from '../route-module.js';
import { validateFingerprint } from '../request-schemas.js';
import { prepareIntent } from '../../operations/intent.js';

/**
 * `POST /v1/fingerprint` (docs/http-api.md, Fingerprints): any principal, the caller's account,
 * the policy applied exactly as a claim would (the same prepareIntent); it
 * records nothing, so it may be called as often as a gateway likes. Other
 * members are allowed and ignored, so a gateway can send its claim body as it
 * is: none of them is part of the fingerprint.
 */
export function fingerprintRoutes(deps: Pick<AppContext, 'policies'>): RouteModule {
  const router = newRouter();
  router.post('/v1/fingerprint', async (ctx) => {
    const principal = principalOf(ctx);
    const body = validateFingerprint(await readJsonBody(ctx, ctx.state.maxBodyBytes));
    const intent = prepareIntent(deps.policies, principal.account_id, body);
    ctx.body = { fingerprint: intent.fingerprint };
  });
  return { router, bodies: { 'POST /v1/fingerprint': validateFingerprint } };
}
