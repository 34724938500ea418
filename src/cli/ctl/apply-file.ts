import { parseAllDocuments } from 'yaml';
import type { Context } from './command.ts';
import { Failed } from './errors.ts';

/** `warning: ...` lines for the warnings an answer carries. */
export const warningLines = (warnings: string[] | undefined) => (warnings ?? []).map((w) => `warning: ${w}`);

/** The objects of a YAML file: one document each (`---` between them), each with its `name`. */
function namedDocuments(text: string, path: string): { name: string; spec: Record<string, unknown> }[] {
  return parseAllDocuments(text).map((document, i) => {
    if (document.errors.length > 0) throw new Failed(`${path}: ${document.errors[0].message}`);
    const { name, ...spec } = (document.toJS() ?? {}) as Record<string, unknown>;
    if (typeof name !== 'string' || name === '') throw new Failed(`${path}: document ${i + 1} has no name`);
    return { name, spec };
  });
}

/**
 * `model apply`, `runtime apply`: PUT each document of the file at `pathOf(name)`, then say what each
 * became (`model chat created`) and the warnings its answer carried.
 */
export async function applyFile(ctx: Context, file: string, noun: string, pathOf: (name: string) => string) {
  const applied: { name: string; created: boolean; warnings?: string[] }[] = [];
  for (const { name, spec } of namedDocuments(ctx.readFile(file), file)) {
    const { status, body } = await ctx.api().call<{ warnings?: string[] }>('PUT', pathOf(name), spec);
    applied.push({ name, created: status === 201, ...(body.warnings ? { warnings: body.warnings } : {}) });
  }
  ctx.out.show(applied, () =>
    applied
      .flatMap((a) => [`${noun} ${a.name} ${a.created ? 'created' : 'updated'}`, ...warningLines(a.warnings)])
      .join('\n'),
  );
}
