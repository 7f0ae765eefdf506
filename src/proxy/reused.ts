// A `reused` claim (docs/proxy.md): the request's business key is already another key's
// operation, and nothing new is made. A finished operation's answer is replayed like any other;
// otherwise the caller hears what that operation can still become. Only one that is running
// ends on its own (its holder reports, or its lease runs out), so only that answer carries
// `Retry-After`: for the others waiting changes nothing, and an agent obeying the header would
// ask forever.
import type { Operation } from '../client/index.js';

/** How to answer a reused operation that has no answer to replay. */
export interface ReusedAnswer {
  status: number;
  /** Present only when asking again soon can bring another answer. */
  retryAfter?: string;
  /** What will change the operation, for the agent (and the person reading its log). */
  message: string;
}

/** Null when the operation finished (`succeeded`, `failed`): its stored answer is replayed. */
export function reusedAnswer(operation: Operation): ReusedAnswer | null {
  const other = `the business key ${JSON.stringify(operation.business_key)} is already operation ${operation.id}, made with the idempotency key ${JSON.stringify(operation.idempotency_key)}`;
  switch (operation.state) {
    case 'succeeded':
    case 'failed':
      return null;
    case 'running':
    case 'sent':
    case 'accepted':
      return { status: 409, retryAfter: '1', message: `${other}; its write is running: ask again shortly for its answer` };
    case 'awaiting_approval':
    case 'approved':
      // Only a claim with that key leases it once approved: a new key never runs it.
      return { status: 409, message: `${other}; it ${operation.state === 'approved' ? 'is approved and' : 'awaits approval and'} runs only when retried with that key` };
    case 'canceled':
      // Its write was never made; a claim with that key takes a new lease (docs/retry-contract.md).
      return { status: 409, message: `${other}; it was canceled before its write was made: retry with that key to run it` };
    case 'denied':
      return { status: 403, message: `${other}; an approver denied it, and it will not run` };
    case 'unknown':
      return { status: 409, message: `${other}; its write may or may not have happened and is never sent again: an admin resolves it (POST /v1/operations/${operation.id}/resolve), and later requests get the resolution` };
    default: {
      const never: never = operation.state;
      throw new Error(`unexpected operation state ${JSON.stringify(never)}`);
    }
  }
}
