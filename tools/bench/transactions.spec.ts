import { describe, expect, it } from 'vitest';
import { perCompletion, type ProcessCounts } from './transactions.js';

/** A process's counts; each transaction sent three statements (BEGIN, its statement, COMMIT). */
const counts = (label: string, byFirstStatement: Record<string, number>): ProcessCounts => {
  const transactions = Object.values(byFirstStatement).reduce((a, b) => a + b, 0);
  return { label, pid: 1, statements: 3 * transactions, transactions, byFirstStatement };
};

describe('transactions per pair by process', () => {
  it('divides what each process added by the pairs, sums replicas of one app, and takes off the rate at rest', () => {
    const before = new Map([
      ['payments-1.json', counts('payments', { 'INSERT quotes': 10, '(autocommit) poll': 4 })],
      ['payments-2.json', counts('payments', { 'INSERT quotes': 5 })],
      ['gateway-3.json', counts('gateway', { 'INSERT keys': 7 })],
    ]);
    const after = new Map([
      ['payments-1.json', counts('payments', { 'INSERT quotes': 30, '(autocommit) poll': 8 })],
      ['payments-2.json', counts('payments', { 'INSERT quotes': 25 })],
      ['gateway-3.json', counts('gateway', { 'INSERT keys': 7 })],
      // started during the case: all of it counts
      ['accounts-4.json', counts('accounts', { 'SELECT ia': 10 })],
    ]);
    // At rest payments-1 polled once a second; the case lasted 4 s.
    const idle = {
      before: new Map([['payments-1.json', counts('payments', { '(autocommit) poll': 0 })]]),
      after: new Map([['payments-1.json', counts('payments', { '(autocommit) poll': 2 })]]),
      seconds: 2,
    };
    const r = perCompletion(before, after, 20, { idle, seconds: 4 });
    expect(r.byProcess).toEqual({ payments: 2, accounts: 0.5 });
    expect(r.statementsByProcess).toEqual({ payments: 6, accounts: 1.5 });
    expect(r.byStatement).toEqual([
      { process: 'payments', statement: 'INSERT quotes', perCompletion: 2 },
      { process: 'accounts', statement: 'SELECT ia', perCompletion: 0.5 },
    ]);
  });

  it('counts nothing without pairs', () => {
    expect(perCompletion(new Map(), new Map([['a.json', counts('a', { x: 1 })]]), 0)).toEqual({
      byProcess: {},
      statementsByProcess: {},
      byStatement: [],
    });
  });
});
