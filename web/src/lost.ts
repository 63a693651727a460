// A session the servers no longer know (signed out elsewhere, or the servers restarted with
// new dev-mode secrets): any screen whose lobby or history call is refused UNAUTHENTICATED
// reports it here, and the page (app.tsx) clears the local session and shows the sign-in
// screen, saying so, instead of a half-signed-in screen. (A refused access token that only
// expired is renewed by session.ts first; a seat token's refusals are the table's own.)
import { codeOf } from "./api";
import { errorText } from "./errors";

const listeners = new Set<(why: string) => void>();

/** Calls `f` with the refusal's sentence whenever a session is reported lost; returns the
 * unsubscribe. */
export function onSessionLost(f: (why: string) => void): () => void {
  listeners.add(f);
  return () => void listeners.delete(f);
}

/** Reports `err` if it says the session is gone; true then (the caller shows nothing more). */
export function reportIfLost(err: unknown): boolean {
  if (codeOf(err) !== "unauthenticated") return false;
  const why = errorText(err);
  listeners.forEach((f) => f(why));
  return true;
}
