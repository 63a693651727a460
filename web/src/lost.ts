// A session the servers no longer know (signed out elsewhere, or the servers restarted with
// new dev-mode secrets): any screen whose lobby or history call is refused UNAUTHENTICATED
// reports it here, and the page (app.tsx) clears the local session and shows the sign-in
// screen, saying so, instead of a half-signed-in screen. (A refused access token that only
// expired is renewed by session.ts first; a seat token's refusals are the table's own.)
import { codeOf } from "./api";

const listeners = new Set<(err: unknown) => void>();

/** Calls `f` with the refusal whenever a session is reported lost (its sentence is made where it
 * is shown, in the page's language then); returns the unsubscribe. */
export function onSessionLost(f: (err: unknown) => void): () => void {
  listeners.add(f);
  return () => void listeners.delete(f);
}

/** Reports `err` if it says the session is gone; true then (the caller shows nothing more). */
export function reportIfLost(err: unknown): boolean {
  if (codeOf(err) !== "unauthenticated") return false;
  listeners.forEach((f) => f(err));
  return true;
}
