import type { Migration } from '@sluice/store';
import type { Constructor } from '@mikro-orm/core';

/** Migrations of the agents schema, in order (the outbox/inbox tables come from the events kit). */
export const migrations: { name: string; class: Constructor<Migration> }[] = [];
