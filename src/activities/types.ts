import type { createActivities } from './index.ts';

/** The activities as the workflow calls them. Types only, so the workflow sandbox may import this file. */
export type Activities = ReturnType<typeof createActivities>;
export type { Reserved } from './index.ts';
