// Cards as the API sends them: a code 0..51 = rank * 4 + suit, ranks 2..A, suits c d h s
// (felt.core.cards), or `hidden` for a card the viewer may not see.
import type { Card } from "./gen/poker/events/v1/events_pb";

export const RANKS = "23456789TJQKA";
export const SUITS = "cdhs";
export const SUIT_SYMBOLS = ["♣", "♦", "♥", "♠"];

/** A card's code, or null when it is hidden. */
export function codeOf(card: Card): number | null {
  return card.kind.case === "code" ? card.kind.value : null;
}

export function rankOf(code: number): string {
  return RANKS[code >> 2];
}

export function suitOf(code: number): string {
  return SUITS[code & 3];
}

/** Text form as the server writes it: "Ah". */
export function cardText(code: number): string {
  return rankOf(code) + suitOf(code);
}
