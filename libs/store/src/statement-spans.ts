import { endSpan, inSpan, SpanKind, startSpan, tracingEnabled } from '@sluice/tracing';

/** Longest statement text kept on a span (a bulk insert's placeholders can run long). */
const MAX_STATEMENT_CHARS = 4096;

/** The span of one SQL statement: its name and attributes (the text with its `?` placeholders, never a value). */
function statementSpan(schema: string, text: string, extra: Record<string, boolean> = {}) {
  const operation = /^\s*(\w+)/.exec(text)?.[1]?.toUpperCase() ?? 'SQL';
  return {
    name: `${operation} ${schema}`,
    options: {
      kind: SpanKind.CLIENT,
      requireParent: true,
      attributes: {
        'db.system.name': 'postgresql',
        'db.namespace': schema,
        'db.operation.name': operation,
        'db.query.text': text.slice(0, MAX_STATEMENT_CHARS),
        ...extra,
      },
    },
  };
}

/** Runs `run` (one statement) in its span when tracing is on (and a span is running: no trace of its own). */
export function inStatementSpan<T>(schema: string, text: string, run: () => Promise<T>): Promise<T> {
  if (!tracingEnabled()) return run();
  const s = statementSpan(schema, text);
  return inSpan(s.name, s.options, run);
}

/**
 * The span of a write left for its transaction's COMMIT (writeAtCommit): recorded when it is made,
 * in the span that made it, marked `sluice.db.sent_with_commit` (it runs later, in the COMMIT's
 * round trip, and fails the commit if it fails).
 */
export function recordStatementAtCommit(schema: string, text: string): void {
  if (!tracingEnabled()) return;
  const s = statementSpan(schema, text, { 'sluice.db.sent_with_commit': true });
  endSpan(startSpan(s.name, s.options));
}
