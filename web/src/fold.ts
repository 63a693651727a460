// The live table's view, kept current from the watch stream alone (issue #23): the view at
// sequence S and the event S+1 (redacted for this watcher) with its `ViewChange` give the
// view at S+1, equal to what GetTableView would return then. The event says what happened
// (chips moved, cards dealt, seats taken); the `ViewChange` says what the rules made of it
// (whose turn, its deadline, the pots, whether the table plays, and the seat to act its legal
// actions), so no rule is written again here: this is bookkeeping only, the same as the
// server's fold (felt.core.rules.fold, felt.core.table.aggregate) without its decisions.
// Pure: no I/O, no clock.
// Only types come from the generated code (its modules do not load in `npm test`'s Node):
// the few enum values used are named below, with the numbers protos/ gives them.
import type { StoredEvent, Card, Street, Variant } from "./gen/poker/events/v1/events_pb";
import type { HandSeat, HandView, Seat, SeatStatus, TableView } from "./gen/poker/v1/table_pb";
import type { ViewChange } from "./gen/poker/v1/table_service_pb";

const PREFLOP = 1 as Street; // poker.events.v1.Street
const FIRST_BET = 5 as Street;
const COMPLETE = 9 as Street;
const DRAW5 = 2 as Variant; // poker.events.v1.Variant
const EMPTY = 1 as SeatStatus; // poker.v1.SeatStatus
const SITTING_IN = 2 as SeatStatus;
const SITTING_OUT = 3 as SeatStatus;

/** What the fold keeps besides the view: the seat whose time-out is being played (its next
 * action is the passive one the server takes for it, which does not end its run of
 * time-outs). Between two batches of events it is always unset. */
export interface Folded {
  view: TableView;
  timingOut?: number;
}

/** Why an event could not be folded: the client asks GetTableView instead. */
export type Unfolded = "gap" | "stale" | "no-change";

/** The view after `event`, or why it cannot be known from the stream: the event skips a
 * sequence ("gap"), is one the view already includes ("stale"), or comes without its
 * `ViewChange` (replayed from history to a resumed stream: "no-change"). */
export function foldEvent(state: Folded, event: StoredEvent, change: ViewChange | undefined): Folded | Unfolded {
  const at = state.view.table?.sequence ?? 0n;
  if (event.sequence <= at) return "stale";
  if (event.sequence !== at + 1n) return "gap";
  if (!change) return "no-change";
  const view = structuredClone(state.view); // messages are plain objects
  const next: Folded = { view };
  const timingOut = applyEvent(view, event, state.timingOut);
  if (timingOut !== undefined) next.timingOut = timingOut;
  applyChange(view, change);
  return next;
}

// The seat actions that end a seat's run of time-outs when it takes them itself
// (felt.core.table.aggregate.SEAT_ACTIONS).
const SEAT_ACTIONS = new Set(["playerFolded", "playerChecked", "playerCalled", "betPlaced", "cardsDrawn"]);

function newSeat(init: Partial<Seat> & { seat: number }): Seat {
  return {
    $typeName: "poker.v1.Seat",
    status: EMPTY,
    playerId: "",
    displayName: "",
    stack: 0n,
    aiLevel: 0 as Seat["aiLevel"],
    consecutiveTimeouts: 0,
    waitingForBigBlind: false,
    bustedHand: 0,
    ...init,
  };
}

function newHandSeat(seat: number, stack: bigint): HandSeat {
  return { $typeName: "poker.v1.HandSeat", seat, stack, bet: 0n, committed: 0n, folded: false, allIn: stack === 0n, cards: [], drawnCount: 0 };
}

function tableSeat(view: TableView, n: number): Seat | undefined {
  return view.table?.seats.find((s) => s.seat === n);
}

function handSeat(hand: HandView | undefined, n: number): HandSeat | undefined {
  return hand?.seats.find((s) => s.seat === n);
}

function running(hand: HandView | undefined): hand is HandView {
  return hand !== undefined && hand.street !== COMPLETE;
}

/** Folds `event` into `view` in place; returns the seat whose time-out is being played. */
function applyEvent(view: TableView, e: StoredEvent, timingOut: number | undefined): number | undefined {
  const table = view.table!;
  table.sequence = e.sequence;
  const ev = e.event;
  if (SEAT_ACTIONS.has(ev.case ?? "")) {
    const n = (ev.value as { seat: number }).seat;
    if (timingOut === n) timingOut = undefined;
    else {
      const s = tableSeat(view, n);
      if (s) s.consecutiveTimeouts = 0;
    }
  }
  const hand = view.hand;
  switch (ev.case) {
    case "playerSeated": {
      const v = ev.value;
      const i = table.seats.findIndex((s) => s.seat === v.seat);
      const seat = newSeat({ seat: v.seat, status: SITTING_IN, playerId: v.playerId, displayName: v.displayName, stack: v.stack, aiLevel: v.aiLevel });
      if (i >= 0) table.seats[i] = seat;
      break;
    }
    case "playerLeft": {
      const i = table.seats.findIndex((s) => s.seat === ev.value.seat);
      if (i >= 0) table.seats[i] = newSeat({ seat: ev.value.seat });
      break;
    }
    case "playerSatOut": {
      const s = tableSeat(view, ev.value.seat);
      if (s) Object.assign(s, { status: SITTING_OUT, consecutiveTimeouts: 0, waitingForBigBlind: false });
      break;
    }
    case "playerSatIn": {
      const s = tableSeat(view, ev.value.seat);
      if (s) Object.assign(s, { status: SITTING_IN, consecutiveTimeouts: 0 });
      break;
    }
    case "playerWaitingForBigBlind": {
      const s = tableSeat(view, ev.value.seat);
      if (s) s.waitingForBigBlind = true;
      break;
    }
    case "chipsAdded": {
      const s = tableSeat(view, ev.value.seat);
      if (s) Object.assign(s, { stack: s.stack + ev.value.amount, bustedHand: 0 });
      break;
    }
    case "actionTimedOut": {
      const s = tableSeat(view, ev.value.seat);
      if (s) s.consecutiveTimeouts += 1;
      timingOut = ev.value.seat;
      break;
    }
    case "handStarted": {
      const setup = ev.value.setup!;
      view.hand = {
        $typeName: "poker.v1.HandView",
        handId: setup.handId,
        publicId: setup.publicId,
        variant: setup.variant,
        button: setup.button,
        street: setup.variant === DRAW5 ? FIRST_BET : PREFLOP,
        board: [],
        pots: [],
        seats: setup.seats.map((s) => newHandSeat(s.seat, s.stack)),
        // The full big blind is the amount to call even when its poster is all-in for less.
        currentBet: setup.seats.reduce((m, s) => (s.blind > m ? s.blind : m), 0n),
        legalActions: [],
      };
      for (const s of setup.seats) {
        const t = tableSeat(view, s.seat);
        if (t) t.waitingForBigBlind = false; // dealt in: it posts the big blind now
      }
      break;
    }
    case "antePosted":
      move(hand, ev.value.seat, ev.value.amount, false);
      break;
    case "blindPosted":
    case "playerCalled":
      move(hand, ev.value.seat, ev.value.amount, true);
      break;
    case "betPlaced": {
      const v = ev.value;
      const s = handSeat(hand, v.seat);
      if (hand && s) {
        if (v.to > hand.currentBet) hand.currentBet = v.to;
        s.stack -= v.amount;
        s.bet = v.to;
        s.committed += v.amount;
      }
      break;
    }
    case "uncalledBetReturned":
      move(hand, ev.value.seat, -ev.value.amount, true);
      break;
    case "holeCardsDealt": {
      const s = handSeat(hand, ev.value.seat);
      if (s) s.cards = ev.value.cards.map(copyCard);
      break;
    }
    case "playerFolded": {
      const s = handSeat(hand, ev.value.seat);
      if (s) s.folded = true;
      break;
    }
    case "cardsDrawn": {
      const v = ev.value;
      const s = handSeat(hand, v.seat);
      if (s) {
        const gone = new Set(v.discarded.flatMap((c) => (c.kind.case === "code" ? [c.kind.value] : [])));
        // Unseen cards stay unseen: as many fewer as were thrown away, the drawn ones added.
        const kept = s.cards.every((c) => c.kind.case === "code")
          ? s.cards.filter((c) => !(c.kind.case === "code" && gone.has(c.kind.value)))
          : s.cards.slice(v.discarded.length);
        s.cards = [...kept, ...v.drawn.map(copyCard)];
        s.drawnCount = v.drawn.length;
      }
      break;
    }
    case "streetStarted": {
      if (hand) {
        for (const s of hand.seats) s.bet = 0n;
        hand.street = ev.value.street;
        hand.currentBet = 0n;
        hand.board = [...hand.board, ...ev.value.cards.map(copyCard)];
      }
      break;
    }
    case "cardsShown": {
      const s = handSeat(hand, ev.value.seat);
      if (s && ev.value.cards.every((c) => c.kind.case === "code")) s.cards = ev.value.cards.map(copyCard);
      break;
    }
    case "potAwarded":
      for (const share of ev.value.shares) {
        const s = handSeat(hand, share.seat);
        if (s) s.stack += share.amount;
      }
      break;
    case "handEnded": {
      if (hand) hand.street = COMPLETE;
      // A seat the hand left with no chips is busted since this hand (Seat.busted_hand).
      const number = table.handsPlayed + 1;
      for (const f of ev.value.stacks) {
        const t = tableSeat(view, f.seat);
        if (t) Object.assign(t, { stack: f.stack, bustedHand: f.stack === 0n ? number : 0 });
      }
      table.handsPlayed = number;
      break;
    }
    // tableCreated, seatTokenReissued, deckCommitted, cardsMucked, tableClosed and
    // tableSnapshotTaken change nothing a view shows but what the ViewChange says.
    default:
      break;
  }
  const now = view.hand;
  for (const s of now?.seats ?? []) {
    s.allIn = s.stack === 0n && !s.folded;
    // A seat dealt in shows its chips behind while the hand runs.
    const t = running(now) ? tableSeat(view, s.seat) : undefined;
    if (t) t.stack = s.stack;
  }
  return timingOut;
}

/** `amount` chips from `seat`'s stack into the pot, into its bet this round when `bet`. */
function move(hand: HandView | undefined, seat: number, amount: bigint, bet: boolean): void {
  const s = handSeat(hand, seat);
  if (!s) return;
  s.stack -= amount;
  s.committed += amount;
  if (bet) s.bet += amount;
}

function copyCard(c: Card): Card {
  return structuredClone(c);
}

/** What the rules made of the event (`ViewChange`), into the view. */
function applyChange(view: TableView, change: ViewChange): void {
  view.table!.state = change.tableState;
  const hand = view.hand;
  if (!hand) return;
  hand.pots = structuredClone(change.pots);
  hand.toAct = change.toAct;
  hand.actionDeadline = change.actionDeadline ? structuredClone(change.actionDeadline) : undefined;
  hand.legalActions = structuredClone(change.legalActions);
}
