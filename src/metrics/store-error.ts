import postgres from 'postgres';
import { isConnectionError, StoreUnavailable } from '../store/db.ts';

/** A failure of the store itself (unreachable, or refusing a statement), not of the caller's input. */
export const isStoreError = (error: unknown): boolean =>
  error instanceof StoreUnavailable || error instanceof postgres.PostgresError || isConnectionError(error);
