/** The parts of Vitest's JSON reporter output the closing summary needs. */
export interface VitestJsonReport {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTodoTests: number;
  numFailedTestSuites: number;
  success: boolean;
  testResults: {
    name: string;
    status: string;
    message?: string;
    assertionResults: { fullName: string; status: string }[];
  }[];
}

export interface TestSummary {
  passed: number;
  failed: number;
  skipped: number;
  /** One line per failed test, test file that did not load, or failed check. */
  failures: string[];
}

/**
 * Counts a Vitest JSON report. A test file that fails without a failing test
 * (an import error, a failing hook) counts as one failure, and so does each
 * failed check (contracts, typecheck, lint).
 */
export function summarize(report: VitestJsonReport | undefined, failedChecks: string[] = []): TestSummary {
  const failures = failedChecks.map((c) => `check: ${c}`);
  let passed = 0;
  let failed = failedChecks.length;
  let skipped = 0;
  if (report) {
    passed = report.numPassedTests;
    failed += report.numFailedTests;
    skipped = report.numPendingTests + report.numTodoTests;
    for (const file of report.testResults) {
      const failedTests = file.assertionResults.filter((a) => a.status === 'failed');
      for (const t of failedTests) failures.push(`${file.name}: ${t.fullName}`);
      if (file.status === 'failed' && failedTests.length === 0) {
        failed += 1;
        failures.push(`${file.name}: ${(file.message ?? 'failed').split('\n')[0]}`);
      }
    }
  }
  return { passed, failed, skipped, failures };
}

/** `<N> passed, <M> failed` plus `, <K> skipped` when any were skipped. */
export function formatSummary(s: TestSummary): string {
  return `${s.passed} passed, ${s.failed} failed${s.skipped ? `, ${s.skipped} skipped` : ''}`;
}
