import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { main } from '../../src/cli/main.ts';
import type { Env } from '../../src/core/config.ts';
import { repoRoot } from './shared.ts';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI in-process with its own environment and captured output. */
export async function runCli(argv: string[], env: Env): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, {
    env,
    out: (t) => {
      stdout += t.endsWith('\n') ? t : `${t}\n`;
    },
    err: (t) => {
      stderr += t.endsWith('\n') ? t : `${t}\n`;
    },
  });
  return { code, stdout, stderr };
}

/** Spawns `node bin/platform.js …` as a user would, with only the given environment plus PATH and HOME. */
export function spawnPlatform(argv: string[], env: Env): ChildProcess {
  return spawn(process.execPath, [join(repoRoot, 'bin', 'platform.js'), ...argv], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Collects a child's output until `predicate` matches its stdout, or fails after `timeoutMs`. */
export function waitForOutput(
  child: ChildProcess,
  predicate: (stdout: string) => boolean,
  timeoutMs = 30_000,
): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => reject(new Error(`timed out waiting for output; stdout: ${stdout}\nstderr: ${stderr}`)), timeoutMs);
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (predicate(stdout)) {
        clearTimeout(timer);
        resolve({ stdout, stderr });
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`process exited with ${code}; stdout: ${stdout}\nstderr: ${stderr}`));
    });
  });
}

/** Resolves with the exit code (and output gathered after the call). */
export function waitForExit(child: ChildProcess, timeoutMs = 30_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => reject(new Error('timed out waiting for exit')), timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
