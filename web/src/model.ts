// What the screens show of a hand, from its events: the line each event adds to the hand's
// log, and (for replays) the whole table at any step, folded from the events as the viewer
// received them. The live table takes its state from the server's TableView instead, which
// also says which actions are legal; this fold only has to draw what was seen.
import type { StoredEvent, Card } from "./gen/poker/events/v1/events_pb";
import { Street } from "./gen/poker/events/v1/events_pb";
import { t, tDynamic, chips, language, type Key } from "./i18n";
import { RANKS, SUIT_SYMBOLS } from "./cards";
export { betOpenAfter, raises, inPostingOrder } from "./logorder";

/** A rank as printed on a card: "10" for the ten (the API's text form writes "T"). */
function rankLabel(code: number): string {
  const rank = RANKS[code >> 2];
  return rank === "T" ? "10" : rank;
}

export type Names = (seat: number) => string;

const STREETS: Partial<Record<Street, Key>> = {
  [Street.PREFLOP]: "street.preflop",
  [Street.FLOP]: "street.flop",
  [Street.TURN]: "street.turn",
  [Street.RIVER]: "street.river",
  [Street.FIRST_BET]: "street.firstBet",
  [Street.DRAW]: "street.draw",
  [Street.SECOND_BET]: "street.secondBet",
  [Street.SHOWDOWN]: "street.showdown",
  [Street.COMPLETE]: "street.complete",
};

export function streetName(s: Street): string {
  const key = STREETS[s];
  return key ? t(key) : "";
}

const CATEGORIES: Record<string, string> = {
  "High card": "HIGH_CARD",
  Pair: "PAIR",
  "Two pair": "TWO_PAIR",
  "Three of a kind": "THREE_OF_A_KIND",
  Straight: "STRAIGHT",
  Flush: "FLUSH",
  "Full house": "FULL_HOUSE",
  "Four of a kind": "FOUR_OF_A_KIND",
  "Straight flush": "STRAIGHT_FLUSH",
  "Royal flush": "ROYAL_FLUSH",
};

/**
 * A hand's name in the player's language. The server describes it in English
 * ("Two pair, kings and fives (ace)", felt.core.evaluator.describe); the category before the
 * first comma is translated, and English keeps the whole description.
 */
export function handName(described: string): string {
  if (!described) return "";
  const category = CATEGORIES[described.split(",")[0]];
  if (!category) return described;
  const translated = tDynamic(`hand.${category}`, described);
  return language() === "en" ? described : translated;
}

export function cardsText(cards: Card[]): string {
  return cards
    .map((c) => (c.kind.case === "code" ? rankLabel(c.kind.value) + SUIT_SYMBOLS[c.kind.value & 3] : "▮"))
    .join(" ");
}

/** The log line of one event ("" for events that add none); `raise`: a BetPlaced over a bet. */
export function logLine(e: StoredEvent, name: Names, raise = false): string {
  const ev = e.event;
  switch (ev.case) {
    case "handStarted":
      return t("log.handStarted", { hand: e.handId.split(":").pop() ?? "", button: name(ev.value.setup?.button ?? 0) });
    case "antePosted":
      return t("log.ante", { who: name(ev.value.seat), amount: chips(ev.value.amount) });
    case "blindPosted":
      return t("log.blind", { who: name(ev.value.seat), amount: chips(ev.value.amount) });
    case "holeCardsDealt":
      return ev.value.cards.some((c) => c.kind.case === "code") ? t("log.dealt", { who: name(ev.value.seat), cards: cardsText(ev.value.cards) }) : "";
    case "playerFolded":
      return t("log.fold", { who: name(ev.value.seat) });
    case "playerChecked":
      return t("log.check", { who: name(ev.value.seat) });
    case "playerCalled":
      return t(ev.value.allIn ? "log.callAllIn" : "log.call", { who: name(ev.value.seat), amount: chips(ev.value.amount) });
    case "betPlaced":
      return t(ev.value.allIn ? "log.allIn" : raise ? "log.raise" : "log.bet", { who: name(ev.value.seat), to: chips(ev.value.to) });
    case "cardsDrawn":
      return t("log.draw", { who: name(ev.value.seat), n: ev.value.drawn.length });
    case "streetStarted":
      return ev.value.cards.length ? `${streetName(ev.value.street)}: ${cardsText(ev.value.cards)}` : streetName(ev.value.street);
    case "uncalledBetReturned":
      return t("log.returned", { who: name(ev.value.seat), amount: chips(ev.value.amount) });
    case "cardsShown":
      return t("log.shows", { who: name(ev.value.seat), cards: cardsText(ev.value.cards) });
    case "cardsMucked":
      return t("log.mucks", { who: name(ev.value.seat) });
    case "potAwarded":
      return ev.value.shares
        .map((s) => t(ev.value.hand ? "log.winsWith" : "log.wins", { who: name(s.seat), amount: chips(s.amount), hand: handName(ev.value.hand) }))
        .join(" · ");
    case "handEnded":
      return t("log.handEnded");
    case "playerSeated":
      return t("log.seated", { who: ev.value.displayName });
    case "playerLeft":
      return t("log.left", { who: name(ev.value.seat) });
    case "playerSatOut":
      return t("log.satOut", { who: name(ev.value.seat) });
    case "playerSatIn":
      return t("log.satIn", { who: name(ev.value.seat) });
    case "playerWaitingForBigBlind":
      return t("log.waitsForBigBlind", { who: name(ev.value.seat) });
    case "actionTimedOut":
      return t("log.timedOut", { who: name(ev.value.seat) });
    case "deckCommitted":
      return t("log.committed", { root: ev.value.root.slice(0, 12) });
    case "tableClosed":
      return t("log.closed");
    default:
      return "";
  }
}

export interface ReplaySeat {
  seat: number;
  stack: bigint;
  bet: bigint;
  cards: Card[];
  folded: boolean;
  won: bigint;
}

export interface ReplayState {
  button: number;
  board: Card[];
  pot: bigint;
  street: Street;
  seats: Map<number, ReplaySeat>;
  lastSeat: number | null;
  hands: Map<number, string>;
}

function collect(s: ReplayState): void {
  for (const seat of s.seats.values()) {
    s.pot += seat.bet;
    seat.bet = 0n;
  }
}

function put(s: ReplayState, seatNo: number, amount: bigint): void {
  const seat = s.seats.get(seatNo);
  if (!seat) return;
  seat.stack -= amount;
  seat.bet += amount;
}

/** The table after the first `steps` events of a hand. */
export function foldHand(events: StoredEvent[], steps: number): ReplayState {
  const s: ReplayState = { button: 0, board: [], pot: 0n, street: Street.UNSPECIFIED, seats: new Map(), lastSeat: null, hands: new Map() };
  for (const e of events.slice(0, steps)) {
    const ev = e.event;
    s.lastSeat = "seat" in (ev.value ?? {}) ? ((ev.value as { seat: number }).seat ?? null) : null;
    switch (ev.case) {
      case "handStarted":
        s.button = ev.value.setup?.button ?? 0;
        for (const st of ev.value.setup?.seats ?? []) s.seats.set(st.seat, { seat: st.seat, stack: st.stack, bet: 0n, cards: [], folded: false, won: 0n });
        s.street = Street.PREFLOP;
        break;
      case "antePosted":
        put(s, ev.value.seat, ev.value.amount);
        collect(s);
        break;
      case "blindPosted":
        put(s, ev.value.seat, ev.value.amount);
        break;
      case "holeCardsDealt": {
        const seat = s.seats.get(ev.value.seat);
        if (seat) seat.cards = ev.value.cards;
        break;
      }
      case "playerFolded": {
        const seat = s.seats.get(ev.value.seat);
        if (seat) seat.folded = true;
        break;
      }
      case "playerCalled":
        put(s, ev.value.seat, ev.value.amount);
        break;
      case "betPlaced":
        put(s, ev.value.seat, ev.value.amount);
        break;
      case "cardsDrawn": {
        const seat = s.seats.get(ev.value.seat);
        if (seat) {
          const gone = new Set(ev.value.discarded.map((c) => (c.kind.case === "code" ? c.kind.value : -1)));
          const kept = seat.cards.filter((c) => !(c.kind.case === "code" && gone.has(c.kind.value)));
          // Another seat's draw shows only how many cards changed: its five stay face down.
          if (ev.value.discarded.some((c) => c.kind.case === "code")) seat.cards = [...kept, ...ev.value.drawn];
        }
        break;
      }
      case "streetStarted":
        collect(s);
        s.street = ev.value.street;
        s.board = [...s.board, ...ev.value.cards];
        break;
      case "uncalledBetReturned": {
        const seat = s.seats.get(ev.value.seat);
        if (seat) {
          seat.bet -= ev.value.amount;
          seat.stack += ev.value.amount;
        }
        break;
      }
      case "cardsShown": {
        const seat = s.seats.get(ev.value.seat);
        if (seat) seat.cards = ev.value.cards;
        break;
      }
      case "potAwarded":
        collect(s);
        for (const sh of ev.value.shares) {
          const seat = s.seats.get(sh.seat);
          if (seat) {
            seat.won += sh.amount;
            if (ev.value.hand) s.hands.set(sh.seat, ev.value.hand);
          }
        }
        s.pot -= ev.value.amount;
        break;
      case "handEnded":
        s.street = Street.COMPLETE;
        for (const st of ev.value.stacks) {
          const seat = s.seats.get(st.seat);
          if (seat) seat.stack = st.stack;
        }
        break;
    }
  }
  return s;
}
