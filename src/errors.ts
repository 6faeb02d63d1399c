/**
 * A request's work could not be finished on our side (a workflow it waited on failed: a lost
 * worker, a database down): never the caller's fault, and a retry later can succeed. The API
 * answers it 503 UNAVAILABLE.
 */
export class BackingServiceError extends Error {
  override readonly name = 'BackingServiceError';
}
