import type { z } from 'zod';

/**
 * The records of a result file: one JSON object, an array of them, or JSON lines (one object a line,
 * as `vllm bench serve --append-result` writes).
 */
export function parseJsonRecords(text: string, source: string): unknown[] {
  const trimmed = text.trim();
  if (trimmed === '') throw new Error(`${source} is empty`);
  try {
    const parsed: unknown = JSON.parse(trimmed);
    return Array.isArray(parsed) ? parsed : [parsed];
  } catch (whole) {
    const lines = trimmed.split('\n');
    if (lines.length < 2) throw new Error(`${source} is not JSON: ${(whole as Error).message}`);
    return lines.flatMap((line, i) => {
      if (line.trim() === '') return [];
      try {
        return [JSON.parse(line)];
      } catch (error) {
        throw new Error(
          `${source} is neither JSON nor JSON lines: line ${i + 1}: ${(error as Error).message}`,
        );
      }
    });
  }
}

/** A record checked against the shape a tool writes, or an error naming the record and the field. */
export function checkRecord<T extends z.ZodType>(schema: T, record: unknown, where: string): z.infer<T> {
  const parsed = schema.safeParse(record);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new Error(`${where}: ${issue.path.join('.') || 'the record'}: ${issue.message}`);
}
