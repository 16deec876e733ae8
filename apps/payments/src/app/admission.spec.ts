import { describe, expect, it } from 'vitest';
import { isDomainError } from '@sluice/core';
import { JobLagAdmission } from './admission.js';

// The scheduler's side (what it reports) is in test/scheduler.spec.ts; the gate through the real
// service and scheduler in test/admission.spec.ts.

const settled = async (p: Promise<unknown>) => {
  let done = false;
  void p.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((r) => setTimeout(r, 20));
  return done;
};

describe('JobLagAdmission', () => {
  it('admits at once while the scheduler keeps up, and always with a bound of 0', async () => {
    const a = new JobLagAdmission({ maxJobLagMs: 500, maxWaitMs: 60_000 });
    a.observe(500);
    expect(a.behind()).toBe(false);
    await a.admit();
    const off = new JobLagAdmission({ maxJobLagMs: 0, maxWaitMs: 60_000 });
    off.observe(3_600_000);
    expect(off.behind()).toBe(false);
    await off.admit();
  });

  it('holds a payment while behind, through reports still above the bound, and lets it go at the first one at or below', async () => {
    const a = new JobLagAdmission({ maxJobLagMs: 500, maxWaitMs: 60_000 });
    a.observe(501);
    const waiting = a.admit();
    expect(await settled(waiting)).toBe(false);
    a.observe(2_000);
    expect(await settled(waiting)).toBe(false);
    a.observe(500);
    await waiting;
  });

  it('refuses with SERVICE_UNAVAILABLE after maxWaitMs, or sooner when the caller’s deadline leaves less', async () => {
    const a = new JobLagAdmission({ maxJobLagMs: 500, maxWaitMs: 50 });
    a.observe(10_000);
    const refused = await a.admit().catch((e: unknown) => e);
    expect(isDomainError(refused) && [refused.kind, refused.code]).toEqual(['UNAVAILABLE', 'SERVICE_UNAVAILABLE']);
    // 60 s of wait allowed, but a deadline 1.05 s away keeps 1 s for the payment: 50 ms of wait.
    let deadline = Date.now() + 1_050;
    const b = new JobLagAdmission({ maxJobLagMs: 500, maxWaitMs: 60_000, deadline: () => deadline });
    b.observe(10_000);
    const late = b.admit().catch((e: unknown) => e);
    expect(await settled(late)).toBe(false);
    await new Promise((r) => setTimeout(r, 100));
    expect(await settled(late)).toBe(true);
    expect(isDomainError(await late)).toBe(true);
    // Less than the margin left: refused without waiting.
    deadline = Date.now() + 500;
    const none = await b.admit().catch((e: unknown) => e);
    expect(isDomainError(none)).toBe(true);
  });
});
