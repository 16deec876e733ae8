import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { TObject, TSchema } from '@sinclair/typebox';
import { SERVICE_PORTS, type ServiceName } from '@sluice/config';
import { serviceConfigSchema, type ServiceDefinition } from '@sluice/runtime';
import { APPS, type AppName } from '../stack.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** One environment variable of an app, as its config schema declares it. */
export interface ConfigVariable {
  name: string;
  type: string;
  default?: unknown;
  required: boolean;
  description: string;
  /** Allowed values, a range or a pattern, in words. */
  constraint?: string;
}

function isServiceDefinition(v: unknown): v is ServiceDefinition<TObject> {
  if (!v || typeof v !== 'object') return false;
  const s = v as Record<string, unknown>;
  return (
    typeof s.name === 'string' &&
    typeof s.schema === 'string' &&
    typeof s.compose === 'function' &&
    typeof s.config === 'object'
  );
}

function isObjectSchema(v: unknown): v is TObject {
  return (
    !!v &&
    typeof v === 'object' &&
    (v as TSchema).type === 'object' &&
    typeof (v as TObject).properties === 'object'
  );
}

/**
 * The full env schema of an app. Backends: `serviceConfigSchema(spec.name,
 * spec.config)` of the service definition exported by `apps/<app>/src/index.ts`. The
 * gateway: the `*ConfigSchema` object its index exports (falling back to
 * `src/config.ts` while the index does not export it yet).
 */
export async function appConfigSchema(app: AppName, root = ROOT): Promise<TObject> {
  const indexFile = join(root, 'apps', app, 'src', 'index.ts');
  const mod: Record<string, unknown> = existsSync(indexFile)
    ? await import(pathToFileURL(indexFile).href)
    : {};
  if (app !== 'gateway') {
    const spec = Object.values(mod).find(isServiceDefinition);
    if (!spec) throw new Error(`apps/${app}/src/index.ts exports no service definition`);
    if (!(spec.name in SERVICE_PORTS))
      throw new Error(`apps/${app}: spec name ${spec.name} has no port in SERVICE_PORTS`);
    return serviceConfigSchema(spec.name as ServiceName, spec.config);
  }
  const fromIndex = Object.entries(mod).find(
    ([k, v]) => /ConfigSchema$/.test(k) && isObjectSchema(v),
  )?.[1] as TObject | undefined;
  if (fromIndex) return fromIndex;
  const configFile = join(root, 'apps', app, 'src', 'config.ts');
  if (existsSync(configFile)) {
    const cfg = (await import(pathToFileURL(configFile).href)) as Record<string, unknown>;
    const schema = Object.entries(cfg).find(([k, v]) => /ConfigSchema$/.test(k) && isObjectSchema(v))?.[1] as
      TObject | undefined;
    if (schema) return schema;
  }
  throw new Error('apps/gateway exports no *ConfigSchema (expected from src/index.ts)');
}

/** The config schema of every app present in the checkout (an app without src/ yet is left out). */
export async function allAppConfigSchemas(root = ROOT): Promise<Partial<Record<AppName, TObject>>> {
  const out: Partial<Record<AppName, TObject>> = {};
  for (const app of APPS) {
    if (
      !existsSync(join(root, 'apps', app, 'src', 'index.ts')) &&
      !existsSync(join(root, 'apps', app, 'src', 'config.ts'))
    )
      continue;
    out[app] = await appConfigSchema(app, root);
  }
  return out;
}

function typeName(s: TSchema): string {
  if (Array.isArray(s.anyOf)) {
    const literals = (s.anyOf as TSchema[]).map((x) => x.const);
    if (literals.every((l) => l !== undefined)) return 'enum';
    return (s.anyOf as TSchema[]).map(typeName).join(' | ');
  }
  return String(s.type ?? 'string');
}

function constraint(s: TSchema): string | undefined {
  const parts: string[] = [];
  if (Array.isArray(s.anyOf)) {
    const literals = (s.anyOf as TSchema[]).map((x) => x.const);
    if (literals.every((l) => l !== undefined))
      parts.push(`one of ${literals.map((l) => `\`${String(l)}\``).join(', ')}`);
  }
  if (s.minimum !== undefined && s.maximum !== undefined) parts.push(`${s.minimum}–${s.maximum}`);
  else if (s.minimum !== undefined) parts.push(`≥ ${s.minimum}`);
  else if (s.maximum !== undefined) parts.push(`≤ ${s.maximum}`);
  if (s.exclusiveMinimum !== undefined) parts.push(`> ${s.exclusiveMinimum}`);
  if (s.exclusiveMaximum !== undefined) parts.push(`< ${s.exclusiveMaximum}`);
  if (s.minLength !== undefined) parts.push(`at least ${s.minLength} characters`);
  if (s.pattern !== undefined) parts.push(`matches \`${s.pattern}\``);
  return parts.length ? parts.join('; ') : undefined;
}

/** The variables of a config schema, in declaration order. */
export function describeSchema(schema: TObject): ConfigVariable[] {
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties).map(([name, s]) => ({
    name,
    type: typeName(s),
    default: s.default,
    required: required.has(name) && s.default === undefined,
    description: String(s.description ?? ''),
    constraint: constraint(s),
  }));
}
