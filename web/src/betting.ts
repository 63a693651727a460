// The action bar's decisions that need no screen: when the bet size starts over, what a typed
// amount means, which key does what, and which pre-action (chosen before the seat's turn)
// becomes which action when the turn comes. Pure (no imports), so `npm test` runs it.

/** What the bar needs of a legal action (the generated LegalAction has these fields). */
export interface Legal {
  type: number;
  minTo: bigint;
  maxTo: bigint;
  amount: bigint;
}

/**
 * A key that changes whenever the legal actions change (a new street, a new turn, a raise
 * in between): the bar is re-made under it, so the bet size starts again at the new minimum
 * instead of carrying the last street's amount over.
 */
export function actionsKey(handId: string, street: number, currentBet: bigint, legal: Legal[]): string {
  const acts = legal.map((a) => `${a.type}:${a.minTo}:${a.maxTo}:${a.amount}`).join(",");
  return `${handId}|${street}|${currentBet}|${acts}`;
}

export function clamp(v: bigint, lo: bigint, hi: bigint): bigint {
  return v < lo ? lo : v > hi ? hi : v;
}

/** A typed amount: digits only (group separators and spaces ignored), or null when it is
 * not a number; out-of-range amounts are clamped to [lo, hi] by the caller's clamp. */
export function parseAmount(text: string): bigint | null {
  const digits = text.replace(/[\s.,'\u00a0\u202f_]/g, "");
  if (!/^\d{1,15}$/.test(digits)) return null;
  return BigInt(digits);
}

export type Shortcut = "fold" | "check" | "call" | "raise" | "allIn" | "min" | "halfPot" | "pot";

/** The keyboard shortcuts (docs/web.md): f fold, c check or call, r bet or raise, a all-in,
 * and 1-3 for the min, half-pot and pot sizes. */
export const SHORTCUTS: Record<string, Shortcut> = { f: "fold", c: "call", k: "check", r: "raise", b: "raise", a: "allIn", "1": "min", "2": "halfPot", "3": "pot" };

/** The shortcut of a key press, or null: none while the player types in a field, none with
 * a modifier (the browser's own shortcuts stay theirs). */
export function shortcutOf(key: string, target: { tagName?: string; isContentEditable?: boolean } | null, mods: { ctrl: boolean; alt: boolean; meta: boolean }): Shortcut | null {
  if (mods.ctrl || mods.alt || mods.meta) return null;
  const tag = (target?.tagName ?? "").toUpperCase();
  if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || target?.isContentEditable) return null;
  return SHORTCUTS[key.toLowerCase()] ?? null;
}

/** A choice made before the seat's turn. "checkFold": check if possible, else fold.
 * "check": check if possible (forgotten when a bet comes in). "callAny": call whatever is
 * bet (or check). Each is for one hand; made at `bet` (the hand's current bet then). */
export interface PreAction {
  kind: "checkFold" | "check" | "callAny";
  handId: string;
  bet: bigint;
}

export type Resolved = { act: "check" | "fold" | "call" } | { act: "keep" } | { act: "clear" };

/** Action types, as in poker.v1.ActionType. */
export const FOLD = 1;
export const CHECK = 2;
export const CALL = 3;

/**
 * What a pre-action does now: when it is the seat's turn (`legal` not empty), the action to
 * send; before then, "keep" or "clear" (another hand; a "check" after a bet came in).
 */
export function resolvePreAction(pre: PreAction, handId: string, currentBet: bigint, legal: number[]): Resolved {
  if (pre.handId !== handId) return { act: "clear" };
  if (pre.kind === "check" && currentBet !== pre.bet) return { act: "clear" };
  if (legal.length === 0) return { act: "keep" };
  const can = (t: number) => legal.includes(t);
  if (pre.kind === "checkFold") return can(CHECK) ? { act: "check" } : can(FOLD) ? { act: "fold" } : { act: "clear" };
  if (pre.kind === "check") return can(CHECK) ? { act: "check" } : { act: "clear" };
  return can(CALL) ? { act: "call" } : can(CHECK) ? { act: "check" } : { act: "clear" };
}

/**
 * Whether the seat is out of chips for good (until it buys in again): nothing at the table
 * and nothing that may still come back from a hand in play (an all-in seat may yet win).
 * Such a seat is dealt no more hands, so the table shows the way on instead of waiting.
 */
export function outOfChips(tableStack: bigint, inHand: { stack: bigint; bet: bigint; allIn: boolean } | null, handLive: boolean): boolean {
  if (tableStack > 0n) return false;
  return !(handLive && inHand && (inHand.allIn || inHand.stack + inHand.bet > 0n));
}
