// The TypeScript SDK against a running `acm serve` (the checkout's, started here on a free port with a data folder
// of its own): a turn ingested, its job followed and the fact fetched back typed; gRPC statuses as AcmError codes;
// deadlines; idempotent calls retried on UNAVAILABLE, the others not.
import assert from "node:assert/strict";
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";

import { AcmClient, AcmError, type Scope } from "../src/index.js";

const REPO = fileURLToPath(new URL("../../../../", import.meta.url)); // from dist/test/
const ACM = process.env.ACM_BIN ?? join(REPO, ".venv", "bin", "acm");
const PYTHON = join(dirname(ACM), "python");
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

interface Served {
  process: ChildProcess;
  dataDir: string;
  address: string;
  apiKey: string;
}

/** `acm serve` on a free port with a new data folder; `env` adds settings, the caller's ACM_* never leak in. */
async function acmServe(env: Record<string, string> = {}): Promise<Served> {
  const dataDir = mkdtempSync(join(tmpdir(), "acm-sdk-ts-"));
  const address = `127.0.0.1:${await freePort()}`;
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("ACM_")));
  const child = spawn(ACM, ["serve", "--listen", address], {
    env: { ...inherited, ...env, ACM_DATA_DIR: dataDir },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let banner = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`acm serve did not start: ${banner}`)), 120_000);
    child.stdout!.on("data", (chunk: Buffer) => {
      banner += chunk.toString();
      if (banner.includes("Ctrl-C")) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.stderr!.on("data", (chunk: Buffer) => (banner += chunk.toString()));
    child.once("exit", (code) => reject(new Error(`acm serve exited (${code}): ${banner}`)));
  });
  return { process: child, dataDir, address, apiKey: readFileSync(join(dataDir, "dev-api-key"), "utf8").trim() };
}

async function stop(served: Served): Promise<void> {
  const exited = new Promise((resolve) => served.process.once("exit", resolve));
  served.process.kill("SIGTERM");
  await exited;
  rmSync(served.dataDir, { recursive: true, force: true });
}

let served: Served;
let address: string;
let apiKey: string;

before(async () => {
  served = await acmServe();
  ({ address, apiKey } = served);
});

after(() => stop(served));

test("a turn is ingested, its job followed and the fact fetched back typed", async () => {
  const acm = new AcmClient({ address, apiKey });
  try {
    const accepted = await acm.ingest(ALICE, {
      content: "I moved to Lisbon in May",
      turnId: "t-lisbon",
      metadata: { ticket: "T-7" },
    });
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
    assert.deepEqual(stored.metadata, { ticket: "T-7" });

    const tagged = await acm.listMemories(ALICE, { metadata: { ticket: "T-7" } });
    assert.ok(tagged.memories.some((m) => m.memory.memoryId === fact.memoryId), JSON.stringify(tagged));
    assert.deepEqual((await acm.listMemories(ALICE, { metadata: { ticket: "T-8" } })).memories, []);
  } finally {
    acm.close();
  }
});

test("a direct publisher's sealing key, kept until shortly before its validUntil", async () => {
  const acm = new AcmClient({ address, apiKey });
  try {
    const key = await acm.sealingKey(ALICE);
    assert.equal(key.secret.length, 32);
    assert.ok(key.validUntil.getTime() > Date.now() && key.validUntil.getTime() <= Date.now() + 61_000);
    assert.equal(await acm.sealingKey(ALICE), key); // kept: no second call
    assert.equal((await acm.getSealingKey(ALICE)).keyId, key.keyId); // the scope's current key, until a Forget
    const bob = await acm.sealingKey({ ...ALICE, userId: "bob" });
    assert.notEqual(bob.keyId, key.keyId);
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

test("TLS with a client certificate (mTLS)", async () => {
  // The certificates come from the Python tests' CA helper (tests/support/pki.py), run by the checkout's python.
  const pki = mkdtempSync(join(tmpdir(), "acm-sdk-ts-pki-"));
  const script = [
    "import sys; from pathlib import Path; from tests.support.pki import Authority",
    "ca = Authority(Path(sys.argv[1]), 'ca'); ca.issue('server'); ca.issue('client')",
  ].join("\n");
  execFileSync(PYTHON, ["-c", script, pki], { cwd: REPO });
  const file = (name: string) => join(pki, name);
  const tlsServer = await acmServe({
    ACM_TLS_CERT_FILE: file("server.crt"),
    ACM_TLS_KEY_FILE: file("server.key"),
    ACM_TLS_CLIENT_CA_FILE: file("ca.crt"),
  });
  try {
    const tls = { caFile: file("ca.crt"), certFile: file("client.crt"), keyFile: file("client.key") };
    const acm = new AcmClient({ address: tlsServer.address, apiKey: tlsServer.apiKey, tls });
    assert.deepEqual(await acm.listAgents(ALICE), []);
    acm.close();
    const once = { attempts: 1 };
    const anonymous = new AcmClient({ address: tlsServer.address, apiKey, tls: { caFile: file("ca.crt") }, retry: once });
    await assert.rejects(anonymous.listAgents(ALICE), (e: AcmError) => e.code === "UNAVAILABLE");
    anonymous.close();
    const plaintext = new AcmClient({ address: tlsServer.address, apiKey, retry: once });
    await assert.rejects(plaintext.listAgents(ALICE), (e: AcmError) => e.code === "UNAVAILABLE");
    plaintext.close();
  } finally {
    await stop(tlsServer);
    rmSync(pki, { recursive: true, force: true });
  }
});
