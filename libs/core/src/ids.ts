import { v7 as uuidv7 } from 'uuid';

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

/**
 * The uuid of an id, as a regular expression source: an RFC 9562 UUID of version 1 to 8 (ids
 * are v7), either case. The one rule of what an id is: the API's id schemas (`@sluice/api`
 * Id) use it too, so the gateway refuses exactly the ids a service would.
 */
export const UUID_PATTERN = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}';

const ID_RE = new RegExp(`^([A-Za-z]+):(${UUID_PATTERN})$`);

/** A new time-ordered id: `<Type>:<uuidv7>`. */
export function newId(type: IdType): string {
  return `${type}:${uuidv7()}`;
}

/** True when `value` is a well-formed id of the given type. */
export function isId(value: unknown, type?: IdType): value is string {
  if (typeof value !== 'string') return false;
  const m = ID_RE.exec(value);
  if (!m) return false;
  return type === undefined || m[1] === type;
}

/** The uuid part of an id (throws on a malformed id). */
export function idUuid(id: string): string {
  const m = ID_RE.exec(id);
  if (!m) throw new Error(`malformed id: ${id}`);
  return m[2]!;
}
