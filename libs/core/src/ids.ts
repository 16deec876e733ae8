import { v7 as uuidv7, validate as uuidValidate } from 'uuid';

/** Resource type prefixes used in public ids (`<Type>:<uuid>`). */
export type IdType =
  | 'Platform'
  | 'Token'
  | 'Customer'
  | 'InternalAccount'
  | 'ExternalAccount'
  | 'AuthMethod'
  | 'Session'
  | 'Quote'
  | 'Transaction'
  | 'Agent'
  | 'AgentAction'
  | 'BeneficialOwner'
  | 'Document'
  | 'Verification'
  | 'Lookup'
  | 'Event'
  | 'Webhook'
  | 'WebhookDelivery'
  | 'JournalEntry'
  | 'Hold'
  | 'Request'
  | 'Job';

const ID_RE = /^([A-Za-z]+):([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$/;

/** A new time-ordered id: `<Type>:<uuidv7>`. */
export function newId(type: IdType): string {
  return `${type}:${uuidv7()}`;
}

/** True when `value` is a well-formed id of the given type. */
export function isId(value: unknown, type?: IdType): value is string {
  if (typeof value !== 'string') return false;
  const m = ID_RE.exec(value);
  if (!m || !uuidValidate(m[2]!)) return false;
  return type === undefined || m[1] === type;
}

/** The uuid part of an id (throws on a malformed id). */
export function idUuid(id: string): string {
  const m = ID_RE.exec(id);
  if (!m) throw new Error(`malformed id: ${id}`);
  return m[2]!;
}
