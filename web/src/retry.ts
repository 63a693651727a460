// Request ids for retries. Every mutating call is idempotent per request id, so a retry of
// the same request must send the same id: a JoinLounge that timed out or met UNAVAILABLE may
// have taken the seat (and held the buy-in) on the server; sent again under a new id it would
// hold a second buy-in. The id of a request is kept until the request gets a definite answer
// (success, or a refusal that says what happened), then forgotten, so the next, new request
// gets a new id. Pure (no imports), so `npm test` runs it under Node.

/** Connect codes (as `codeOf` names them) after which the request may or may not have been
 * done: the same request must be retried under the same id. */
const UNCERTAIN = new Set(["unavailable", "deadline_exceeded", "unknown", "canceled", "internal", "aborted", "data_loss"]);

/** Whether an answer settles the request: a success (code ""), or a refusal whose code says
 * the server decided. An uncertain code does not, even with a reason: the lobby's
 * `UNAVAILABLE` `TABLES_UNAVAILABLE` to a join means "the outcome is not known yet: the chips
 * stay held, retry with the same request_id" (docs/api.md). */
export function definite(code: string, _reason = ""): boolean {
  return code === "" || !UNCERTAIN.has(code);
}

export interface IdStore {
  get(key: string): string | null;
  set(key: string, id: string): void;
  remove(key: string): void;
}

/** In memory (a test, or a browser whose sessionStorage is unavailable). */
export function memoryStore(): IdStore {
  const m = new Map<string, string>();
  return { get: (k) => m.get(k) ?? null, set: (k, v) => void m.set(k, v), remove: (k) => void m.delete(k) };
}

/** One request id per pending request, keyed by what makes two requests "the same". */
export class PendingIds {
  constructor(
    private readonly store: IdStore,
    private readonly fresh: () => string,
  ) {}

  /** The id for the request `key`: the one a retry must reuse, else a new one. */
  idFor(key: string): string {
    const kept = this.store.get(key);
    if (kept) return kept;
    const id = this.fresh();
    this.store.set(key, id);
    return id;
  }

  /** Tells the request's answer (`code` "" for a success); a definite one forgets its id. */
  answered(key: string, code: string, reason = ""): void {
    if (definite(code, reason)) this.store.remove(key);
  }
}

/** What makes two joins the same request: the player, the lounge and the buy-in
 * (JoinLounge picks the seat). */
export function joinKey(playerId: string, loungeId: string, buyIn: bigint, waitForBigBlind = false): string {
  return `join:${playerId}:${loungeId}:${buyIn}${waitForBigBlind ? ":bb" : ""}`;
}

/** The wait before a table's stream is opened again after it failed or ended, given the last
 * wait (0: it was live): 0.5 s doubling to 8 s; after a refusal for load (RESOURCE_EXHAUSTED:
 * too many streams, a rate limit) at least 5 s, doubling to a minute, so that the retries do
 * not add to the load they were refused for. */
export function streamWait(lastMs: number, exhausted: boolean): number {
  const [first, most] = exhausted ? [5000, 60000] : [500, 8000];
  return Math.min(Math.max(lastMs * 2, first), most);
}

/** The pause before an action that met UNAVAILABLE is sent once more (the table may be
 * moving to another instance, which the next call finds). */
export const ACTION_RETRY_MS = 400;

/** ``send`` (one request, its id fixed inside it), and once more after ``delayMs`` if the
 * first attempt ended ``unavailable`` (as ``codeOf`` names codes): the same id, so an action
 * the server did take is answered, not taken twice. Any other failure, or a second
 * UNAVAILABLE, is thrown. */
export async function sendRetriedOnce<T>(
  send: () => Promise<T>,
  codeOf: (err: unknown) => string,
  wait: (ms: number) => Promise<unknown>,
  delayMs = ACTION_RETRY_MS,
): Promise<T> {
  try {
    return await send();
  } catch (err) {
    if (codeOf(err) !== "unavailable") throw err;
    await wait(delayMs);
    return await send();
  }
}
