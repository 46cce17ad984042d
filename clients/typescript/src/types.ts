// What the client takes and gives back: plain objects with camelCase fields, string unions for the enums and Date
// for timestamps, never the wire's shapes. The converters below are the only place that knows the wire.

export type Role = "user" | "assistant" | "tool" | "system" | "unspecified";
export type Tier = "user" | "customer" | "client" | "unspecified";
export type Layer = "short" | "mid" | "long" | "unspecified";
export type Trust = "normal" | "untrusted" | "instruction" | "unspecified";
export type JobStatus = "pending" | "done" | "failed" | "unspecified";
export type MemoryStatus = "active" | "stale" | "unspecified";

/** Who a call is about. The client comes from the API key; most calls need customerId and userId. */
export interface Scope {
  customerId: string;
  userId?: string;
  agentId?: string;
  sessionId?: string;
  clientId?: string;
}

/** One turn. Give a turnId to make its ingestion safe to retry (the same turnId rewrites the same memories). */
export interface Turn {
  content: string;
  role?: Role;
  turnId?: string;
  occurredAt?: Date;
  toolName?: string;
  metadata?: Record<string, string>;
}

export interface Accepted {
  jobId: string;
  eventId: string;
}

/** The data key an agent that publishes turns to Kafka itself seals a scope's turns with (docs/privacy.md, "Direct
 * publishers"): the body sealed with AES-256-GCM under `secret`, `keyId` in the envelope's data_key_id, then
 * signed. Use it until validUntil only: a Forget may destroy it meanwhile. */
export interface SealingKey {
  keyId: string;
  secret: Buffer;
  validUntil: Date;
}

export interface Job {
  jobId: string;
  kind: string;
  status: JobStatus;
  error: string;
  counts: Record<string, number>;
  createdAt: Date | null;
  updatedAt: Date | null;
}

export interface Memory {
  memoryId: string;
  tier: Tier;
  layer: Layer;
  kind: string;
  text: string;
  sourceTurnIds: string[];
  tokenCount: number;
  score: number;
  createdAt: Date | null;
  validFrom: Date | null;
  sessionId: string;
  role: Role;
  toolName: string;
  trust: Trust;
}

export interface PinnedEntity {
  key: string;
  type: string;
  attributes: Record<string, string>;
  sourceTurnIds: string[];
  updatedAt: Date | null;
}

export interface ContextPart {
  name: string;
  tokens: number;
  text: string;
}

export interface Compaction {
  compactionId: string;
  outcome: string;
  tokensBefore: number;
  tokensAfter: number;
  ratio: number;
  verified: boolean;
  attempts: number;
  missingAtoms: string[];
  unsupportedAtoms: string[];
  turnsReplaced: number;
  turnsVerbatim: number;
  createdAt: Date | null;
  message: string;
  latencyMs: number;
}

/** Fetch's answer: `context` is the whole bundle as one text, within budgetTokens; the rest are its parts. */
export interface Context {
  context: string;
  contextTokens: number;
  memories: Memory[];
  totalTokens: number;
  budgetTokens: number;
  dropped: number;
  encoding: string;
  pinned: PinnedEntity[];
  summary: string;
  recentTurns: Turn[];
  parts: ContextPart[];
  fromPrefetch: boolean;
  notice: string;
  lastCompaction: Compaction | null;
}

export interface AgentSchema {
  agentId: string;
  version: number;
  archetype: string;
  schema: Record<string, unknown>;
  createdAt: Date | null;
  rationale: string;
}

export interface StoredMemory {
  memory: Memory;
  agentId: string;
  status: MemoryStatus;
  supersededBy: string;
  slot: string;
  updatedAt: Date | null;
  validTo: Date | null;
  /** Its turn's metadata, redacted as the turn was. */
  metadata: Record<string, string>;
}

export interface MemoryPage {
  memories: StoredMemory[];
  nextPageToken: string;
}

export interface ExportPage {
  jsonl: string;
  count: number;
  nextPageToken: string;
}

export interface MemoryJob {
  jobId: string;
  memoryId: string;
}

/** listMemories' filters: each one given must match. */
export interface MemoryFilter {
  tiers?: Tier[];
  layers?: Layer[];
  kinds?: string[];
  createdAfter?: Date;
  createdBefore?: Date;
  trust?: Trust[];
  entity?: string;
  role?: Role;
  toolName?: string;
  includeStale?: boolean;
  /** Each key must have exactly this value. */
  metadata?: Record<string, string>;
}

// The wire, as @grpc/proto-loader decodes it (keepCase, enums as names, longs as numbers, defaults filled in).
export type Wire = any;

/** ROLE_USER → "user", JOB_STATUS_DONE → "done": an enum name's last word. */
export function fromEnum<T extends string>(name: string): T {
  return (name ? name.slice(name.lastIndexOf("_") + 1).toLowerCase() : "unspecified") as T;
}

export function toEnum(prefix: string, value: string): string {
  return `${prefix}_${value.toUpperCase()}`;
}

export function fromTime(stamp: Wire): Date | null {
  if (!stamp) return null;
  return new Date(Number(stamp.seconds) * 1000 + Math.floor(Number(stamp.nanos) / 1e6));
}

export function toTime(when: Date | undefined): Wire {
  if (when === undefined) return null;
  const ms = when.getTime();
  return { seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1e6 };
}

export function toScope(scope: Scope): Wire {
  return {
    client_id: scope.clientId ?? "",
    customer_id: scope.customerId,
    user_id: scope.userId ?? "",
    agent_id: scope.agentId ?? "",
    session_id: scope.sessionId ?? "",
  };
}

export function toTurn(turn: Turn | string): Wire {
  const t: Turn = typeof turn === "string" ? { content: turn } : turn;
  return {
    turn_id: t.turnId ?? "",
    role: toEnum("ROLE", t.role ?? "user"),
    content: t.content,
    occurred_at: toTime(t.occurredAt),
    tool_name: t.toolName ?? "",
    metadata: t.metadata ?? {},
  };
}

export function toFilter(where: MemoryFilter): Wire {
  return {
    tiers: (where.tiers ?? []).map((t) => toEnum("TIER", t)),
    layers: (where.layers ?? []).map((l) => toEnum("LAYER", l)),
    kinds: where.kinds ?? [],
    created_after: toTime(where.createdAfter),
    created_before: toTime(where.createdBefore),
    trust: (where.trust ?? []).map((t) => toEnum("TRUST", t)),
    entity: where.entity ?? "",
    role: toEnum("ROLE", where.role ?? "unspecified"),
    tool_name: where.toolName ?? "",
    include_stale: where.includeStale ?? false,
    metadata: Object.entries(where.metadata ?? {})
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([key, value]) => `${key}=${value}`),
  };
}

export function sealingKey(w: Wire): SealingKey {
  return { keyId: w.key_id, secret: Buffer.from(w.secret), validUntil: fromTime(w.valid_until) ?? new Date() };
}

export function job(w: Wire): Job {
  const counts: Record<string, number> = {};
  for (const [k, v] of Object.entries(w.counts ?? {})) counts[k] = Number(v);
  return {
    jobId: w.job_id,
    kind: w.kind,
    status: fromEnum(w.status),
    error: w.error,
    counts,
    createdAt: fromTime(w.created_at),
    updatedAt: fromTime(w.updated_at),
  };
}

export function memory(w: Wire): Memory {
  return {
    memoryId: w.memory_id,
    tier: fromEnum(w.tier),
    layer: fromEnum(w.layer),
    kind: w.kind,
    text: w.text,
    sourceTurnIds: w.source_turn_ids,
    tokenCount: w.token_count,
    score: w.score,
    createdAt: fromTime(w.created_at),
    validFrom: fromTime(w.valid_from),
    sessionId: w.session_id,
    role: fromEnum(w.role),
    toolName: w.tool_name,
    trust: fromEnum(w.trust),
  };
}

export function compaction(w: Wire): Compaction {
  return {
    compactionId: w.compaction_id,
    outcome: w.outcome,
    tokensBefore: w.tokens_before,
    tokensAfter: w.tokens_after,
    ratio: w.ratio,
    verified: w.verified,
    attempts: w.attempts,
    missingAtoms: w.missing_atoms,
    unsupportedAtoms: w.unsupported_atoms,
    turnsReplaced: w.turns_replaced,
    turnsVerbatim: w.turns_verbatim,
    createdAt: fromTime(w.created_at),
    message: w.message,
    latencyMs: w.latency_ms,
  };
}

export function context(w: Wire): Context {
  return {
    context: w.context,
    contextTokens: w.context_tokens,
    memories: w.memories.map(memory),
    totalTokens: w.total_tokens,
    budgetTokens: w.budget_tokens,
    dropped: w.dropped,
    encoding: w.encoding,
    pinned: w.pinned.map(
      (p: Wire): PinnedEntity => ({
        key: p.key,
        type: p.type,
        attributes: p.attributes,
        sourceTurnIds: p.source_turn_ids,
        updatedAt: fromTime(p.updated_at),
      }),
    ),
    summary: w.summary,
    recentTurns: w.recent_turns.map(
      (t: Wire): Turn => ({
        content: t.content,
        role: fromEnum<Role>(t.role),
        turnId: t.turn_id,
        occurredAt: fromTime(t.occurred_at) ?? undefined,
        toolName: t.tool_name,
        metadata: t.metadata,
      }),
    ),
    parts: w.parts.map((p: Wire): ContextPart => ({ name: p.name, tokens: p.tokens, text: p.text })),
    fromPrefetch: w.from_prefetch,
    notice: w.notice,
    lastCompaction: w.last_compaction ? compaction(w.last_compaction) : null,
  };
}

export function agentSchema(w: Wire): AgentSchema {
  return {
    agentId: w.agent_id,
    version: w.version,
    archetype: w.archetype,
    schema: w.schema_json ? JSON.parse(w.schema_json) : {},
    createdAt: fromTime(w.created_at),
    rationale: w.rationale,
  };
}

export function storedMemory(w: Wire): StoredMemory {
  return {
    memory: memory(w.memory),
    agentId: w.agent_id,
    status: fromEnum(w.status),
    supersededBy: w.superseded_by,
    slot: w.slot,
    updatedAt: fromTime(w.updated_at),
    validTo: fromTime(w.valid_to),
    metadata: { ...(w.metadata ?? {}) },
  };
}

export function memoryJob(w: Wire): MemoryJob {
  return { jobId: w.job_id, memoryId: w.memory_id };
}
