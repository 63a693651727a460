// The live view folded from the stream (fold.ts): gaps and missing ViewChanges are told
// apart from events it folds; chips, cards, seats and time-outs move as the server's fold
// moves them; what the rules decide comes from the ViewChange. (The browser test
// tests/e2e/web/test_client_fold_browser.py checks whole random hands against GetTableView.)
import { test } from "node:test";
import assert from "node:assert/strict";
import { foldEvent, type Folded } from "./fold.js";
import type { StoredEvent, Card } from "./gen/poker/events/v1/events_pb";
import type { TableView, HandView, Seat } from "./gen/poker/v1/table_pb";
import type { ViewChange } from "./gen/poker/v1/table_service_pb";

const code = (n: number): Card => ({ kind: { case: "code", value: n } }) as Card;
const hidden = (): Card => ({ kind: { case: "hidden", value: true } }) as Card;

function seat(n: number, stack = 0n, name = ""): Seat {
  return {
    $typeName: "poker.v1.Seat",
    seat: n,
    status: name ? 2 : 1,
    playerId: name ? `p-${name}` : "",
    displayName: name,
    stack,
    aiLevel: 0,
    consecutiveTimeouts: 0,
    waitingForBigBlind: false,
  } as never;
}

function table(seq: bigint): Folded {
  const view = {
    $typeName: "poker.v1.TableView",
    viewerSeat: 0,
    table: { $typeName: "poker.v1.Table", tableId: "t", name: "t", state: 1, sequence: seq, seats: [seat(0, 1000n, "Ann"), seat(1, 1000n, "Bob"), seat(2)], handsPlayed: 0 },
  } as unknown as TableView;
  return { view };
}

function event(sequence: bigint, kind: string, value: object): StoredEvent {
  return { sequence, event: { case: kind, value } } as unknown as StoredEvent;
}

function change(init: Partial<ViewChange> = {}): ViewChange {
  return { tableState: 2, pots: [], legalActions: [], ...init } as ViewChange;
}

/** Folds `events` (numbered from the view's sequence on), each with `changes[i]` or an empty one. */
function run(start: Folded, events: [string, object][], changes: Record<number, ViewChange> = {}): Folded {
  let state = start;
  events.forEach(([kind, value], i) => {
    const seq = (state.view.table?.sequence ?? 0n) + 1n;
    const next = foldEvent(state, event(seq, kind, value), changes[i] ?? change());
    assert.equal(typeof next, "object", `${kind} at ${seq}: ${String(next)}`);
    state = next as Folded;
  });
  return state;
}

const hand = (f: Folded): HandView => f.view.hand as HandView;
const setup = { handId: "t:1", publicId: "ab", variant: 1, button: 1, seats: [{ seat: 0, stack: 1000n, blind: 10n }, { seat: 1, stack: 1000n, blind: 5n }] };

test("a gap, an event already in the view and an event without its ViewChange are not folded", () => {
  const start = table(10n);
  assert.equal(foldEvent(start, event(12n, "playerSatIn", { seat: 0 }), change()), "gap");
  assert.equal(foldEvent(start, event(10n, "playerSatIn", { seat: 0 }), change()), "stale");
  assert.equal(foldEvent(start, event(11n, "playerSatIn", { seat: 0 }), undefined), "no-change");
});

test("a Hold'em hand: blinds, cards, bets, the board, the pot and the stacks after it", () => {
  const legal = [{ type: 3, amount: 5n, minTo: 0n, maxTo: 0n, maxDiscards: 0 }];
  const pot = [{ amount: 20n, eligible: [0, 1] }] as ViewChange["pots"];
  const start = table(1n);
  const before = structuredClone(start.view);
  let f = run(start, [
    ["handStarted", { setup }],
    ["blindPosted", { seat: 1, amount: 5n }],
    ["blindPosted", { seat: 0, amount: 10n }],
    ["holeCardsDealt", { seat: 1, cards: [hidden(), hidden()] }],
    ["holeCardsDealt", { seat: 0, cards: [code(51), code(50)] }],
  ], { 4: change({ toAct: 1, pots: [] }) });
  assert.deepEqual(start.view, before, "the view folded from is left as it was");
  let h = hand(f);
  assert.equal(h.currentBet, 10n);
  assert.equal(h.toAct, 1);
  assert.deepEqual(h.seats.map((s) => [s.seat, s.stack, s.bet, s.committed]), [[0, 990n, 10n, 10n], [1, 995n, 5n, 5n]]);
  assert.deepEqual(f.view.table?.seats.map((s) => s.stack), [990n, 995n, 0n], "a dealt-in seat shows its chips behind");
  assert.equal(h.seats[1].cards.length, 2);
  f = run(f, [
    ["playerCalled", { seat: 1, amount: 5n }],
    ["playerChecked", { seat: 0 }],
    ["streetStarted", { street: 2, cards: [code(0), code(4), code(8)] }],
    ["betPlaced", { seat: 1, to: 990n, amount: 990n, allIn: true, full: true }],
  ], { 2: change({ pots: pot, toAct: 1 }), 3: change({ pots: pot, toAct: 0, legalActions: legal as never }) });
  h = hand(f);
  assert.equal(h.street, 2);
  assert.equal(h.board.length, 3);
  assert.equal(h.currentBet, 990n);
  assert.deepEqual(h.pots.map((p) => p.amount), [20n]);
  assert.equal(h.seats[1].allIn, true);
  assert.equal(h.legalActions.length, 1, "the seat to act gets its legal actions from the ViewChange");
  f = run(f, [
    ["playerFolded", { seat: 0 }],
    ["uncalledBetReturned", { seat: 1, amount: 990n }],
    ["potAwarded", { index: 0, amount: 20n, shares: [{ seat: 1, amount: 20n }] }],
    ["handEnded", { stacks: [{ seat: 0, stack: 990n }, { seat: 1, stack: 1010n }] }],
  ], { 3: change({ tableState: 2 }) });
  h = hand(f);
  assert.equal(h.street, 9, "the hand stays in the view, complete");
  assert.equal(h.toAct, undefined);
  assert.deepEqual(h.legalActions, []);
  assert.deepEqual(h.seats.map((s) => [s.stack, s.bet, s.allIn, s.folded]), [[990n, 0n, false, true], [1010n, 0n, false, false]]);
  assert.deepEqual(f.view.table?.seats.map((s) => s.stack), [990n, 1010n, 0n]);
  assert.equal(f.view.table?.handsPlayed, 1);
  assert.equal(f.view.table?.sequence, 14n);
});

test("the draw: the seat's own discards go, the drawn cards come; others' stay unseen", () => {
  const draw = { ...setup, variant: 2, seats: [{ seat: 0, stack: 100n, blind: 0n }, { seat: 1, stack: 100n, blind: 0n }] };
  const f = run(table(1n), [
    ["handStarted", { setup: draw }],
    ["holeCardsDealt", { seat: 1, cards: [hidden(), hidden(), hidden(), hidden(), hidden()] }],
    ["holeCardsDealt", { seat: 0, cards: [1, 2, 3, 4, 5].map(code) }],
    ["cardsDrawn", { seat: 1, discarded: [hidden()], drawn: [hidden()] }],
    ["cardsDrawn", { seat: 0, discarded: [code(2), code(4)], drawn: [code(40), code(41)] }],
  ]);
  const h = hand(f);
  assert.equal(h.street, 5, "Draw starts at the first betting round");
  assert.equal(h.currentBet, 0n);
  assert.deepEqual(h.seats[0].cards.map((c) => c.kind.value), [1, 3, 5, 40, 41]);
  assert.equal(h.seats[0].drawnCount, 2);
  assert.deepEqual(h.seats[1].cards.map((c) => c.kind.case), ["hidden", "hidden", "hidden", "hidden", "hidden"]);
  assert.equal(h.seats[1].drawnCount, 1);
});

test("seats come, sit out, sit in, wait for the big blind, add chips and leave", () => {
  const f = run(table(1n), [
    ["playerSeated", { seat: 2, playerId: "p-Cy", displayName: "Cy", stack: 300n, aiLevel: 2 }],
    ["playerSatOut", { seat: 2, reason: 1 }],
    ["playerSatIn", { seat: 2 }],
    ["playerWaitingForBigBlind", { seat: 2 }],
    ["chipsAdded", { seat: 2, amount: 50n }],
    ["playerLeft", { seat: 0, stack: 1000n }],
  ]);
  const [ann, , cy] = f.view.table?.seats ?? [];
  assert.deepEqual([cy.status, cy.displayName, cy.stack, cy.aiLevel, cy.waitingForBigBlind], [2, "Cy", 350n, 2, true]);
  assert.deepEqual([ann.status, ann.displayName, ann.stack], [1, "", 0n]);
});

test("a seat a hand leaves with no chips is busted since that hand; chips added or leaving clear it", () => {
  let f = run(table(1n), [
    ["handStarted", { setup }],
    ["handEnded", { stacks: [{ seat: 0, stack: 0n }, { seat: 1, stack: 2000n }] }],
  ]);
  assert.deepEqual(f.view.table?.seats.map((s) => s.bustedHand ?? 0), [1, 0, 0], "hand 1 (t:1) left seat 0 at 0");
  assert.equal(f.view.table?.handsPlayed, 1);
  f = run(f, [["chipsAdded", { seat: 0, amount: 500n }]]);
  assert.equal(f.view.table?.seats[0].bustedHand, 0, "chips added: no longer busted");
  f = run(f, [
    ["handStarted", { setup: { ...setup, handId: "t:2" } }],
    ["handEnded", { stacks: [{ seat: 0, stack: 0n }, { seat: 1, stack: 2500n }] }],
  ]);
  assert.deepEqual(f.view.table?.seats.map((s) => s.bustedHand ?? 0), [2, 0, 0], "a later bust names the later hand");
  f = run(f, [["playerLeft", { seat: 0, stack: 0n, busted: true }]]);
  assert.deepEqual([f.view.table?.seats[0].status, f.view.table?.seats[0].bustedHand], [1, 0]);
});

test("a timed-out seat's passive action keeps its count of time-outs; its own action clears it", () => {
  let f = run(table(1n), [["handStarted", { setup }], ["actionTimedOut", { seat: 1 }]]);
  assert.equal(f.timingOut, 1);
  f = run(f, [["playerChecked", { seat: 1 }]]);
  assert.equal(f.timingOut, undefined);
  assert.equal(f.view.table?.seats[1].consecutiveTimeouts, 1);
  f = run(f, [["playerChecked", { seat: 1 }]]);
  assert.equal(f.view.table?.seats[1].consecutiveTimeouts, 0);
});
