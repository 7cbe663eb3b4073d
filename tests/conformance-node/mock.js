// Starts `plimsoll mock` for one test file: a scenario in a temporary directory, a port
// the OS picks, the first stdout line `listening http://ADDR`.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";

const ROOT = resolve(import.meta.dirname, "../..");
export const BIN = process.env.PLIMSOLL_BIN ?? join(ROOT, "target/release/plimsoll");

export async function startMock(scenario) {
  const dir = mkdtempSync(join(tmpdir(), "plimsoll-node-"));
  const path = join(dir, "scenario.toml");
  writeFileSync(path, scenario);
  const proc = spawn(BIN, ["mock", "--listen", "127.0.0.1:0", "--scenario", path, "--seed", "1"], {
    stdio: ["ignore", "pipe", "ignore"],
  });
  const first = await new Promise((ok, fail) => {
    const lines = createInterface({ input: proc.stdout });
    lines.once("line", ok);
    proc.once("exit", (code) => fail(new Error(`mock exited with ${code} before listening`)));
  });
  if (!first.startsWith("listening http://")) throw new Error(`mock did not start: ${first}`);
  const base = first.slice("listening ".length);
  return {
    base,
    async ledger() {
      return (await fetch(`${base}/plimsoll/ledger`)).json();
    },
    stop() {
      proc.kill("SIGTERM");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const marked = (session, text = "hello") =>
  `[[plimsoll session=${session} nonce=psn${"0".repeat(16)} turn=1]] ${text}`;
