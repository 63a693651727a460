// A past hand step by step, as the player's seat saw it (HistoryService.GetHandHistory, by the
// hand's public id, redacts it for the signed-in player: the archive, or the table's stream for
// a hand not archived yet), and "verify this deal": every card seen checked against the deck
// commitment, here in the browser (verify.ts), so the player need not trust the server's word.
import { useEffect, useState } from "preact/hooks";
import * as session from "./session";
import { errorText } from "./errors";
import { t, chips } from "./i18n";
import { go } from "./route";
import { CardView } from "./card";
import { foldHand, logLine, streetName, handName, raises, inPostingOrder } from "./model";
import { botNumber } from "./bots";
import { reportIfLost } from "./lost";
import { bestHand } from "./evaluate";
import type { Card } from "./gen/poker/events/v1/events_pb";
import { verifyHand, type HandCheck } from "./verify";
import type { HistoryServiceGetHandHistoryResponse } from "./gen/poker/v1/history_service_pb";
import type { StoredEvent } from "./gen/poker/events/v1/events_pb";

export function ReplayScreen({ lounge, hand }: { lounge: string; hand: string }) {
  const seated = session.seatAt(lounge) !== undefined;
  const [history, setHistory] = useState<HistoryServiceGetHandHistoryResponse | null>(null);
  const [step, setStep] = useState(0);
  const [error, setError] = useState("");
  const [check, setCheck] = useState<HandCheck | null>(null);

  useEffect(() => {
    (async () => {
      try {
        const h = await session.history().getHandHistory({ handId: hand, tableId: lounge });
        setHistory(h);
        setStep(firstStep(h.events.flatMap((i) => (i.item.case === "event" ? [i.item.value] : []))));
      } catch (err) {
        if (!reportIfLost(err)) setError(errorText(err));
      }
    })();
  }, [lounge, hand]);

  const events: StoredEvent[] = (history?.events ?? []).flatMap((i) => (i.item.case === "event" ? [i.item.value] : []));
  const names = (s: number) => {
    const name = history?.seats.find((x) => x.seat === s)?.displayName;
    const bot = name ? botNumber(name) : null;
    return bot !== null ? t("table.botN", { n: bot }) : name || t("table.seatN", { n: s + 1 });
  };
  const state = foldHand(events, step);
  const raised = raises(events);
  const shown = events.slice(0, step).map((e, i) => ({ e, raise: raised[i] }));
  const lines = inPostingOrder(shown, (x) => x.e).map((x) => logLine(x.e, names, x.raise)).filter(Boolean);

  const onKey = (e: KeyboardEvent) => {
    if (e.key === "ArrowRight") setStep((s) => Math.min(events.length, s + 1));
    if (e.key === "ArrowLeft") setStep((s) => Math.max(1, s - 1));
  };

  const verify = async () => setCheck(await verifyHand(history?.events ?? []));

  return (
    <section class="replay" onKeyDown={onKey} aria-labelledby="replay-title">
      <div class="table-head">
        <h1 id="replay-title">{t("replay.title", { hand: handNumber(events, history?.handId ?? hand) })}</h1>
        <button class="ghost" onClick={() => (seated ? go({ name: "table", lounge }) : go({ name: "hands" }))}>{t("replay.back")}</button>
      </div>
      {error && <p class="error" role="alert">{error}</p>}
      {history && (
        <>
          <div class="replay-board panel">
            <div class="street">{streetName(state.street)}</div>
            <div class="board" aria-label={t("table.board")}>{state.board.map((c) => <CardView card={c} />)}</div>
            {state.pot + [...state.seats.values()].reduce((n, s) => n + s.bet, 0n) > 0n && (
              <div class="pots"><span class="pot">{t("table.pot")}: {chips(state.pot + [...state.seats.values()].reduce((n, s) => n + s.bet, 0n))}</span></div>
            )}
            <ul class="replay-seats">
              {[...state.seats.values()].map((s) => (
                <li class={`${s.folded ? "folded" : ""} ${state.lastSeat === s.seat ? "to-act" : ""}`}>
                  <span class="name">{names(s.seat)}{state.button === s.seat && <span class="dealer" aria-label={t("table.button")}>D</span>}</span>
                  <span class="seat-cards">{s.cards.map((c) => <CardView card={c} small />)}</span>
                  <span class="stack">{chips(s.stack)}</span>
                  {s.bet > 0n && <span class="bet">{chips(s.bet)}</span>}
                  {s.won > 0n && <span class="tag win">+{chips(s.won)} {handName(state.hands.get(s.seat) ?? "")}</span>}
                  {!s.won && !s.folded && shownHand(s.cards, state.board) && <span class="tag hand-name" data-testid="replay-shown-hand">{shownHand(s.cards, state.board)}</span>}
                </li>
              ))}
            </ul>
          </div>
          <div class="row stepper" role="group" aria-label={t("replay.steps")}>
            <button class="ghost" onClick={() => setStep(1)} aria-label={t("replay.first")}>«</button>
            <button class="secondary" data-testid="replay-prev" onClick={() => setStep(Math.max(1, step - 1))}>{t("replay.prev")}</button>
            <span data-testid="replay-step" aria-live="polite">{t("replay.stepOf", { n: step, total: events.length })}</span>
            <button class="secondary" data-testid="replay-next" onClick={() => setStep(Math.min(events.length, step + 1))}>{t("replay.next")}</button>
            <button class="ghost" data-testid="replay-end" onClick={() => setStep(events.length)} aria-label={t("replay.last")}>»</button>
          </div>
          <div class="panel log">
            <ol data-testid="replay-log">{lines.map((l) => <li>{l}</li>)}</ol>
          </div>
          <div class="panel verify">
            <button class="primary" data-testid="verify" onClick={verify}>{t("replay.verify")}</button>
            {check && (
              <p class={check.ok ? "ok" : "error"} role="status" data-testid="verify-result">
                {check.ok ? t("replay.verified", { n: check.verified, root: check.root.slice(0, 16) }) : t("replay.notVerified", { problems: check.problems.join("; ") || t("replay.noCommitment") })}
              </p>
            )}
            <p class="fine">{t("replay.verifyNote")}</p>
          </div>
        </>
      )}
    </section>
  );
}

/** The hand's number as the table's log writes it ("Hand #12": the last part of the events'
 * hand id), so the title and the log name the hand alike; the public id's start without events. */
function handNumber(events: StoredEvent[], fallback: string): string {
  const id = events[0]?.handId;
  return id ? (id.split(":").pop() ?? id) : fallback.slice(0, 8);
}

/** The step a replay opens on: past the hand's set-up (start, commitment, antes, blinds, the
 * deal), so the first view shows the cards and the blinds, not an empty table. */
export function firstStep(events: StoredEvent[]): number {
  const setup = new Set(["handStarted", "deckCommitted", "antePosted", "blindPosted", "holeCardsDealt"]);
  let i = 0;
  while (i < events.length && setup.has(events[i].event.case ?? "")) i++;
  return Math.max(1, Math.min(i, events.length));
}

/** A hand the viewer can read (every card face up), named in the player's language; "" else.
 * Every hand shown is named, not only the winner's (whose name the server gives). */
function shownHand(cards: Card[], board: Card[]): string {
  const codes = (cs: Card[]) => cs.flatMap((c) => (c.kind.case === "code" ? [c.kind.value] : []));
  const hole = codes(cards);
  if (hole.length === 0 || hole.length < cards.length) return "";
  const made = bestHand([...hole, ...codes(board)]);
  return made ? t(`hand.${made.category}`) : "";
}
