#!/usr/bin/env node
/**
 * webutil: the Web Utility API from a terminal or CI. Exit codes: 0 nothing found, 1 broken links
 * (or a grade below --fail-on), 2 usage, 3 API or network error, 4 out of credits.
 */
import { Webutil, WebutilError } from '@webutil/client';
import { Command, CommanderError } from 'commander';
import { registerCommands } from './commands.js';
import { EXIT, UsageError } from './exit.js';
import { outputFor } from './output.js';

const program = new Command('webutil')
  .description('The Web Utility API: screenshots, PDFs, link checks, TLS and metadata scans, bookmark files')
  .option('--api-key <key>', 'API key (default: WEBUTIL_API_KEY)')
  .option('--base-url <url>', 'where the API is (default: WEBUTIL_BASE_URL)')
  .option('--json', 'print the answer as JSON (a summary still goes to stderr)')
  .option('--no-color', 'no colour (also when piped, or with NO_COLOR set)')
  .option('--retries <n>', 'retries of a 429 or 503 (after Retry-After)', (v) => Number(v), 3)
  .showHelpAfterError()
  .exitOverride()
  .configureOutput({ outputError: (text, write) => write(`webutil: ${text.replace(/^error: /, '')}`) });

let exitCode: number = EXIT.ok;
registerCommands(program, {
  client: () => {
    const options = program.opts<{ apiKey?: string; baseUrl?: string; retries: number }>();
    return new Webutil({
      ...(options.apiKey ? { apiKey: options.apiKey } : {}),
      ...(options.baseUrl ? { baseUrl: options.baseUrl } : {}),
      retries: options.retries,
      onRetry: ({ status, delayMs }) =>
        process.stderr.write(`webutil: ${status || 'network error'}, retrying in ${(delayMs / 1000).toFixed(1)}s\n`),
    });
  },
  output: () => {
    const options = program.opts<{ json?: boolean; color: boolean }>();
    return outputFor(Boolean(options.json), options.color);
  },
  exit: (code) => {
    exitCode = code;
  },
});
for (const command of program.commands.flatMap((c) => [c, ...c.commands])) command.exitOverride();
/** One clear line, and the exit code that says what kind of failure it was. */
function fail(err: unknown): number {
  if (err instanceof CommanderError) {
    // Help and version are not failures; commander has printed its line.
    return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
  }
  if (err instanceof UsageError) {
    process.stderr.write(`webutil: ${err.message}\n`);
    return EXIT.usage;
  }
  if (err instanceof WebutilError) {
    const where = err.status ? ` (${err.code}, ${err.status}${err.requestId ? `, request ${err.requestId}` : ''})` : '';
    process.stderr.write(`webutil: ${err.message}${where}\n`);
    return err.status === 402 ? EXIT.credits : EXIT.api;
  }
  process.stderr.write(`webutil: ${err instanceof Error ? err.message : String(err)}\n`);
  return EXIT.api;
}

try {
  await program.parseAsync(process.argv);
  process.exitCode = exitCode;
} catch (err) {
  process.exitCode = fail(err);
}
