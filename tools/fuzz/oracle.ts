/* eslint-disable @typescript-eslint/no-explicit-any -- answers are read field by field */
import { Agent, request as httpRequest } from 'node:http';
import { readAnswer, type HttpAnswer } from '../lib/http-answer.js';
import type { BadRequest } from './cases.js';
import { VALID_AUTH } from './cases.js';
import type { ApiDocument, Operation } from './operations.js';

/** What the gateway answered one bad request. */
export type Answer = HttpAnswer;

/** Sends `c` as it is (raw path and query, exact bytes, headers left out when null) over loopback. */
export function send(agent: Agent, baseUrl: string, authorization: string, c: BadRequest): Promise<Answer> {
  const base = new URL(baseUrl);
  const headers: Record<string, string> = {};
  const auth = c.auth === VALID_AUTH ? authorization : c.auth;
  if (auth !== null) headers.authorization = auth;
  for (const [k, v] of Object.entries(c.headers)) if (v !== null) headers[k] = v;
  if (c.body) headers['content-length'] = String(c.body.length);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        agent,
        host: base.hostname,
        port: base.port,
        method: c.method,
        path: `${base.pathname}${c.path}${c.query ? `?${c.query}` : ''}`,
        headers,
        timeout: 60_000,
      },
      (res) => readAnswer(res, resolve, reject),
    );
    req.on('timeout', () => req.destroy(new Error('no answer within 60 s')));
    req.on('error', reject);
    req.end(c.body);
  });
}

/** Whether an error's `field` names `expected`: the same field, one inside it, or the object holding it. */
export function namesField(field: string, expected: string): boolean {
  const f = field.toLowerCase();
  const e = expected.toLowerCase();
  const inside = (a: string, b: string) => a.startsWith(`${b}.`) || a.startsWith(`${b}[`);
  return f === e || inside(f, e) || inside(e, f);
}

/**
 * The oracle: what is wrong with `answer` to the bad request `c` (empty when nothing). Every
 * answer is a 4xx the operation documents, with an Error body (the document's schema) whose
 * `status` is the HTTP status; an INVALID_INPUT lists `{field, message}` problems and, when the
 * fault sits in one field of an otherwise valid request, names that field.
 */
export function judge(api: ApiDocument, op: Operation, c: BadRequest, answer: Answer): string[] {
  const problems: string[] = [];
  const { status, json } = answer;
  if (status >= 500) problems.push(`answered ${status} (a server error)`);
  else if (status < 400) problems.push(`accepted: answered ${status}`);
  else if (!op.responses.has(status)) problems.push(`answered ${status}, which ${op.name} does not document`);
  if (c.expect && !c.expect.includes(status)) problems.push(`answered ${status}, expected ${c.expect.join(' or ')}`);
  if (status < 400) return problems;
  if (!answer.contentType.startsWith('application/json')) problems.push(`Content-Type ${answer.contentType || '(none)'}`);
  if (!api.valid(api.errorSchema, json)) problems.push(`the body is not an Error: ${answer.text.slice(0, 200)}`);
  else if (json.status !== status) problems.push(`the body says status ${json.status}`);
  if (status === 400 && json?.code === 'INVALID_INPUT') {
    const errors = json.details?.errors;
    if (
      !Array.isArray(errors) ||
      errors.length === 0 ||
      !errors.every((e: any) => typeof e?.field === 'string' && e.field && typeof e.message === 'string')
    )
      problems.push(`INVALID_INPUT without details.errors[{field, message}]: ${answer.text.slice(0, 200)}`);
    else if (c.field && c.baseValid && !errors.some((e: any) => namesField(e.field, c.field!)))
      problems.push(`names ${errors.map((e: any) => e.field).join(', ')}, not ${c.field}`);
  } else if (status === 400 && c.field && c.baseValid) {
    problems.push(`answered 400 ${json?.code} instead of INVALID_INPUT naming ${c.field}`);
  }
  return problems;
}
