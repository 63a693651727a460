// Naming the hands the player can see: its own while it plays, every hand shown at showdown,
// and the five cards that make each (highlighted for the winners). The server names only the
// winning hand (PotAwarded.hand); the rest is read here from the cards the seat was sent,
// with the rules' ranking (RULES.md: ace-low straight A-2-3-4-5; suits have no rank).
// Best five of up to seven by trying every five (21 at most). Pure (no imports), so
// `npm test` runs it.

/** Hand categories, low to high, as the messages name them ("hand.<CATEGORY>"). */
export const CATEGORIES = ["HIGH_CARD", "PAIR", "TWO_PAIR", "THREE_OF_A_KIND", "STRAIGHT", "FLUSH", "FULL_HOUSE", "FOUR_OF_A_KIND", "STRAIGHT_FLUSH", "ROYAL_FLUSH"] as const;
export type Category = (typeof CATEGORIES)[number];

export interface Made {
  category: Category;
  /** Compares hands: higher is better (category first, then the ranks in order). */
  score: number[];
  /** The card codes (0..51, rank * 4 + suit) that make the hand: five, or fewer before the
   * board is out (only the cards that count, a pair's two). */
  cards: number[];
}

const rank = (c: number) => c >> 2; // 0 = deuce ... 12 = ace
const suit = (c: number) => c & 3;

/** Exactly five cards. */
function five(cards: number[]): Made {
  const sorted = [...cards].sort((a, b) => rank(b) - rank(a));
  const ranks = sorted.map(rank);
  const flush = sorted.every((c) => suit(c) === suit(sorted[0]));
  const distinct = [...new Set(ranks)];
  let straightHigh = -1;
  if (distinct.length === 5) {
    if (ranks[0] - ranks[4] === 4) straightHigh = ranks[0];
    else if (ranks[0] === 12 && ranks[1] === 3) straightHigh = 3; // A-2-3-4-5: five-high
  }
  if (straightHigh >= 0) {
    const cat: Category = flush ? (straightHigh === 12 ? "ROYAL_FLUSH" : "STRAIGHT_FLUSH") : "STRAIGHT";
    return { category: cat, score: [CATEGORIES.indexOf(cat), straightHigh], cards: sorted };
  }
  // Groups by size, then rank: quads, full house, trips, pairs.
  const groups = distinct.map((r) => ({ r, n: ranks.filter((x) => x === r).length })).sort((a, b) => b.n - a.n || b.r - a.r);
  const ordered = groups.flatMap((g) => Array(g.n).fill(g.r) as number[]);
  const shape = groups.map((g) => g.n).join("");
  const cat: Category = flush ? "FLUSH"
    : shape === "41" ? "FOUR_OF_A_KIND"
    : shape === "32" ? "FULL_HOUSE"
    : shape === "311" ? "THREE_OF_A_KIND"
    : shape === "221" ? "TWO_PAIR"
    : shape === "2111" ? "PAIR"
    : "HIGH_CARD";
  return { category: cat, score: [CATEGORIES.indexOf(cat), ...(flush ? ranks : ordered)], cards: sorted };
}

/** Fewer than five cards (a hand before the board is out): pairs, trips and quads only. */
function partial(cards: number[]): Made {
  const ranks = cards.map(rank);
  const groups = [...new Set(ranks)].map((r) => ({ r, n: ranks.filter((x) => x === r).length })).sort((a, b) => b.n - a.n || b.r - a.r);
  const shape = groups.map((g) => g.n).filter((n) => n > 1).join("");
  const cat: Category = shape.startsWith("4") ? "FOUR_OF_A_KIND" : shape.startsWith("3") ? "THREE_OF_A_KIND" : shape === "22" ? "TWO_PAIR" : shape === "2" ? "PAIR" : "HIGH_CARD";
  const counting = new Set(groups.filter((g) => g.n > 1).map((g) => g.r));
  const used = cat === "HIGH_CARD" ? [...cards].sort((a, b) => rank(b) - rank(a)).slice(0, 1) : cards.filter((c) => counting.has(rank(c)));
  return { category: cat, score: [CATEGORIES.indexOf(cat), ...groups.map((g) => g.r)], cards: used };
}

function better(a: number[], b: number[]): boolean {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i] ?? -1;
    const y = b[i] ?? -1;
    if (x !== y) return x > y;
  }
  return false;
}

/** The best hand from `cards` (a seat's cards and the board; 1 to 7 of them). */
export function bestHand(cards: number[]): Made | null {
  if (cards.length === 0) return null;
  if (cards.length < 5) return partial(cards);
  let best: Made | null = null;
  const n = cards.length;
  for (let a = 0; a < n; a++)
    for (let b = a + 1; b < n; b++)
      for (let c = b + 1; c < n; c++)
        for (let d = c + 1; d < n; d++)
          for (let e = d + 1; e < n; e++) {
            const made = five([cards[a], cards[b], cards[c], cards[d], cards[e]]);
            if (!best || better(made.score, best.score)) best = made;
          }
  // Only the cards that count are "the hand": a pair's two, two pair's four, trips' three
  // (kickers are not highlighted); straights, flushes and full houses use all five.
  const b = best!;
  const counting = ["PAIR", "TWO_PAIR", "THREE_OF_A_KIND", "FOUR_OF_A_KIND"].includes(b.category);
  if (counting) {
    const ranks = b.cards.map(rank);
    const grouped = new Set(ranks.filter((r) => ranks.indexOf(r) !== ranks.lastIndexOf(r)));
    return { ...b, cards: b.cards.filter((c) => grouped.has(rank(c))) };
  }
  if (b.category === "HIGH_CARD") return { ...b, cards: b.cards.slice(0, 1) };
  return b;
}
