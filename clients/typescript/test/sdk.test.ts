// The TypeScript SDK against a running `acm serve` (the checkout's, started here on a free port with a data folder
// of its own): a turn ingested, its job followed and the fact fetched back typed; gRPC statuses as AcmError codes;
// deadlines; idempotent calls retried on UNAVAILABLE, the others not.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";

import { AcmClient, AcmError, type Scope } from "../src/index.js";

const ACM = process.env.ACM_BIN ?? fileURLToPath(new URL("../../../../.venv/bin/acm", import.meta.url));
const ALICE: Scope = { customerId: "acme", userId: "alice", sessionId: "s1" };

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

let served: ChildProcess;
let dataDir: string;
let address: string;
let apiKey: string;

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "acm-sdk-ts-"));
  address = `127.0.0.1:${await freePort()}`;
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("ACM_")));
  served = spawn(ACM, ["serve", "--listen", address], {
    env: { ...env, ACM_DATA_DIR: dataDir },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let banner = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`acm serve did not start: ${banner}`)), 120_000);
    served.stdout!.on("data", (chunk: Buffer) => {
      banner += chunk.toString();
      if (banner.includes("Ctrl-C")) {
        clearTimeout(timer);
        resolve();
      }
    });
    served.stderr!.on("data", (chunk: Buffer) => (banner += chunk.toString()));
    served.once("exit", (code) => reject(new Error(`acm serve exited (${code}): ${banner}`)));
  });
  apiKey = readFileSync(join(dataDir, "dev-api-key"), "utf8").trim();
});

after(async () => {
  served?.kill("SIGTERM");
  await new Promise((resolve) => served?.once("exit", resolve));
  rmSync(dataDir, { recursive: true, force: true });
});

test("a turn is ingested, its job followed and the fact fetched back typed", async () => {
  const acm = new AcmClient({ address, apiKey });
  try {
    const accepted = await acm.ingest(ALICE, { content: "I moved to Lisbon in May", turnId: "t-lisbon" });
    const job = await acm.waitJob(ALICE, accepted.jobId);
    assert.equal(job.status, "done");
    assert.equal(job.kind, "ingest");
    assert.ok(job.counts.facts >= 1, JSON.stringify(job.counts));
    assert.ok(job.createdAt instanceof Date);

    const context = await acm.fetch(ALICE, "where do I live?", { budgetTokens: 400 });
    assert.match(context.context, /Lisbon/);
    assert.equal(context.budgetTokens, 400);
    assert.ok(context.contextTokens > 0 && context.contextTokens <= 400);
    const fact = context.memories.find((m) => m.text.includes("Lisbon"));
    assert.ok(fact, JSON.stringify(context.memories));
    assert.equal(fact.tier, "user");
    assert.equal(fact.role, "user");
    assert.deepEqual(fact.sourceTurnIds, ["t-lisbon"]);

    const stored = await acm.getMemory(ALICE, fact.memoryId);
    assert.equal(stored.status, "active");
    assert.equal(stored.memory.memoryId, fact.memoryId);
  } finally {
    acm.close();
  }
});

test("gRPC statuses are AcmErrors with the status name", async () => {
  const acm = new AcmClient({ address, apiKey });
  try {
    await assert.rejects(acm.getJob(ALICE, "no-such-job"), (e: AcmError) => e.code === "NOT_FOUND" && e.attempts === 1);
    await assert.rejects(
      acm.fetch({ customerId: "", userId: "alice" }, "anything"),
      (e: AcmError) => e instanceof AcmError && e.code === "INVALID_ARGUMENT" && /customer_id/.test(e.details),
    );
  } finally {
    acm.close();
  }
  const stranger = new AcmClient({ address, apiKey: "acm_nope_nope" });
  await assert.rejects(stranger.fetch(ALICE, "anything"), (e: AcmError) => e.code === "UNAUTHENTICATED");
  stranger.close();
});

test("every call has a deadline", async () => {
  const acm = new AcmClient({ address, apiKey });
  await assert.rejects(
    acm.fetch(ALICE, "where do I live?", { deadlineMs: 1 }),
    (e: AcmError) => e.code === "DEADLINE_EXCEEDED",
  );
  acm.close();
});

test("idempotent calls are retried on UNAVAILABLE, the others are sent once", async () => {
  const closed = `127.0.0.1:${await freePort()}`;
  const retry = { attempts: 3, initialBackoffMs: 10, maxBackoffMs: 10 };
  const acm = new AcmClient({ address: closed, apiKey, retry });
  try {
    await assert.rejects(acm.fetch(ALICE, "x"), (e: AcmError) => e.code === "UNAVAILABLE" && e.attempts === 3);
    await assert.rejects(
      acm.defineAgent(ALICE, "a billing assistant"),
      (e: AcmError) => e.code === "UNAVAILABLE" && e.attempts === 1,
    );
    await assert.rejects(acm.ingest(ALICE, "no turn id"), (e: AcmError) => e.code === "UNAVAILABLE" && e.attempts === 1);
  } finally {
    acm.close();
  }
});
