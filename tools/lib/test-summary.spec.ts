import { describe, expect, it } from 'vitest';
import { formatSummary, summarize, type VitestJsonReport } from './test-summary.js';

function report(partial: Partial<VitestJsonReport>): VitestJsonReport {
  return {
    numPassedTests: 0,
    numFailedTests: 0,
    numPendingTests: 0,
    numTodoTests: 0,
    numFailedTestSuites: 0,
    success: true,
    testResults: [],
    ...partial,
  };
}

describe('test summary', () => {
  it('prints passed and failed, and skipped only when some were skipped', () => {
    expect(formatSummary(summarize(report({ numPassedTests: 12 })))).toBe('12 passed, 0 failed');
    expect(
      formatSummary(
        summarize(report({ numPassedTests: 3, numFailedTests: 1, numPendingTests: 2, numTodoTests: 1 })),
      ),
    ).toBe('3 passed, 1 failed, 3 skipped');
  });

  it('counts a test file that failed to load as a failure', () => {
    const s = summarize(
      report({
        numPassedTests: 5,
        numFailedTestSuites: 1,
        success: false,
        testResults: [
          {
            name: '/r/apps/x/test/a.spec.ts',
            status: 'failed',
            message: 'Cannot find module x\n  at ...',
            assertionResults: [],
          },
          {
            name: '/r/apps/x/test/b.spec.ts',
            status: 'passed',
            assertionResults: [{ fullName: 'b works', status: 'passed' }],
          },
        ],
      }),
    );
    expect(s.failed).toBe(1);
    expect(s.failures).toEqual(['/r/apps/x/test/a.spec.ts: Cannot find module x']);
  });

  it('does not count a file twice when its tests failed', () => {
    const s = summarize(
      report({
        numFailedTests: 2,
        testResults: [
          {
            name: 'f.spec.ts',
            status: 'failed',
            assertionResults: [
              { fullName: 'one', status: 'failed' },
              { fullName: 'two', status: 'failed' },
            ],
          },
        ],
      }),
    );
    expect(s.failed).toBe(2);
    expect(s.failures).toEqual(['f.spec.ts: one', 'f.spec.ts: two']);
  });

  it('counts failed checks and a missing report', () => {
    const s = summarize(undefined, ['typecheck', 'lint']);
    expect(formatSummary(s)).toBe('0 passed, 2 failed');
    expect(s.failures).toEqual(['check: typecheck', 'check: lint']);
  });
});
