import { Type, type TSchema } from '@sinclair/typebox';
import { DESCRIPTION_MAX_LENGTH, MAX_AMOUNT, UMA_ADDRESS_MAX_LENGTH, UUID_PATTERN } from '@sluice/core';

/**
 * Schema primitives of the public API (REST bodies and webhook payloads alike).
 * Every public resource schema is built from these, once, in `resources/`.
 */

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 date-time' });
export const DateOnly = Type.String({ format: 'date', description: 'ISO 8601 calendar date' });

export const Currency = Type.Object(
  {
    code: Type.String({ description: 'ISO 4217 code (or a stablecoin code such as USDC)' }),
    name: Type.String(),
    symbol: Type.String(),
    decimals: Type.Integer({ minimum: 0 }),
  },
  { $id: 'Currency' },
);

/** Money on the wire: an integer in the currency's smallest unit. */
export const Amount = Type.Integer({ description: 'amount in the smallest unit of the currency' });

/** An amount a request moves: 1 to MAX_AMOUNT (9000000000000000) in the currency's smallest unit. */
export function PositiveAmount(description = 'amount in the smallest unit of the currency') {
  return Type.Integer({ minimum: 1, maximum: Number(MAX_AMOUNT), description });
}

/** A free-text memo of a request (at most DESCRIPTION_MAX_LENGTH characters). */
export function Memo(description: string) {
  return Type.String({ maxLength: DESCRIPTION_MAX_LENGTH, description });
}

/** An UMA address in a request (`$user@domain`; the grammar is `@sluice/core` parseUmaAddress). */
export function UmaAddress(description: string) {
  return Type.String({ minLength: 4, maxLength: UMA_ADDRESS_MAX_LENGTH, description });
}

/** A string enum written as `{type: string, enum: [...]}` (code generators show it as an enum). */
export function stringEnum<T extends string>(values: readonly T[], options: Record<string, unknown> = {}) {
  return Type.Unsafe<T>({ type: 'string', enum: [...values], ...options });
}

/** The list envelope: `data`, `hasMore`, `nextCursor` (only when hasMore), `totalCount`. */
export function Page<T extends TSchema>(item: T, name: string) {
  return Type.Object(
    {
      data: Type.Array(item),
      hasMore: Type.Boolean(),
      nextCursor: Type.Optional(Type.String()),
      totalCount: Type.Integer({ minimum: 0 }),
    },
    { $id: name },
  );
}

/** `<Type>:<uuid>` id. */
export function Id(type: string) {
  return Type.String({
    pattern: `^${type}:${UUID_PATTERN}$`,
    description: `${type} id (\`${type}:<uuid>\`)`,
  });
}

/** A proto Timestamp (ts-proto Date) as the API writes it. */
export function iso(d: Date | undefined | null): string | undefined {
  return d ? d.toISOString() : undefined;
}

/** A ts-proto string enum value without its proto prefix (`VERIFICATION_STATUS_APPROVED` → `APPROVED`). */
export const bare = (v: string, prefix: string) => v.replace(prefix, '');

/** The object without its undefined fields (optional proto fields left out of the JSON). */
export function defined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
