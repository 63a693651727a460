// The bet size starts over when the legal actions change; typed amounts, shortcuts and
// pre-actions.
import { test } from "node:test";
import assert from "node:assert/strict";
import { actionsKey, parseAmount, shortcutOf, resolvePreAction, clamp, outOfChips, CHECK, CALL, FOLD, type Legal } from "./betting.js";

const raise = (minTo: bigint, maxTo: bigint): Legal => ({ type: 5, minTo, maxTo, amount: 0n });
const bet = (minTo: bigint, maxTo: bigint): Legal => ({ type: 4, minTo, maxTo, amount: 0n });

test("the bar's key changes on a new street, a new turn or a raise in between", () => {
  const preflop = actionsKey("h1", 1, 10n, [raise(20n, 500n)]);
  assert.notEqual(actionsKey("h1", 2, 0n, [bet(10n, 480n)]), preflop, "a new street");
  assert.notEqual(actionsKey("h1", 1, 40n, [raise(70n, 500n)]), preflop, "raised meanwhile");
  assert.notEqual(actionsKey("h2", 1, 10n, [raise(20n, 500n)]), preflop, "a new hand");
  assert.equal(actionsKey("h1", 1, 10n, [raise(20n, 500n)]), preflop, "the same turn re-rendered keeps its size");
});

test("typed amounts", () => {
  assert.equal(parseAmount("250"), 250n);
  assert.equal(parseAmount("1,250"), 1250n);
  assert.equal(parseAmount("1 250"), 1250n);
  assert.equal(parseAmount("1\u00a0250"), 1250n);
  assert.equal(parseAmount(""), null);
  assert.equal(parseAmount("12a"), null);
  assert.equal(parseAmount("-5"), null);
  assert.equal(parseAmount("9".repeat(16)), null);
  assert.equal(clamp(5n, 10n, 100n), 10n);
  assert.equal(clamp(500n, 10n, 100n), 100n);
});

test("shortcuts: not while typing, not with modifiers", () => {
  const none = { ctrl: false, alt: false, meta: false };
  assert.equal(shortcutOf("f", { tagName: "BODY" }, none), "fold");
  assert.equal(shortcutOf("C", { tagName: "BUTTON" }, none), "call");
  assert.equal(shortcutOf("r", { tagName: "DIV" }, none), "raise");
  assert.equal(shortcutOf("f", { tagName: "INPUT" }, none), null);
  assert.equal(shortcutOf("f", { tagName: "TEXTAREA" }, none), null);
  assert.equal(shortcutOf("f", { tagName: "DIV", isContentEditable: true }, none), null);
  assert.equal(shortcutOf("r", { tagName: "BODY" }, { ...none, ctrl: true }), null);
  assert.equal(shortcutOf("x", { tagName: "BODY" }, none), null);
});

test("pre-actions: applied at the turn, cleared by another hand or (check) a bet", () => {
  const cf = { kind: "checkFold" as const, handId: "h1", bet: 0n };
  assert.deepEqual(resolvePreAction(cf, "h1", 0n, []), { act: "keep" });
  assert.deepEqual(resolvePreAction(cf, "h1", 0n, [CHECK, 4]), { act: "check" });
  assert.deepEqual(resolvePreAction(cf, "h1", 20n, [FOLD, CALL, 5]), { act: "fold" });
  assert.deepEqual(resolvePreAction(cf, "h2", 0n, [CHECK]), { act: "clear" });
  const check = { kind: "check" as const, handId: "h1", bet: 0n };
  assert.deepEqual(resolvePreAction(check, "h1", 20n, []), { act: "clear" });
  assert.deepEqual(resolvePreAction(check, "h1", 0n, [CHECK]), { act: "check" });
  const any = { kind: "callAny" as const, handId: "h1", bet: 0n };
  assert.deepEqual(resolvePreAction(any, "h1", 400n, [FOLD, CALL]), { act: "call" });
  assert.deepEqual(resolvePreAction(any, "h1", 0n, [CHECK, 4]), { act: "check" });
});

test("out of chips: nothing at the table and nothing to come back from the hand", () => {
  assert.equal(outOfChips(0n, null, false), true, "between hands, at 0");
  assert.equal(outOfChips(0n, null, true), true, "a hand dealt without the seat");
  assert.equal(outOfChips(0n, { stack: 0n, bet: 0n, allIn: true }, true), false, "all-in: may win");
  assert.equal(outOfChips(0n, { stack: 0n, bet: 0n, allIn: true }, false), true, "the hand is over, lost");
  assert.equal(outOfChips(0n, { stack: 40n, bet: 0n, allIn: false }, true), false);
  assert.equal(outOfChips(120n, null, false), false);
});
