// The order and wording the hand's log needs beyond one event at a time: whether a bet is a
// raise (a bet already stands on the street) and the blinds in posting order. Pure (its
// events are described by shape, not imported), so `npm test` runs it.

/** What these functions read of a StoredEvent (the generated type has these fields). */
export interface EventLike {
  event:
    | { case: "handStarted"; value: { setup?: { button: number } } }
    | { case: "blindPosted"; value: { seat: number } }
    | { case: string | undefined; value?: unknown };
}

/** Whether a bet stands on the street after `e` (blinds make one; a new street has none):
 * the next BetPlaced is then a raise. */
export function betOpenAfter(open: boolean, e: EventLike): boolean {
  switch (e.event.case) {
    case "handStarted":
    case "streetStarted":
      return false;
    case "blindPosted":
    case "betPlaced":
      return true;
    default:
      return open;
  }
}

/** For each of a hand's events (in order, from its start), whether it is a raise. */
export function raises(events: EventLike[]): boolean[] {
  let open = false;
  return events.map((e) => {
    const raise = e.event.case === "betPlaced" && open;
    open = betOpenAfter(open, e);
    return raise;
  });
}

/**
 * `items` with each run of blinds in posting order: the small blind first (heads-up, the
 * button's), then the big. The table emits them in seat order, so a big blind in a lower
 * seat than the small would otherwise be logged first. A hand's start is put before the deck
 * commitment published for it just before, so its log opens with "Hand #n".
 */
export function inPostingOrder<T>(items: T[], eventOf: (item: T) => EventLike): T[] {
  const out: T[] = [];
  let button = 0;
  let run: T[] = [];
  const distance = (item: T) => {
    const ev = eventOf(item).event;
    return ev.case === "blindPosted" ? ((ev.value as { seat: number }).seat - button + 1000) % 1000 : 0;
  };
  const flush = () => {
    out.push(...[...run].sort((a, b) => distance(a) - distance(b)));
    run = [];
  };
  for (const item of items) {
    const ev = eventOf(item).event;
    if (ev.case === "handStarted") button = (ev.value as { setup?: { button: number } }).setup?.button ?? 0;
    // The deck is committed just before the hand starts: its line goes after "Hand #n".
    const last = out.length - 1;
    if (ev.case === "handStarted" && !run.length && last >= 0 && eventOf(out[last]).event.case === "deckCommitted") {
      out.splice(last, 0, item);
      continue;
    }
    if (ev.case === "blindPosted") run.push(item);
    else {
      flush();
      out.push(item);
    }
  }
  flush();
  return out;
}
