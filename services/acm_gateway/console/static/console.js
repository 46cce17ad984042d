// The ACM operator console: every read and change goes through the public HTTP/JSON API (docs/http-api.md) with
// the operator's key. Stored text is untrusted: it is only ever set as textContent, never parsed as HTML.
"use strict";

const KEY = "acm.console.key"; // sessionStorage: the key lives as long as this tab
const $ = (id) => document.getElementById(id);

function key() { return sessionStorage.getItem(KEY) || ""; }

class ApiError extends Error {}

async function call(method, path, body) {
  const init = { method, headers: { Authorization: `Bearer ${key()}` } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const text = await response.text();
  let data = {};
  try { data = text ? JSON.parse(text) : {}; } catch { data = { message: text }; }
  if (!response.ok) throw new ApiError(`${response.status}: ${data.message || response.statusText}`);
  return data;
}

function showError(err) { $("error").textContent = err ? String(err.message || err) : ""; }

function cell(row, value, className) {
  const td = document.createElement("td");
  td.textContent = value === undefined || value === null ? "" : String(value);
  if (className) td.className = className;
  row.appendChild(td);
  return td;
}

function fields(dl, pairs) {
  dl.replaceChildren();
  for (const [name, value] of pairs) {
    const dt = document.createElement("dt");
    dt.textContent = name;
    const dd = document.createElement("dd");
    dd.textContent = typeof value === "object" ? JSON.stringify(value) : String(value ?? "");
    dl.append(dt, dd);
  }
}

function formValues(form) { return Object.fromEntries(new FormData(form).entries()); }

function scopeQuery(params, values) {
  params.append("scope.customerId", values.customer || "");
  params.append("scope.userId", values.user || "");
}

function short(ts) { return ts ? ts.replace("T", " ").replace(/\.\d+Z$/, "Z") : ""; }

function saidBy(m) {
  const role = (m.role || "").replace("ROLE_", "").toLowerCase();
  return m.toolName ? `tool[${m.toolName}]` : role === "unspecified" ? "" : role;
}

// --- customers and users -------------------------------------------------------------------------------

let usersNext = "";

async function showUsers(append) {
  const params = new URLSearchParams({ pageSize: "100" });
  if (append && usersNext) params.append("pageToken", usersNext);
  const page = await call("GET", `/v1/users?${params}`);
  const body = $("users-table").tBodies[0];
  if (!append) body.replaceChildren();
  for (const u of page.users) {
    const row = body.insertRow();
    row.className = "clickable";
    cell(row, u.customerId);
    cell(row, u.userId);
    cell(row, u.memories);
    row.addEventListener("click", () => openUser(u.customerId, u.userId).catch(showError));
  }
  usersNext = page.nextPageToken;
  $("users-more").hidden = !usersNext;
}

async function openUser(customer, user) {
  const form = $("memories-form");
  form.elements.customer.value = customer;
  form.elements.user.value = user;
  location.hash = "#memories";
  memoryScope = formValues(form);
  $("memory-detail").hidden = true;
  await listMemories(false);
}

// --- memories ------------------------------------------------------------------------------------------

let memoryScope = null; // the form's values of the listing shown
let nextPage = "";

async function listMemories(append) {
  const v = memoryScope;
  const params = new URLSearchParams();
  scopeQuery(params, v);
  if (v.tier) params.append("tiers", v.tier);
  if (v.layer) params.append("layers", v.layer);
  if (v.kind) params.append("kinds", v.kind.trim());
  if (v.trust) params.append("trust", v.trust);
  if (v.entity) params.append("entity", v.entity.trim());
  if (v.metadata) params.append("metadata", v.metadata.trim());
  if (v.stale) params.append("includeStale", "true");
  params.append("pageSize", "50");
  if (append && nextPage) params.append("pageToken", nextPage);
  const page = await call("GET", `/v1/memories?${params}`);
  const body = $("memories-table").tBodies[0];
  if (!append) body.replaceChildren();
  for (const stored of page.memories) {
    const m = stored.memory;
    const row = body.insertRow();
    row.className = "clickable" + (stored.status === "MEMORY_STATUS_STALE" ? " stale" : "");
    row.dataset.memoryId = m.memoryId;
    cell(row, short(m.createdAt));
    cell(row, m.tier.replace("TIER_", "").toLowerCase());
    cell(row, m.layer.replace("LAYER_", "").toLowerCase());
    cell(row, m.kind);
    cell(row, (m.trust || "").replace("TRUST_", "").toLowerCase(), `trust-${m.trust}`);
    cell(row, saidBy(m));
    cell(row, m.sessionId);
    cell(row, stored.status.replace("MEMORY_STATUS_", "").toLowerCase());
    cell(row, m.text, "text");
    row.addEventListener("click", () => showMemory(m.memoryId).catch(showError));
  }
  nextPage = page.nextPageToken;
  $("memories-more").hidden = !nextPage;
}

async function showMemory(memoryId) {
  showError(null);
  const params = new URLSearchParams();
  scopeQuery(params, memoryScope);
  const id = encodeURIComponent(memoryId);
  const [stored, history] = await Promise.all([
    call("GET", `/v1/memories/${id}?${params}`),
    call("GET", `/v1/memories/${id}/history?${params}`),
  ]);
  const m = stored.memory;
  $("memory-id").textContent = m.memoryId;
  fields($("memory-fields"), [
    ["text", m.text], ["tier", m.tier], ["layer", m.layer], ["kind", m.kind], ["trust", m.trust],
    ["said by", saidBy(m)], ["source turns", (m.sourceTurnIds || []).join(", ")], ["session", m.sessionId],
    ["agent", stored.agentId], ["slot", stored.slot], ["status", stored.status],
    ["superseded by", stored.supersededBy], ["created", m.createdAt], ["valid from", m.validFrom],
    ["valid to", stored.validTo || ""], ["metadata", stored.metadata || {}],
  ]);
  const body = $("history-table").tBodies[0];
  body.replaceChildren();
  history.versions.forEach((version, i) => {
    const row = body.insertRow();
    cell(row, i + 1);
    cell(row, short(version.memory.createdAt));
    cell(row, version.status.replace("MEMORY_STATUS_", "").toLowerCase());
    cell(row, version.supersededBy);
    cell(row, version.memory.text, "text");
  });
  $("memory-delete").dataset.memoryId = m.memoryId;
  $("memory-detail").hidden = false;
}

async function deleteMemory() {
  const memoryId = $("memory-delete").dataset.memoryId;
  if (!memoryId || !confirm(`Delete memory ${memoryId} from every store?`)) return;
  const params = new URLSearchParams();
  scopeQuery(params, memoryScope);
  const job = await call("DELETE", `/v1/memories/${encodeURIComponent(memoryId)}?${params}`);
  $("memory-detail").hidden = true;
  await waitForJob(job.jobId, memoryScope);
  await listMemories(false);
}

async function waitForJob(jobId, scope) {
  for (let i = 0; i < 50; i++) {
    const job = await getJob(jobId, scope);
    if (job.status !== "JOB_STATUS_PENDING") return job;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return null;
}

// --- context --------------------------------------------------------------------------------------------

async function fetchContext(values) {
  const scope = { customerId: values.customer, userId: values.user, agentId: values.agent, sessionId: values.session };
  const answer = await call("POST", "/v1/context:fetch", {
    scope, query: values.query || "", budgetTokens: Number(values.budget) || 0,
  });
  $("context-summary").textContent =
    `${answer.contextTokens ?? answer.totalTokens} of ${answer.budgetTokens} tokens; ${answer.memories.length} memories` +
    `${answer.dropped ? `, ${answer.dropped} left out` : ""}${answer.fromPrefetch ? "; served from the prefetch pool" : ""}` +
    `${answer.notice ? `; notice: ${answer.notice}` : ""}`;
  const body = $("context-parts").tBodies[0];
  body.replaceChildren();
  for (const part of answer.parts) {
    const row = body.insertRow();
    cell(row, part.name);
    cell(row, part.tokens);
    cell(row, part.text, "text");
  }
  const c = answer.lastCompaction;
  $("context-compaction").textContent = c && c.compactionId
    ? `${c.outcome}: ${c.tokensBefore} → ${c.tokensAfter} tokens (ratio ${Number(c.ratio).toFixed(2)}), ` +
      `verified ${c.verified} after ${c.attempts} attempt(s)\n${JSON.stringify(c, null, 2)}`
    : "no compaction in this session";
}

// --- jobs ---------------------------------------------------------------------------------------------

async function getJob(jobId, scope) {
  const params = new URLSearchParams();
  scopeQuery(params, scope);
  return call("GET", `/v1/jobs/${encodeURIComponent(jobId)}?${params}`);
}

let jobsNext = "";
let jobsStatus = "";

async function showJobs(append) {
  const params = new URLSearchParams({ pageSize: "100" });
  if (jobsStatus) params.append("status", jobsStatus);
  if (append && jobsNext) params.append("pageToken", jobsNext);
  const page = await call("GET", `/v1/jobs?${params}`);
  const body = $("jobs-table").tBodies[0];
  if (!append) body.replaceChildren();
  for (const listed of page.jobs) {
    const job = listed.job;
    const row = body.insertRow();
    row.dataset.jobId = job.jobId;
    cell(row, short(job.createdAt));
    cell(row, job.jobId);
    cell(row, job.kind);
    cell(row, job.status.replace("JOB_STATUS_", "").toLowerCase());
    cell(row, listed.customerId);
    cell(row, listed.userId);
    cell(row, listed.sessionId);
    cell(row, JSON.stringify(job.counts));
    cell(row, job.error, "text");
    cell(row, short(job.updatedAt));
  }
  jobsNext = page.nextPageToken;
  $("jobs-more").hidden = !jobsNext;
}

// --- dead letters ---------------------------------------------------------------------------------------

let lettersNext = "";

async function showLetters(append) {
  const params = new URLSearchParams({ pageSize: "100" });
  if (append && lettersNext) params.append("pageToken", lettersNext);
  const page = await call("GET", `/v1/dead-letters?${params}`);
  const body = $("letters-table").tBodies[0];
  if (!append) body.replaceChildren();
  for (const letter of page.letters) {
    const row = body.insertRow();
    row.dataset.letterId = letter.letterId;
    cell(row, short(letter.failedAt));
    cell(row, letter.group);
    cell(row, letter.topic);
    cell(row, letter.key);
    cell(row, letter.reason, "text");
    cell(row, letter.attempts);
    cell(row, letter.sizeBytes);
    cell(row, letter.eventId);
  }
  lettersNext = page.nextPageToken;
  $("letters-more").hidden = !lettersNext;
}

// --- compactions -----------------------------------------------------------------------------------------

let compactionsNext = "";

async function showCompactions(append) {
  const params = new URLSearchParams({ pageSize: "100" });
  if (append && compactionsNext) params.append("pageToken", compactionsNext);
  const page = await call("GET", `/v1/compactions?${params}`);
  const body = $("compactions-table").tBodies[0];
  if (!append) body.replaceChildren();
  for (const listed of page.compactions) {
    const c = listed.compaction;
    const row = body.insertRow();
    row.dataset.compactionId = c.compactionId;
    cell(row, short(c.createdAt));
    cell(row, listed.customerId);
    cell(row, listed.userId);
    cell(row, listed.sessionId);
    cell(row, c.outcome);
    cell(row, c.verified ? "verified" : "not verified");
    cell(row, `${c.tokensBefore || 0} → ${c.tokensAfter || 0}`);
    cell(row, c.attempts);
    cell(row, (c.missingAtoms || []).join(", "), "text");
    cell(row, c.message, "text");
  }
  compactionsNext = page.nextPageToken;
  $("compactions-more").hidden = !compactionsNext;
}

// --- agents, key, health ------------------------------------------------------------------------------

async function showAgents() {
  const listing = await call("GET", "/v1/agents");
  const body = $("agents-table").tBodies[0];
  body.replaceChildren();
  for (const agent of listing.agents) {
    const row = body.insertRow();
    row.className = "clickable";
    cell(row, agent.agentId);
    cell(row, agent.version);
    cell(row, agent.archetype);
    cell(row, short(agent.createdAt));
    cell(row, agent.rationale, "text");
    row.addEventListener("click", () => {
      let schema = agent.schemaJson;
      try { schema = JSON.stringify(JSON.parse(schema), null, 2); } catch { /* shown as stored */ }
      $("agent-schema").textContent = schema;
    });
  }
}

async function showKeys() {
  const listing = await call("GET", "/v1/keys");
  const body = $("keys-table").tBodies[0];
  body.replaceChildren();
  for (const k of listing.keys) {
    const row = body.insertRow();
    row.dataset.keyId = k.keyId;
    cell(row, k.keyId);
    cell(row, k.name);
    cell(row, k.role);
    cell(row, k.customers.join(", "));
    cell(row, k.users.join(", "));
    cell(row, short(k.createdAt));
    cell(row, k.revoked ? "revoked" : "");
  }
}

async function showHealth() {
  const pairs = [];
  for (const probe of ["healthz", "readyz"]) {
    const response = await fetch(`/${probe}`);
    const answer = await response.json().catch(() => ({}));
    pairs.push([`/${probe}`, `${response.status} ${answer.status || ""}`]);
  }
  fields($("health-fields"), pairs);
}

// --- benchmark plots: fetched with the key (an <img src> could not send it), shown from a blob URL ---------

let plotUrl = "";

async function showPlots() {
  const listing = await call("GET", "/console/api/results");
  const list = $("plots");
  list.replaceChildren();
  if (!listing.plots.length) list.textContent = "no plots: this server has no results folder";
  for (const name of listing.plots) {
    const item = document.createElement("li");
    const link = document.createElement("a");
    link.href = "#benchmarks";
    link.textContent = name;
    link.addEventListener("click", guard(() => showPlot(name)));
    item.appendChild(link);
    list.appendChild(item);
  }
}

async function showPlot(name) {
  const response = await fetch(`/console/api/results/${encodeURIComponent(name)}`, {
    headers: { Authorization: `Bearer ${key()}` },
  });
  if (!response.ok) throw new ApiError(`${response.status}: plot ${name} not served`);
  if (plotUrl) URL.revokeObjectURL(plotUrl);
  plotUrl = URL.createObjectURL(await response.blob());
  $("plot-image").src = plotUrl;
  $("plot-image").alt = name;
  $("plot-name").textContent = name;
  $("plot").hidden = false;
}

// --- navigation and log-in ------------------------------------------------------------------------------

function showView() {
  const name = (location.hash || "#users").slice(1);
  for (const view of document.querySelectorAll(".view")) view.hidden = view.id !== `view-${name}`;
  for (const link of document.querySelectorAll("nav a")) link.classList.toggle("active", link.dataset.view === name);
  showError(null);
  if (name === "jobs") showJobs(false).catch(showError);
  if (name === "dead-letters") showLetters(false).catch(showError);
  if (name === "compactions") showCompactions(false).catch(showError);
  if (name === "users") showUsers(false).catch(showError);
  if (name === "key") showKeys().catch(showError);
  if (name === "benchmarks") showPlots().catch(showError);
}

async function logIn(secret) {
  const response = await fetch("/console/api/whoami", { headers: { Authorization: `Bearer ${secret}` } });
  const who = await response.json().catch(() => ({}));
  if (!response.ok) {
    sessionStorage.removeItem(KEY);
    $("login-error").textContent = who.message || `refused (${response.status})`;
    return;
  }
  sessionStorage.setItem(KEY, secret);
  $("login-error").textContent = "";
  $("who").textContent = `client ${who.clientId} · ${who.role} key ${who.keyId}`;
  fields($("key-fields"), [["client", who.clientId], ["key id", who.keyId], ["name", who.name], ["role", who.role]]);
  $("login").hidden = true;
  $("app").hidden = false;
  $("logout").hidden = false;
  showView();
}

function guard(handler) {
  return (event) => {
    event.preventDefault();
    showError(null);
    Promise.resolve(handler(event)).catch(showError);
  };
}

document.addEventListener("DOMContentLoaded", () => {
  $("login-form").addEventListener("submit", guard(() => logIn($("key").value.trim())));
  $("logout").addEventListener("click", () => { sessionStorage.removeItem(KEY); location.reload(); });
  $("memories-form").addEventListener("submit", guard((e) => {
    memoryScope = formValues(e.target);
    $("memory-detail").hidden = true;
    return listMemories(false);
  }));
  $("memories-more").addEventListener("click", guard(() => listMemories(true)));
  $("users-more").addEventListener("click", guard(() => showUsers(true)));
  $("memory-delete").addEventListener("click", guard(deleteMemory));
  $("context-form").addEventListener("submit", guard((e) => fetchContext(formValues(e.target))));
  $("jobs-form").addEventListener("submit", guard((e) => {
    jobsStatus = formValues(e.target).status;
    return showJobs(false);
  }));
  $("jobs-more").addEventListener("click", guard(() => showJobs(true)));
  $("letters-refresh").addEventListener("click", guard(() => showLetters(false)));
  $("letters-more").addEventListener("click", guard(() => showLetters(true)));
  $("compactions-refresh").addEventListener("click", guard(() => showCompactions(false)));
  $("compactions-more").addEventListener("click", guard(() => showCompactions(true)));
  $("agents-load").addEventListener("click", guard(showAgents));
  $("health-load").addEventListener("click", guard(showHealth));
  window.addEventListener("hashchange", showView);
  if (key()) logIn(key()).catch(showError);
});
