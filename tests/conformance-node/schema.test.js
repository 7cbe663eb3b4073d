// An editor's view of the files `plimsoll init` writes: Taplo (@taplo/cli, the TOML
// toolkit VS Code's Even Better TOML, Zed and Helix are built on) reads the `#:schema`
// line on each file's first line, finds the schema beside it, finds the files valid, and
// flags a misspelt key by name.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { BIN } from "./mock.js";

const TAPLO = join(dirname(fileURLToPath(import.meta.url)), "node_modules", ".bin", "taplo");

test("Taplo reads the schema line init writes and flags a misspelt key", () => {
  const dir = mkdtempSync(join(tmpdir(), "plimsoll-taplo-"));
  try {
    execFileSync(BIN, ["init", "--command", "python app.py --port {{port}}", "--dir", dir], { stdio: "pipe" });
    const ok = spawnSync(TAPLO, ["check", "plimsoll.toml", "session.toml"], { cwd: dir, encoding: "utf8" });
    assert.equal(ok.status, 0, ok.stdout + ok.stderr);
    const session = join(dir, "session.toml");
    writeFileSync(session, readFileSync(session, "utf8").replace(/^turns = 3/m, "turms = 3"));
    const bad = spawnSync(TAPLO, ["check", "session.toml"], { cwd: dir, encoding: "utf8" });
    assert.notEqual(bad.status, 0);
    assert.match(bad.stdout + bad.stderr, /'turms' was unexpected/);
    // Without the schema line Taplo has nothing to check the key against: the line is
    // what made the difference.
    writeFileSync(session, readFileSync(session, "utf8").replace(/^#:schema .*\n/, ""));
    const blind = spawnSync(TAPLO, ["check", "session.toml"], { cwd: dir, encoding: "utf8" });
    assert.equal(blind.status, 0, blind.stdout + blind.stderr);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
