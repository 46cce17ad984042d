import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

import { AcmError } from "./errors.js";
import * as t from "./types.js";

export interface TlsOptions {
  /** The CA to trust (PEM file); unset: the system's roots. */
  caFile?: string;
  /** This client's certificate and key, for a gateway that requires one (mTLS). */
  certFile?: string;
  keyFile?: string;
  /** The name to check in the server's certificate instead of the address's host. */
  serverName?: string;
}

/** Retries of a call that failed with UNAVAILABLE, for idempotent calls only (see AcmClient): `attempts` in all,
 * waiting initialBackoffMs, then `multiplier` times more up to maxBackoffMs (jittered), never past the deadline. */
export interface RetryOptions {
  attempts?: number;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  multiplier?: number;
}

export interface ClientOptions {
  /** host:port of the gateway (default 127.0.0.1:50051, `acm serve`). */
  address?: string;
  apiKey: string;
  /** Unset: plaintext (a gateway on this host). */
  tls?: TlsOptions;
  /** Each call's default deadline (ms), which all its attempts share. Default 10 s. */
  deadlineMs?: number;
  retry?: RetryOptions;
  /** The folder holding acm/v1/gateway.proto; default: the package's protos/ (npm pack puts the repository's
   * there), else the checkout's protos/ two folders up. */
  protoDir?: string;
}

export interface CallOptions {
  /** This call's deadline (ms), retries included; default: the client's. */
  deadlineMs?: number;
}

type Converter<T> = (wire: t.Wire) => T;

// sealingKey keeps a key until this long before its validUntil (the gateway's clock may run ahead), for this many
// scopes at most (past it, all are dropped and asked again).
const SEALING_MARGIN_MS = 5_000;
const MAX_SEALING_KEYS = 1024;

const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  arrays: true,
  objects: true,
  oneofs: true,
};

function protoDir(given?: string): string {
  if (given) return given;
  const pkg = fileURLToPath(new URL("../..", import.meta.url)); // dist/src/ → the package
  const candidates = [join(pkg, "protos"), join(pkg, "..", "..", "protos")];
  const found = candidates.find((dir) => existsSync(join(dir, "acm", "v1", "gateway.proto")));
  if (!found) throw new Error(`no acm/v1/gateway.proto in ${candidates.join(" or ")}: pass protoDir`);
  return found;
}

const gateways = new Map<string, grpc.ServiceClientConstructor>();

/** The Gateway service from the .proto files at run time (google/api/*.proto come with protobufjs). */
function gatewayService(dir: string): grpc.ServiceClientConstructor {
  let service = gateways.get(dir);
  if (!service) {
    const protobufjs = dirname(createRequire(import.meta.url).resolve("protobufjs/package.json"));
    const definition = protoLoader.loadSync("acm/v1/gateway.proto", { ...LOADER_OPTIONS, includeDirs: [dir, protobufjs] });
    const loaded = grpc.loadPackageDefinition(definition) as t.Wire;
    service = loaded.acm.v1.Gateway as grpc.ServiceClientConstructor;
    gateways.set(dir, service);
  }
  return service;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** ACM's gateway over gRPC. Every call has a deadline; a failure rejects with an AcmError. Retried on UNAVAILABLE
 * (idempotent): the reads (getJob, fetch, getAgent, listAgents, getMemory, listMemories, memoryHistory,
 * exportUser), forget and importUser, and ingest / ingestBatch when every turn has a turnId. Never retried:
 * defineAgent and updateMemory (each makes a new version), deleteMemory and compact. */
export class AcmClient {
  private readonly stub: grpc.Client & Record<string, t.Wire>;
  private readonly metadata = new grpc.Metadata();
  private readonly deadlineMs: number;
  private readonly retry: Required<RetryOptions>;
  private readonly sealingKeys = new Map<string, t.SealingKey>();

  constructor(options: ClientOptions) {
    if (!options.apiKey) throw new Error("an API key is needed (an `acm serve` prints its dev key)");
    this.metadata.set("authorization", `Bearer ${options.apiKey}`);
    this.deadlineMs = options.deadlineMs ?? 10_000;
    this.retry = { attempts: 4, initialBackoffMs: 100, maxBackoffMs: 2000, multiplier: 2, ...options.retry };
    const tls = options.tls;
    const credentials = tls
      ? grpc.credentials.createSsl(
          tls.caFile ? readFileSync(tls.caFile) : null,
          tls.keyFile ? readFileSync(tls.keyFile) : null,
          tls.certFile ? readFileSync(tls.certFile) : null,
        )
      : grpc.credentials.createInsecure();
    // gRPC waits ~1 s (growing) before reconnecting after a failed connect; paced like the retries instead.
    const channelOptions: grpc.ChannelOptions = {
      "grpc.initial_reconnect_backoff_ms": this.retry.initialBackoffMs,
      "grpc.max_reconnect_backoff_ms": this.retry.maxBackoffMs,
    };
    if (tls?.serverName) channelOptions["grpc.ssl_target_name_override"] = tls.serverName;
    const Gateway = gatewayService(protoDir(options.protoDir));
    this.stub = new Gateway(options.address ?? "127.0.0.1:50051", credentials, channelOptions) as AcmClient["stub"];
  }

  close(): void {
    this.stub.close();
  }

  private async call<T>(
    method: string,
    request: t.Wire,
    convert: Converter<T>,
    idempotent: boolean,
    options?: CallOptions,
  ): Promise<T> {
    const deadline = Date.now() + (options?.deadlineMs ?? this.deadlineMs);
    const allowed = idempotent ? this.retry.attempts : 1;
    for (let sent = 1; ; sent++) {
      try {
        const wire = await new Promise<t.Wire>((resolve, reject) => {
          this.stub[method](request, this.metadata, { deadline }, (error: grpc.ServiceError | null, answer: t.Wire) =>
            error ? reject(error) : resolve(answer),
          );
        });
        return convert(wire);
      } catch (error) {
        const failure = error as grpc.ServiceError;
        if (typeof failure.code !== "number") throw error;
        const ceiling = Math.min(this.retry.maxBackoffMs, this.retry.initialBackoffMs * this.retry.multiplier ** (sent - 1));
        const wait = ceiling * (0.5 + Math.random() / 2);
        if (failure.code !== grpc.status.UNAVAILABLE || sent >= allowed || Date.now() + wait >= deadline) {
          throw AcmError.fromServiceError(failure, sent);
        }
        await sleep(wait);
      }
    }
  }

  /** Accepts a turn (a string is a user message) for ingestion; follow its job with waitJob. */
  ingest(scope: t.Scope, turn: t.Turn | string, options?: CallOptions): Promise<t.Accepted> {
    const request = { scope: t.toScope(scope), turn: t.toTurn(turn) };
    const idempotent = typeof turn !== "string" && !!turn.turnId;
    return this.call("Ingest", request, (w) => ({ jobId: w.job_id, eventId: w.event_id }), idempotent, options);
  }

  /** Many turns (at most 500) in one call, each accepted as by ingest, in order. */
  ingestBatch(scope: t.Scope, turns: t.Turn[], options?: CallOptions): Promise<t.Accepted[]> {
    const request = { scope: t.toScope(scope), turns: turns.map(t.toTurn) };
    const accepted = (w: t.Wire) => w.accepted.map((a: t.Wire) => ({ jobId: a.job_id, eventId: a.event_id }));
    return this.call("IngestBatch", request, accepted, turns.every((turn) => !!turn.turnId), options);
  }

  /** The data key to seal the scope's turns with before publishing them to Kafka yourself (the same rights as
   * ingest); sealingKey keeps it until shortly before its validUntil. */
  getSealingKey(scope: t.Scope, options?: CallOptions): Promise<t.SealingKey> {
    return this.call("GetSealingKey", { scope: t.toScope(scope) }, t.sealingKey, true, options);
  }

  /** getSealingKey's key for the scope, kept until 5 s before its validUntil (one call per scope and key lifetime). */
  async sealingKey(scope: t.Scope, options?: CallOptions): Promise<t.SealingKey> {
    const owner = [scope.clientId ?? "", scope.customerId, scope.userId ?? "", scope.sessionId ?? ""].join("\u0000");
    const kept = this.sealingKeys.get(owner);
    if (kept && Date.now() < kept.validUntil.getTime() - SEALING_MARGIN_MS) return kept;
    const key = await this.getSealingKey(scope, options);
    if (this.sealingKeys.size >= MAX_SEALING_KEYS) this.sealingKeys.clear();
    this.sealingKeys.set(owner, key);
    return key;
  }

  getJob(scope: t.Scope, jobId: string, options?: CallOptions): Promise<t.Job> {
    return this.call("GetJob", { scope: t.toScope(scope), job_id: jobId }, t.job, true, options);
  }

  /** Polls the job until it is done or failed; rejects when it is still pending after waitMs (default 30 s). */
  async waitJob(scope: t.Scope, jobId: string, waitMs = 30_000): Promise<t.Job> {
    const until = Date.now() + waitMs;
    for (let delay = 10; ; delay = Math.min(delay * 2, 500)) {
      const job = await this.getJob(scope, jobId);
      if (job.status === "done" || job.status === "failed") return job;
      if (Date.now() > until) throw new Error(`job ${jobId} still ${job.status} after ${waitMs} ms`);
      await sleep(delay);
    }
  }

  /** The context for `query` within budgetTokens (0: the server's default). */
  fetch(
    scope: t.Scope,
    query: string,
    options?: CallOptions & { budgetTokens?: number; encoding?: string; tiers?: t.Tier[]; asOf?: Date },
  ): Promise<t.Context> {
    const request = {
      scope: t.toScope(scope),
      query,
      budget_tokens: options?.budgetTokens ?? 0,
      encoding: options?.encoding ?? "",
      tiers: (options?.tiers ?? []).map((tier) => t.toEnum("TIER", tier)),
      as_of: t.toTime(options?.asOf),
    };
    return this.call("Fetch", request, t.context, true, options);
  }

  /** Erases the scope's "session", "user", "customer" or "client" everywhere; resolves to the job id. */
  forget(scope: t.Scope, level: string, options?: CallOptions): Promise<string> {
    return this.call("Forget", { scope: t.toScope(scope), level }, (w) => w.job_id as string, true, options);
  }

  compact(scope: t.Scope, budgetTokens = 0, options?: CallOptions): Promise<t.Compaction> {
    const request = { scope: t.toScope(scope), budget_tokens: budgetTokens };
    return this.call("Compact", request, (w) => t.compaction(w.compaction), false, options);
  }

  defineAgent(
    scope: t.Scope,
    description: string,
    options?: CallOptions & { overridesJson?: string; archetype?: string },
  ): Promise<t.AgentSchema> {
    const request = {
      scope: t.toScope(scope),
      description,
      overrides_json: options?.overridesJson ?? "",
      archetype: options?.archetype ?? "",
    };
    return this.call("DefineAgent", request, t.agentSchema, false, options);
  }

  getAgent(scope: t.Scope, version = 0, options?: CallOptions): Promise<t.AgentSchema> {
    return this.call("GetAgent", { scope: t.toScope(scope), version }, t.agentSchema, true, options);
  }

  listAgents(scope: t.Scope, options?: CallOptions): Promise<t.AgentSchema[]> {
    const agents = (w: t.Wire) => w.agents.map(t.agentSchema);
    return this.call("ListAgents", { scope: t.toScope(scope) }, agents, true, options);
  }

  getMemory(scope: t.Scope, memoryId: string, options?: CallOptions): Promise<t.StoredMemory> {
    return this.call("GetMemory", { scope: t.toScope(scope), memory_id: memoryId }, t.storedMemory, true, options);
  }

  /** One page of memories, newest first; pass nextPageToken back as pageToken for the next. */
  listMemories(
    scope: t.Scope,
    where: t.MemoryFilter = {},
    options?: CallOptions & { pageSize?: number; pageToken?: string },
  ): Promise<t.MemoryPage> {
    const request = {
      scope: t.toScope(scope),
      ...t.toFilter(where),
      page_size: options?.pageSize ?? 0,
      page_token: options?.pageToken ?? "",
    };
    const page = (w: t.Wire) => ({ memories: w.memories.map(t.storedMemory), nextPageToken: w.next_page_token });
    return this.call("ListMemories", request, page, true, options);
  }

  /** A correction: a new version with `text`, `source` saying where it comes from. */
  updateMemory(scope: t.Scope, memoryId: string, text: string, source: string, options?: CallOptions) {
    const request = { scope: t.toScope(scope), memory_id: memoryId, text, source };
    return this.call("UpdateMemory", request, t.memoryJob, false, options);
  }

  deleteMemory(scope: t.Scope, memoryId: string, options?: CallOptions): Promise<t.MemoryJob> {
    return this.call("DeleteMemory", { scope: t.toScope(scope), memory_id: memoryId }, t.memoryJob, false, options);
  }

  /** The versions of one memory (memoryId) or of one slot, oldest first. */
  memoryHistory(scope: t.Scope, of: { memoryId?: string; slot?: string }, options?: CallOptions) {
    const request = { scope: t.toScope(scope), memory_id: of.memoryId ?? "", slot: of.slot ?? "" };
    const versions = (w: t.Wire): t.StoredMemory[] => w.versions.map(t.storedMemory);
    return this.call("MemoryHistory", request, versions, true, options);
  }

  /** The scope's user's memories as JSON lines, a page at a time. */
  exportUser(scope: t.Scope, options?: CallOptions & { pageSize?: number; pageToken?: string }) {
    const request = { scope: t.toScope(scope), page_size: options?.pageSize ?? 0, page_token: options?.pageToken ?? "" };
    const page = (w: t.Wire): t.ExportPage => ({ jsonl: w.jsonl, count: w.count, nextPageToken: w.next_page_token });
    return this.call("ExportUser", request, page, true, options);
  }

  /** exportUser's lines (at most 500) into the scope's user; importing them again changes nothing. */
  importUser(scope: t.Scope, jsonl: string, options?: CallOptions): Promise<t.MemoryJob> {
    return this.call("ImportUser", { scope: t.toScope(scope), jsonl }, t.memoryJob, true, options);
  }
}
