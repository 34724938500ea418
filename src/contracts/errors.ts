// What an answer other than success says, and how, shared by the API, the auth every HTTP surface runs and
// the agent (which tells zod's findings in the same sentences).
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { z } from 'zod';

/** An answer other than success: a status and one sentence a person can act on. */
export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    message: string,
  ) {
    super(message);
  }
}

/** The body of every refusal: `{"error": "<one sentence>"}` (the gateway's refusals are OpenAI's shape instead). */
export const errorBody = (message: string) => ({ error: message });

/** One sentence for the first problem zod found, naming the field. */
export function describeIssue(issue: z.core.$ZodIssue): string {
  const path = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.map((key) => `"${key}"`).join(', ');
    return `unknown field${issue.keys.length > 1 ? 's' : ''} ${keys}${path ? ` in ${path}` : ''}`;
  }
  // A union (`"owner": "<scope>" | ""`) is told by what its first choice found, unless it has a sentence of its own.
  if (issue.code === 'invalid_union' && issue.errors[0]?.[0] && issue.message === 'Invalid input') {
    const inner = issue.errors[0][0];
    return describeIssue({ ...inner, path: [...issue.path, ...inner.path] });
  }
  // zod 4 leaves the input out of issues: a missing field is told by its default message.
  if (issue.code === 'invalid_type' && issue.message.endsWith('received undefined')) {
    return `${path || 'the body'} is required`;
  }
  // A schema's own sentence ("must be a whole number") says more than the type it expected.
  if (issue.code === 'invalid_type' && !issue.message.startsWith('Invalid input')) {
    return `${path || 'the body'} ${issue.message}`;
  }
  if (issue.code === 'invalid_type') {
    return `${path || 'the body'} must be ${article(issue.expected === 'int' ? 'whole number' : issue.expected)}`;
  }
  return path ? `${path} ${issue.message}` : issue.message;
}

const article = (type: string) => (/^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`);
