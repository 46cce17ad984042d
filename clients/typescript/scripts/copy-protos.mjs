// npm pack / publish: the public API's protos (acm/v1/gateway.proto and the acm/v1 files it imports) go into the
// tarball's protos/ (ignored by git), so that an installed package loads the files a checkout loads from
// ../../protos. Nothing is copied into the repository.
import { cpSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const from = fileURLToPath(new URL("../../../protos", import.meta.url));
const to = fileURLToPath(new URL("../protos", import.meta.url));
rmSync(to, { recursive: true, force: true });
const todo = ["acm/v1/gateway.proto"];
const copied = new Set();
while (todo.length) {
  const name = todo.pop();
  if (copied.has(name)) continue;
  copied.add(name);
  mkdirSync(dirname(join(to, name)), { recursive: true });
  cpSync(join(from, name), join(to, name));
  for (const [, imported] of readFileSync(join(from, name), "utf8").matchAll(/^import "(acm\/v1\/\w+\.proto)";/gm)) {
    todo.push(imported);
  }
}
