import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

type SerializerFactory = ReturnType<typeof SerializerSelector>;

/**
 * Fastify's serializer factory (fast-json-stringify, as Fastify uses it by default) whose
 * serializers are built on first use. Building every route's response serializers at start-up
 * cost the gateway about 0.6 s of CPU before it could serve, and a restart under load waited on
 * it; a route's first answer of a status now pays its own build. Each pending build is pushed to
 * `deferred` (the validators' compilations join them: validator.compiler.ts), so
 * `app.gateway.compileSchemas()` builds them all at once (tests do, to find a broken schema
 * before a request would).
 */
export function serializersCompiledOnFirstUse(deferred: Array<() => void>): SerializerFactory {
  const factory = SerializerSelector();
  return ((externalSchemas: unknown, options: unknown) => {
    const compile = (factory as (e: unknown, o: unknown) => (route: unknown) => (data: unknown) => string)(
      externalSchemas,
      options,
    );
    return (route: unknown) => {
      let serialize: ((data: unknown) => string) | undefined;
      const ensure = () => (serialize ??= compile(route));
      deferred.push(() => void ensure());
      return (data: unknown) => ensure()(data);
    };
  }) as unknown as SerializerFactory;
}
