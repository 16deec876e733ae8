import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EVENT_CONTRACTS, EVENTS, WEBHOOK_EVENT_TYPES, contractsOf, eventContract } from './catalogue.js';
import { AgentAction } from '../resources/agent.js';
import { InternalAccount } from '../resources/internal-account.js';
import { Transaction } from '../resources/transaction.js';
import { Customer } from '../resources/customer.js';
import { Verification } from '../resources/verification.js';
import { UmaInvitation } from '../resources/invitation.js';
import { BulkCustomerImportJob } from '../resources/bulk-import.js';

describe('event catalogue', () => {
  it('names each type once, as RESOURCE.VERB, under the constant of its name', () => {
    const types = Object.values(EVENTS).map((c) => c.type);
    expect(new Set(types).size).toBe(types.length);
    for (const [name, c] of Object.entries(EVENTS)) {
      expect(c.type).toMatch(/^[A-Z_]+\.[A-Z_]+$/);
      expect(name).toBe(c.type.replace('.', '_'));
    }
    expect(EVENT_CONTRACTS.size).toBe(types.length);
  });

  it('gives every webhook type the public resource as data', () => {
    for (const type of WEBHOOK_EVENT_TYPES) {
      const c = eventContract(type)!;
      expect([
        Transaction,
        InternalAccount,
        AgentAction,
        Customer,
        Verification,
        UmaInvitation,
        BulkCustomerImportJob,
      ]).toContain(c.data);
    }
    expect(WEBHOOK_EVENT_TYPES).toContain('INTERNAL_ACCOUNT.BALANCE_UPDATED');
    expect(WEBHOOK_EVENT_TYPES).toContain('AGENT_ACTION.PENDING_APPROVAL');
    expect(WEBHOOK_EVENT_TYPES).not.toContain('TOKEN.DELETED');
    expect(WEBHOOK_EVENT_TYPES).not.toContain('AGENT_TOKEN.REVOKED');
    expect(eventContract('CUSTOMER.KYB_APPROVED')!.data).toBe(Customer);
    expect(eventContract('VERIFICATION.APPROVED')!.data).toBe(Verification);
    expect(eventContract('INVITATION.CLAIMED')!.data).toBe(UmaInvitation);
    expect(eventContract('BULK_UPLOAD.FAILED')!.data).toBe(BulkCustomerImportJob);
    expect(eventContract('CUSTOMER_VERIFICATION.STATUS_CHANGED')!.webhook).toBe(false);
  });

  it('lists what each domain owns', () => {
    expect(contractsOf('identity').map((c) => c.type)).toContain('TOKEN.DELETED');
    expect(contractsOf('payments').every((c) => c.webhook)).toBe(true);
    expect(eventContract('NO.SUCH')).toBeUndefined();
  });

  it('docs/webhooks.md names every webhook type of the catalogue and the internal ones a platform never receives', () => {
    const doc = readFileSync(new URL('../../../../docs/webhooks.md', import.meta.url), 'utf8');
    for (const type of WEBHOOK_EVENT_TYPES) expect(doc, type).toContain(`\`${type}\``);
    for (const c of contractsOf('webhooks')) expect(doc, c.type).toContain(`\`${c.type}\``);
  });
});
