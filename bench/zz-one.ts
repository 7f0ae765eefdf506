import { gatewayKeys, withGatehouse } from './http-claims.js';
await withGatehouse({ kind: 'sqlite' }, 1, false, [], async ([server]) => {
  const keys = await gatewayKeys(server!);
  const r = await fetch(server!.url + '/v1/zz', { headers: { authorization: `Bearer ${keys[0]}` } });
  console.log(r.status, await r.text());
});
