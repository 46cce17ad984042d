// ACM's TypeScript SDK: AcmClient over the gateway's gRPC API (the repository's protos, loaded at run time), with
// typed results, a deadline on every call, retries of idempotent calls on UNAVAILABLE, TLS and the API key.
export { AcmClient, type CallOptions, type ClientOptions, type RetryOptions, type TlsOptions } from "./client.js";
export { AcmError } from "./errors.js";
export type {
  Accepted,
  AgentSchema,
  Compaction,
  Context,
  ContextPart,
  ExportPage,
  Job,
  JobStatus,
  Layer,
  Memory,
  MemoryFilter,
  MemoryJob,
  MemoryPage,
  MemoryStatus,
  PinnedEntity,
  Role,
  Scope,
  SealingKey,
  StoredMemory,
  Tier,
  Trust,
  Turn,
} from "./types.js";
