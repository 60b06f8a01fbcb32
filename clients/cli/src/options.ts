/**
 * A command's options, from the contract: every query parameter and JSON body field of its
 * operation, as `--kebab-case` flags whose values commander hands back under the contract's names.
 */
import { OPERATIONS, type OperationOption } from '@webutil/client';
import { type Command, InvalidArgumentError, Option } from 'commander';

const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** The text of a command line as the contract's type. */
function parserOf(option: OperationOption): ((value: string, previous: unknown) => unknown) | undefined {
  const flag = `--${kebab(option.name)}`;
  const number = (value: string) => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n)) throw new InvalidArgumentError(`${flag} takes a number`);
    return n;
  };
  switch (option.kind) {
    case 'number':
      return option.choices ? undefined : number;
    case 'list':
      return (value, previous) => [...((previous as string[] | undefined) ?? []), ...value.split(',')];
    case 'numbers':
      return (value, previous) => [
        ...((previous as unknown[] | undefined) ?? []),
        ...value.split(',').map((item) => (/^\d+$/.test(item) ? Number(item) : item)),
      ];
    case 'size':
      return (value) => {
        const match = /^(\d+)x(\d+)$/.exec(value);
        if (!match) throw new InvalidArgumentError(`${flag} takes WIDTHxHEIGHT, e.g. 1280x800`);
        return { width: Number(match[1]), height: Number(match[2]) };
      };
    case 'map':
      return (value, previous) => {
        const at = value.indexOf(':');
        if (at < 1) throw new InvalidArgumentError(`${flag} takes "Name: value"`);
        return { ...(previous as object), [value.slice(0, at).trim()]: value.slice(at + 1).trim() };
      };
    case 'json':
      return (value) => {
        try {
          return JSON.parse(value);
        } catch {
          throw new InvalidArgumentError(`${flag} takes JSON, e.g. '{"top": "1cm"}'`);
        }
      };
    default:
      return undefined;
  }
}

/** Adds the options of `operationId` to `command`, skipping `skip` (the positional argument, the CLI's own). */
export function addContractOptions(command: Command, operationId: string, skip: readonly string[] = []): Command {
  const operation = OPERATIONS[operationId];
  if (!operation) throw new Error(`no operation ${operationId} in the contract`);
  const known = new Set(command.options.map((option) => option.attributeName()));
  for (const option of operation.options) {
    if (skip.includes(option.name) || known.has(option.name)) continue;
    const flag = `--${kebab(option.name)}`;
    const repeatable = ['list', 'numbers', 'map'].includes(option.kind) ? ' (repeatable, or comma-separated)' : '';
    if (option.kind === 'flag') {
      command.addOption(new Option(flag, option.description));
      command.addOption(new Option(`--no-${kebab(option.name)}`, `Sets ${option.name} false.`));
    } else {
      const made = new Option(`${flag} <${option.kind === 'size' ? 'WxH' : 'value'}>`, option.description + repeatable);
      if (option.choices) made.choices(option.choices.map(String));
      const parse = parserOf(option);
      if (option.kind === 'number' && option.choices) made.argParser((value: string) => Number(value));
      else if (parse) made.argParser(parse);
      command.addOption(made);
    }
  }
  return command;
}

/** The values commander parsed that belong to the operation, by the contract's names. */
export function contractValues(operationId: string, values: Record<string, unknown>): Record<string, unknown> {
  const operation = OPERATIONS[operationId];
  const picked: Record<string, unknown> = {};
  for (const option of operation?.options ?? []) {
    if (values[option.name] !== undefined) picked[option.name] = values[option.name];
  }
  return picked;
}
