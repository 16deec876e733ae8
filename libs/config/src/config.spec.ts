import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, Type, databaseConfig, grpcServerConfig } from './index.js';

const schema = Type.Object({ ...databaseConfig, ...grpcServerConfig(50051), REQUIRED_THING: Type.String({ description: 'a thing' }) });

describe('loadConfig', () => {
  it('applies defaults and coerces numbers', () => {
    const c = loadConfig(schema, { REQUIRED_THING: 'x', GRPC_PORT: '6000' });
    expect(c.GRPC_PORT).toBe(6000);
    expect(c.DATABASE_URL).toBe('postgres://postgres@127.0.0.1:5432/sluice');
  });
  it('names every missing or bad variable', () => {
    try {
      loadConfig(schema, { GRPC_PORT: 'abc', DATABASE_URL: 'mysql://x' });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      const vars = (e as ConfigError).problems.map((p) => p.variable).sort();
      expect(vars).toEqual(['DATABASE_URL', 'GRPC_PORT', 'REQUIRED_THING']);
      expect((e as ConfigError).message).toContain('REQUIRED_THING: is required (a thing)');
    }
  });
  it('treats empty strings as unset', () => {
    expect(() => loadConfig(schema, { REQUIRED_THING: '' })).toThrow(/REQUIRED_THING/);
  });
});
