import type { FastifyRequest } from 'fastify';
import { DomainError, isDomainError, type AgentPermission } from '@sluice/core';
import { common } from '@sluice/contracts';
import type { Logger } from '@sluice/logging';
import { CredentialCache } from './credential.cache.js';
import { HttpError } from './error-mapping.js';
import type { GatewayClients } from './types.js';

/** The authenticated caller of an agent route (`/agents/me...`), from its bearer token. */
export interface AuthenticatedAgent {
  /** The agent id (the cache drops an agent's entries by it). */
  tokenId: string;
  id: string;
  platformId: string;
  customerId: string;
  environment: 'SANDBOX' | 'PRODUCTION';
  isPaused: boolean;
  permissions: string[];
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the agent auth hook on agent routes. */
    agent: AuthenticatedAgent | null;
  }
  interface FastifyContextConfig {
    /**
     * Who may call the route: `platform` (default, HTTP Basic API token), `agent`
     * (`Authorization: Bearer <accessToken>` of an agent, the `/agents/me...` routes) or
     * `none` (device-code status and redeem: the code is the proof).
     */
    auth?: 'platform' | 'agent' | 'none';
  }
}

/** 401 of agent routes (`WWW-Authenticate: Bearer`), whatever was wrong: missing, malformed, unknown, replaced or deleted. */
export function agentUnauthorized(): HttpError {
  return new HttpError(401, 'UNAUTHORIZED', 'Invalid or missing agent access token', undefined, {
    'www-authenticate': 'Bearer realm="sluice", charset="UTF-8"',
  });
}

/** `Bearer <token>` → the token, or undefined. */
export function parseBearer(header: string | undefined): string | undefined {
  if (!header || header.length > 1100) return undefined;
  const m = /^Bearer[ ]+([A-Za-z0-9._~+/-]+=*)[ ]*$/i.exec(header);
  return m ? m[1] : undefined;
}

/**
 * Verifies agent bearer tokens with agents `AuthenticateAgent`, through a
 * credential cache of its own (≤ AUTH_CACHE_TTL_MS, keyed by a hash of the
 * token; an agent's entries drop at once on AGENT_TOKEN.REVOKED or
 * AGENT.UPDATED); concurrent requests with one token share one call. The agents
 * service being down is a 503, not a 401.
 */
export class AgentAuthenticator {
  private readonly inFlight = new Map<string, Promise<AuthenticatedAgent>>();

  constructor(
    private readonly clients: Pick<GatewayClients, 'agents'>,
    readonly cache: CredentialCache<AuthenticatedAgent>,
    private readonly logger: Logger,
    private readonly deadlineMs: number,
  ) {}

  async authenticate(header: string | undefined): Promise<AuthenticatedAgent> {
    const token = parseBearer(header);
    if (!token) throw agentUnauthorized();
    const key = CredentialCache.key('agent', token);
    const cached = this.cache.get(key);
    if (cached) return cached;
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = this.verify(key, token).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    return pending;
  }

  private async verify(key: string, token: string): Promise<AuthenticatedAgent> {
    const since = Date.now();
    let agent;
    try {
      ({ agent } = await this.clients.agents.authenticateAgent({ accessToken: token }, { deadlineMs: this.deadlineMs }));
    } catch (err) {
      if (isDomainError(err) && (err.kind === 'UNAUTHENTICATED' || err.kind === 'NOT_FOUND')) throw agentUnauthorized();
      throw err;
    }
    if (!agent?.id || !agent.platformId) {
      this.logger.error('agents returned an agent without id or platform');
      throw new DomainError('UNAVAILABLE', 'SERVICE_UNAVAILABLE', 'The service is temporarily unavailable; retry later');
    }
    const authenticated: AuthenticatedAgent = {
      tokenId: agent.id,
      id: agent.id,
      platformId: agent.platformId,
      customerId: agent.customerId,
      environment: agent.environment === common.Environment.PRODUCTION ? 'PRODUCTION' : 'SANDBOX',
      isPaused: agent.isPaused,
      permissions: agent.policy?.permissions ?? [],
    };
    this.cache.set(key, authenticated, since);
    return authenticated;
  }
}

/** The agent of an agent route (set by the auth hook). */
export function agentOf(request: FastifyRequest): AuthenticatedAgent {
  if (!request.agent) throw agentUnauthorized();
  return request.agent;
}

/** 403 MISSING_PERMISSION_<PERMISSION> unless the agent's policy grants it (the agents service's code). */
export function requireAgentPermission(request: FastifyRequest, permission: AgentPermission): AuthenticatedAgent {
  const agent = agentOf(request);
  if (!agent.permissions.includes(permission)) {
    throw new DomainError('PERMISSION_DENIED', `MISSING_PERMISSION_${permission}`, `The agent's policy lacks the ${permission} permission`, {
      permission,
    });
  }
  return agent;
}
