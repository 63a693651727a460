import { test } from "node:test";
import assert from "node:assert/strict";
import { inPostingOrder, raises, type EventLike } from "./logorder.js";

const started = (button: number): EventLike => ({ event: { case: "handStarted", value: { setup: { button } } } });
const blind = (seat: number): EventLike => ({ event: { case: "blindPosted", value: { seat } } });
const ev = (c: string): EventLike => ({ event: { case: c, value: {} } });
const seats = (items: EventLike[]) => items.map((e) => (e.event.case === "blindPosted" ? `b${(e.event.value as { seat: number }).seat}` : e.event.case));

test("heads-up: the button's small blind is logged before the big", () => {
  // Seat 1 has the button (the small blind); the table emits seat 0's big blind first.
  const events = [started(1), ev("deckCommitted"), blind(0), blind(1), ev("holeCardsDealt")];
  assert.deepEqual(seats(inPostingOrder(events, (e) => e)), ["handStarted", "deckCommitted", "b1", "b0", "holeCardsDealt"]);
});

test("a full table: small blind after the button, then the big, across the wrap", () => {
  const events = [started(4), blind(0), blind(5)];
  assert.deepEqual(seats(inPostingOrder(events, (e) => e)), ["handStarted", "b5", "b0"]);
  const inOrder = [started(0), blind(1), blind(2)];
  assert.deepEqual(seats(inPostingOrder(inOrder, (e) => e)), ["handStarted", "b1", "b2"]);
});

test("a bet over a standing bet is a raise; the first bet of a street is not", () => {
  const events = [started(0), blind(1), blind(2), ev("betPlaced"), ev("playerCalled"), ev("streetStarted"), ev("betPlaced"), ev("betPlaced")];
  assert.deepEqual(raises(events), [false, false, false, true, false, false, false, true]);
});

test("the hand's start opens its log, before the deck commitment published just before it", () => {
  const events = [ev("deckCommitted"), started(0), blind(1), blind(2)];
  assert.deepEqual(seats(inPostingOrder(events, (e) => e)), ["handStarted", "deckCommitted", "b1", "b2"]);
});
