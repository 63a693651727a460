// The live table. Its state is the server's TableView (what this seat may see, and which
// actions are legal at which amounts), kept current from the WatchTable stream alone: each
// event adds a line to the hand's log and is folded into the view with the ViewChange the
// stream sends with it (fold.ts), so GetTableView is asked only on connect, on resume and at
// a gap. A dropped stream is resumed from the last sequence received, so nothing is missed
// and nothing is shown twice (or, when those events were archived and trimmed, from a fresh
// snapshot).
import type { ComponentChildren } from "preact";
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import { ConnectError, Code } from "@connectrpc/connect";
import { toJsonString } from "@bufbuild/protobuf";
import { tableClient, requestId, Reason, refusedFor, codeOf } from "./api";
import * as session from "./session";
import { errorText } from "./errors";
import { t, chips } from "./i18n";
import { goWithNotice } from "./route";
import { sendRetriedOnce, streamWait } from "./retry";
import { reportIfLost } from "./lost";
import { actionsKey, outOfChips, resolvePreAction, type PreAction } from "./betting";
import { botNumber, LEVEL_NAMES } from "./bots";
import { bestHand, type Made } from "./evaluate";
import { CardView } from "./card";
import { logLine, streetName, handName, betOpenAfter, raises, inPostingOrder } from "./model";
import { variantName, stakesOf, loungeName } from "./lobby";
import { ActionBar } from "./actions";
import { JoinDialog } from "./lobby";
import { RecentHands } from "./hands";
import { CloseLounge } from "./close";
import { AddChips } from "./chips";
import { play, type Sound } from "./sound";
import { fly } from "./motion";
import { LoungeState, type Lounge } from "./gen/poker/v1/lobby_pb";
import { TableViewSchema } from "./gen/poker/v1/table_pb";
import type { ViewChange } from "./gen/poker/v1/table_service_pb";
import { foldEvent } from "./fold";
import { LeaveState } from "./gen/poker/v1/lobby_service_pb";
import type { TableView, HandSeat, Seat } from "./gen/poker/v1/table_pb";
import { ActionType, SeatStatus, TableState } from "./gen/poker/v1/table_pb";
import { Street, Variant, type Card, type StoredEvent } from "./gen/poker/events/v1/events_pb";

/** A line of the hand's log: its event, worded at each render (so in the language chosen now). */
interface LogEntry {
  seq: bigint;
  event: StoredEvent;
  hand: boolean;
  /** A BetPlaced over a standing bet ("raises to"). */
  raise: boolean;
}

interface Award {
  seat: number;
  amount: bigint;
  hand: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The sound an event of the live stream makes (none for most: the log is quiet). */
// For the browser tests (tests/e2e/web/test_client_fold_browser.py): a page that defines
// `window.feltViews` as an array before the client loads gets every view the table takes, as
// JSON with how it came ("fold", "fetch", "snapshot", "action"). Otherwise nothing is kept.
function recordView(v: TableView, how: string): void {
  const sink = (window as unknown as { feltViews?: unknown[] }).feltViews;
  if (Array.isArray(sink)) sink.push({ how, seq: String(v.table?.sequence ?? 0n), view: toJsonString(TableViewSchema, v) });
}

function soundOf(e: StoredEvent, mine: number): Sound | null {
  switch (e.event.case) {
    case "holeCardsDealt":
      return e.event.value.seat === mine ? "deal" : null; // one flick a hand, not one per seat
    case "streetStarted":
    case "cardsDrawn":
      return "deal";
    case "betPlaced":
    case "playerCalled":
      return "bet";
    case "playerChecked":
      return "check";
    case "playerFolded":
      return "fold";
    case "potAwarded":
      return e.event.value.shares.some((s) => s.seat === mine) ? "win" : null;
    default:
      return null;
  }
}

/** A seat's name as shown: a lobby-made bot's "Bot 2 (normal)" as "Bot 2" in the player's
 * language (its level is a badge of its own), anyone else's as chosen. */
export function seatName(seat: Seat): string {
  const n = seat.aiLevel ? botNumber(seat.displayName) : null;
  return n === null ? seat.displayName : t("table.botN", { n });
}

export function TableScreen({ lounge }: { lounge: string }) {
  const ticket = session.seatAt(lounge);
  // Bumped after a new buy-in at this same table (the hash does not change).
  const [, setRejoined] = useState(0);
  useEffect(() => {
    // An old link, or a table this browser holds no seat at: the lobby, saying so.
    if (!ticket) goWithNotice({ name: "lobby" }, () => t("table.notSeated"));
  }, [ticket]);
  if (!ticket) return null;
  return <LiveTable key={ticket.token} lounge={lounge} initial={ticket} onRejoined={() => setRejoined((n) => n + 1)} />;
}

const RENEW_RETRY_MS = 5000;
// How long an action's events may take to arrive through the stream before the client asks
// the server's view (the stream is then lagging or reconnecting).
const STREAM_LATE_MS = 1500;

/** The table's refusal of a seat token past its expiry (renewing it is the remedy). */
function seatTokenExpired(err: unknown): boolean {
  return ConnectError.from(err).code === Code.Unauthenticated && refusedFor(err, Reason.SEAT_TOKEN_EXPIRED);
}

/** Keeps the seat's token fresh: RefreshSeatToken before it expires (and at once when the
 * table says it has), so a long session plays on. `token()` is the current token (read by
 * the table client at every call); `ready()` waits for a renewal under way (the table stops
 * the old token before the lobby's answer is back). `onGone` is told when the lobby refuses
 * for good (the seat is gone: left, or the lounge closed); a refusal that may pass (the lobby
 * unreachable) goes to `onTrouble` and is retried while the old token still works. */
function useSeatToken(lounge: string, initial: session.SeatTicket, onGone: (err: unknown) => void, onTrouble: (err: unknown) => void) {
  const [ticket, setTicket] = useState(initial);
  const current = useRef(initial.token);
  const renewing = useRef<Promise<boolean> | null>(null);
  const gone = useRef(false);
  const renew = (): Promise<boolean> => {
    renewing.current ??= session
      .renewSeat(lounge)
      .then((fresh) => {
        current.current = fresh.token;
        setTicket(fresh);
        return true;
      })
      .catch((err) => {
        const final = refusedFor(err, Reason.NOT_SEATED) || ConnectError.from(err).code === Code.PermissionDenied;
        if (final) gone.current = true;
        (final ? onGone : onTrouble)(err);
        return false;
      })
      .finally(() => (renewing.current = null));
    return renewing.current;
  };
  const ready = async () => void (await renewing.current);
  useEffect(() => {
    if (!ticket.expires) return; // a token that never expires (or one stored before expiries were kept)
    let timer = 0;
    const schedule = (ms: number) => {
      timer = window.setTimeout(async () => {
        if (!(await renew()) && Date.now() < ticket.expires) schedule(RENEW_RETRY_MS);
      }, ms);
    };
    schedule(session.renewIn(ticket.expires));
    return () => clearTimeout(timer);
  }, [ticket.token]);
  return { ticket, token: () => current.current, ready, renew, gone: () => gone.current };
}

function LiveTable({ lounge, initial, onRejoined }: { lounge: string; initial: session.SeatTicket; onRejoined: () => void }) {
  const [error, setError] = useState("");
  // The seat is gone for good (the lounge closed, the seat left elsewhere, the servers no
  // longer know its token): to the lobby, saying why, never a dead end.
  // `err` is kept, not its sentence, so the notice is made in the language it is read in.
  const setFatal = async (err: unknown) => {
    session.forgetSeat(lounge);
    let state = LoungeState.UNSPECIFIED;
    let name = "";
    try {
      const l = (await session.lobby().getLounge({ loungeId: lounge })).lounge;
      state = l?.state ?? state;
      name = l?.name ?? "";
    } catch (err) {
      if (reportIfLost(err)) return; // the session is gone too: the sign-in screen
      /* else unknown to the lobby: an old link */
    }
    if (state === LoungeState.CLOSED) {
      // Settled: every seat's chips are back; say so with the balance they are in.
      try {
        const balance = (await session.lobby().getBalance({})).balance;
        goWithNotice({ name: "lobby" }, () => t("close.closed", { balance: chips(balance) }));
        return;
      } catch {
        /* the notice below still says where the chips go */
      }
    }
    const closed = state === LoungeState.CLOSED || state === LoungeState.CLOSING;
    goWithNotice({ name: "lobby" }, closed ? () => t("table.closedNotice", { name: loungeName(name) }) : () => t("table.goneNotice", { reason: errorText(err) }));
  };
  const { ticket, token, ready, renew, gone } = useSeatToken(
    lounge,
    initial,
    setFatal,
    (err) => setError(t("table.renewFailed", { error: errorText(err) })),
  );
  const seat = ticket.seat;
  const client = useMemo(() => tableClient(token), []);
  const [lobbyLounge, setLobbyLounge] = useState<Lounge | null>(null);
  useEffect(() => {
    session.lobby().getLounge({ loungeId: lounge }).then((r) => setLobbyLounge(r.lounge ?? null), () => {});
  }, [lounge]);
  const [view, setView] = useState<TableView | null>(null);
  const [log, setLog] = useState<LogEntry[]>([]);
  const [awards, setAwards] = useState<Award[]>([]);
  const [conn, setConn] = useState<"connecting" | "live" | "reconnecting" | "limited">("connecting");
  // Why the stream was last refused for load (RESOURCE_EXHAUSTED), shown while it waits.
  const [limitedBy, setLimitedBy] = useState("");
  // An action in flight: the buttons wait for its answer, so a second press cannot act twice.
  const [busy, setBusy] = useState(false);
  const [handsDone, setHandsDone] = useState(0);
  const lastSeq = useRef(0n);
  const betOpen = useRef(false);
  const logRef = useRef<HTMLOListElement>(null);
  useLayoutEffect(() => {
    const el = logRef.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [log]);
  const viewRef = useRef<TableView | null>(null);
  // The seat whose time-out the folded events are playing (fold.ts's Folded.timingOut).
  const timingOut = useRef<number | undefined>(undefined);
  const refreshing = useRef<Promise<void> | null>(null);
  const again = useRef(false);

  const names = (s: number) => {
    const found = viewRef.current?.table?.seats.find((x) => x.seat === s);
    return found?.displayName ? seatName(found) : t("table.seatN", { n: s + 1 });
  };

  // An action's answer carries its sequence only (`sequenceOnly`): its events reach the view
  // through the stream like everyone else's, and the buttons wait until they have.
  const awaited = useRef<{ sequence: bigint; done: () => void } | null>(null);
  // Gone from the page (the lobby, a fatal refusal): a pending wait asks the server nothing.
  const mounted = useRef(true);
  useEffect(() => () => void (mounted.current = false), []);
  const reached = (v: TableView) => {
    const w = awaited.current;
    if (w && v.table && v.table.sequence >= w.sequence) {
      awaited.current = null;
      w.done();
    }
  };
  const caughtUp = (sequence: bigint) =>
    new Promise<void>((resolve) => {
      if ((viewRef.current?.table?.sequence ?? 0n) >= sequence) return resolve();
      awaited.current?.done(); // one action waits at a time; an earlier wait ends here
      awaited.current = { sequence, done: resolve };
      // The stream brings the action's events within milliseconds; if it lags (reconnecting),
      // the server's view is asked once, and the buttons never wait forever.
      setTimeout(() => {
        if (awaited.current?.done === resolve && mounted.current) refresh();
      }, STREAM_LATE_MS);
      setTimeout(() => {
        if (awaited.current?.done !== resolve) return;
        awaited.current = null;
        if (mounted.current) refresh(); // the view may still be behind: ask again
        resolve();
      }, 3 * STREAM_LATE_MS);
    });

  const accept = (v: TableView | undefined, how: string) => {
    if (!v?.table) return;
    if (viewRef.current?.table && viewRef.current.table.sequence > v.table.sequence) return;
    timingOut.current = undefined; // a whole batch of events is in a server's view
    viewRef.current = v;
    setView(v);
    recordView(v, how);
    reached(v);
  };

  // The next event, folded into the view; a view from the server when it cannot be (a gap, or
  // an event replayed to a resumed stream without its ViewChange).
  const advance = (e: StoredEvent, change: ViewChange | undefined) => {
    const current = viewRef.current;
    if (!current?.table) return refresh();
    const next = foldEvent({ view: current, timingOut: timingOut.current }, e, change);
    if (next === "stale") return;
    if (typeof next === "string") return refresh();
    timingOut.current = next.timingOut;
    viewRef.current = next.view;
    setView(next.view);
    recordView(next.view, "fold");
    reached(next.view);
  };

  const refresh = () => {
    if (refreshing.current) {
      again.current = true;
      return;
    }
    refreshing.current = (async () => {
      do {
        again.current = false;
        try {
          accept((await client.getTableView({ tableId: lounge, seat })).view, "fetch");
        } catch {
          /* the stream's reconnect shows the trouble */
        }
      } while (again.current);
      refreshing.current = null;
    })();
  };

  // The lounge freed this seat after its grace without chips (RULES.md; PlayerLeft.busted):
  // not the player's own leave. Say so, with the lounge's grace, and go to the lobby (the
  // seat's stream ends at its PlayerLeft: nothing else will come).
  const freed = useRef(false);
  const bustedOut = async () => {
    if (freed.current) return;
    freed.current = true;
    session.forgetSeat(lounge);
    let grace = 300;
    try {
      grace = (await session.lobby().getLounge({ loungeId: lounge })).lounge?.bustedGraceS || grace;
    } catch (err) {
      if (reportIfLost(err)) return; // the session is gone too: the sign-in screen
      /* else the default grace */
    }
    goWithNotice({ name: "lobby" }, () => t("table.bustedNotice", { minutes: Math.max(1, Math.round(grace / 60)) }));
  };

  const onEvent = (e: StoredEvent) => {
    const ev = e.event;
    if (ev.case === "playerLeft" && ev.value.seat === seat && ev.value.busted) void bustedOut();
    if (ev.case === "handStarted") setAwards([]);
    if (ev.case === "potAwarded") {
      const hand = ev.value.hand;
      setAwards((a) => [...a, ...ev.value.shares.map((s) => ({ seat: s.seat, amount: s.amount, hand }))]);
    }
    if (ev.case === "handEnded") {
      setHandsDone((n) => n + 1);
    }
    const sound = soundOf(e, seat);
    if (sound) play(sound);
    const raise = ev.case === "betPlaced" && betOpen.current;
    betOpen.current = betOpenAfter(betOpen.current, e);
    if (logLine(e, names)) {
      const entry = { seq: e.sequence, event: e, hand: ev.case === "handStarted", raise };
      // A new hand starts a new log, keeping the deck commitment published for it just before.
      const keep = (l: LogEntry[]) => l.filter((x) => x.event.event.case === "deckCommitted" && x.event.handId === e.handId);
      setLog((l) => (ev.case === "handStarted" ? [...keep(l), entry] : [...l, entry]).slice(-200));
    }
  };

  // After a reload the stream starts from a snapshot: the hand's log so far comes from its
  // history (as this seat saw it), then the stream's events carry on after it.
  const loadLog = async (handId: string) => {
    try {
      const h = await client.getHandHistory({ tableId: lounge, handId, seat });
      const upTo = lastSeq.current;
      const entries: LogEntry[] = [];
      const events = h.events.flatMap((i) => (i.item.case === "event" && i.item.value.sequence <= upTo ? [i.item.value] : []));
      const raised = raises(events);
      events.forEach((e, i) => {
        if (logLine(e, names)) entries.push({ seq: e.sequence, event: e, hand: e.event.case === "handStarted", raise: raised[i] });
      });
      betOpen.current = events.reduce(betOpenAfter, false);
      setLog((l) => [...entries, ...l.filter((x) => x.seq > upTo)]);
    } catch {
      /* the log starts empty; play goes on */
    }
  };

  useEffect(() => {
    const abort = new AbortController();
    // A renewed token (the stream restarted with it): a view asked for with the old one may
    // have been refused in the meantime, so ask again.
    const streamToken = token();
    (async () => {
      let wait = 0;
      while (!abort.signal.aborted) {
        let exhausted = false;
        // Resuming (a dropped stream, or one restarted with a renewed token): events may have
        // been missed meanwhile, and the replayed ones come without ViewChange: a fresh view.
        if (lastSeq.current) refresh();
        try {
          const stream = client.watchTable({ tableId: lounge, seat, fromSequence: lastSeq.current, viewChanges: true }, { signal: abort.signal });
          for await (const item of stream) {
            setConn("live");
            wait = 0;
            if (item.item.case === "snapshot") {
              const snap = item.item.value;
              lastSeq.current = snap.table?.sequence ?? lastSeq.current;
              viewRef.current = null;
              accept(snap, "snapshot");
              if (snap.hand?.handId) loadLog(snap.hand.handId);
            } else if (item.item.case === "event") {
              const e = item.item.value;
              if (e.sequence <= lastSeq.current) continue;
              lastSeq.current = e.sequence;
              onEvent(e);
              advance(e, item.viewChange);
            }
          }
          if (freed.current) return; // the seat was freed: the notice says so
        } catch (err) {
          if (abort.signal.aborted || freed.current) return;
          await ready();
          if (token() !== streamToken) return; // renewed meanwhile: the effect of the new token watches on
          const code = ConnectError.from(err).code;
          if (seatTokenExpired(err)) {
            // Expired (a sleeping tab's timer fired late; the stream ends at the first event
            // after the expiry): a fresh token restarts the stream from lastSeq. A seat gone
            // for good shows why (onGone); a lobby out of reach for a moment is asked again
            // after the reconnect's pause.
            if ((await renew()) || gone()) return;
          } else if (code === Code.PermissionDenied || code === Code.Unauthenticated || code === Code.NotFound) {
            setFatal(err);
            return;
          } else if (code === Code.ResourceExhausted) {
            // Refused for load (too many streams, a rate limit): say so, and wait longer.
            exhausted = true;
            setLimitedBy(errorText(err));
          } else if (code === Code.OutOfRange) {
            // The events after lastSeq are archived (trimmed from the stream): start again
            // from a snapshot, which the stream sends for from_sequence 0.
            lastSeq.current = 0n;
            continue;
          }
        }
        setConn(exhausted ? "limited" : "reconnecting");
        wait = streamWait(wait, exhausted);
        await sleep(wait);
      }
    })();
    return () => abort.abort();
  }, [ticket.token]);

  const act = async (action: Parameters<typeof client.submitAction>[0]["action"]) => {
    if (busy) return;
    setError("");
    setBusy(true);
    // One request (one id) per action: sent again once after UNAVAILABLE (the table may be
    // moving to another instance), it is answered, never taken twice.
    // The answer is the sequence alone: the stream brings the action's events (folded like
    // any other), so the answer carries nothing the client would not get anyway.
    const request = { tableId: lounge, seat, requestId: requestId(), expectedSequence: viewRef.current?.table?.sequence, sequenceOnly: true, action };
    const send = () => sendRetriedOnce(() => client.submitAction(request), codeOf, sleep);
    try {
      await ready();
      const sentWith = token();
      let sequence: bigint;
      try {
        sequence = (await send()).sequence;
      } catch (err) {
        // Sent with a token a renewal replaced meanwhile, or with one that expired before
        // its renewal (refused, nothing done): again, with the fresh one.
        await ready();
        const stale = seatTokenExpired(err) || ConnectError.from(err).code === Code.PermissionDenied;
        if (!stale) throw err;
        if (token() === sentWith && !(seatTokenExpired(err) && (await renew()))) throw err;
        sequence = (await send()).sequence;
      }
      await caughtUp(sequence);
    } catch (err) {
      setError(errorText(err));
      refresh();
    } finally {
      setBusy(false);
    }
  };

  // One id per leave until it is answered: a retry after UNAVAILABLE is the same leave.
  const leaveId = useRef(requestId());
  const leave = async () => {
    setError("");
    try {
      const res = await session.lobby().leaveLounge({ loungeId: lounge, requestId: leaveId.current });
      leaveId.current = requestId();
      session.forgetSeat(lounge);
      goWithNotice({ name: "lobby" }, res.state === LeaveState.LEAVING ? () => t("table.leavingNotice") : res.stack > 0n ? () => t("table.leftWith", { amount: Number(res.stack) }) : "");
    } catch (err) {
      setError(errorText(err));
    }
  };

  // "Wait for the big blind" (Hold'em): sitting back in, be dealt in only when the big blind
  // reaches the seat, posting it; unticked, dealt in from the next hand owing nothing.
  const [waitForBigBlind, setWaitForBigBlind] = useState(false);
  const sitOutIn = async (out: boolean) => {
    setError("");
    try {
      if (out) await client.sitOut({ tableId: lounge, seat, requestId: requestId() });
      else await client.sitIn({ tableId: lounge, seat, requestId: requestId(), waitForBigBlind });
      // The stream's PlayerSatOut / PlayerSatIn folds into the view: no request for it.
    } catch (err) {
      setError(errorText(err));
    }
  };

  // Pre-actions (chosen before the seat's turn): applied when the turn comes, dropped when
  // the hand changes or (for "check") a bet comes in.
  const [pre, setPre] = useState<PreAction | null>(null);
  useEffect(() => {
    const h = view?.hand;
    if (!pre || !h) return;
    const r = resolvePreAction(pre, h.handId, h.currentBet, h.legalActions.map((a) => a.type));
    if (r.act === "keep") return;
    setPre(null);
    if (r.act !== "clear") act({ kind: { case: r.act, value: {} } });
  }, [view, pre]);

  // "Your turn": once each time the seat is asked to act (a new set of legal actions).
  const turnKey = view?.hand?.legalActions.length ? actionsKey(view.hand.handId, view.hand.street, view.hand.currentBet, view.hand.legalActions) : "";
  useEffect(() => {
    if (turnKey) play("turn");
  }, [turnKey]);

  const connText = conn === "limited" ? t("table.limited", { reason: limitedBy }) : t(`table.${conn}`);
  if (!view?.table) return <p class="loading" role="status" data-testid="connection">{connText}</p>;

  const table = view.table;
  const hand = view.hand;
  const mySeat = table.seats.find((s) => s.seat === seat);
  const sittingOut = mySeat?.status === SeatStatus.SITTING_OUT;
  const variant = table.config?.variant ?? Variant.NLHE;
  const myHand = hand?.seats.find((s) => s.seat === seat);
  const handLive = !!hand && hand.street !== Street.COMPLETE && hand.street !== Street.UNSPECIFIED;
  const playing = !!myHand && handLive;
  // Out of chips and in no hand: the table deals this seat no more, so say so and offer the
  // ways on (leave, or a new buy-in) instead of "Next hand coming" for ever.
  const bust = !!mySeat && outOfChips(mySeat.stack, myHand ?? null, handLive);
  const myTurn = !!hand && hand.legalActions.length > 0;
  const canPre = playing && !myTurn && !myHand!.folded && !myHand!.allIn && hand!.street !== Street.DRAW && hand!.street !== Street.SHOWDOWN;
  const preButton = (kind: PreAction["kind"], key: "table.preCheckFold" | "table.preCheck" | "table.preCallAny") => (
    <button
      class={pre?.kind === kind ? "chip-btn on" : "chip-btn"}
      aria-pressed={pre?.kind === kind}
      data-testid={`pre-${kind}`}
      onClick={() => setPre(pre?.kind === kind ? null : { kind, handId: hand!.handId, bet: hand!.currentBet })}
    >
      {t(key)}
    </button>
  );

  return (
    <div class="table-screen" data-testid="table" data-hands-done={handsDone} data-sequence={String(table.sequence)}>
      <div class="table-head">
        <h1>{loungeName(table.name)}</h1>
        <span class="fine">{variantName(variant)} · {table.config ? stakesOf(table.config) : ""}</span>
        <span class={`conn ${conn}`} role="status" data-testid="connection">{connText}</span>
        {lobbyLounge && (
          <CloseLounge
            loungeId={lounge}
            ownerId={lobbyLounge.ownerId}
            name={lobbyLounge.name}
            onClosed={(balance) => {
              session.forgetSeat(lounge);
              goWithNotice({ name: "lobby" }, () => t("close.closed", { balance: chips(balance) }));
            }}
          />
        )}
      </div>
      <div class="table-main">
        <div class="table-left">
          <Felt view={view} awards={awards} names={names} />
          <div class="controls">
            {error && <p class="error" role="alert" data-testid="action-error">{error}</p>}
            {bust ? (
              <Bust lounge={lobbyLounge} onLeave={leave} onRejoined={onRejoined}>
                <AddChips loungeId={lounge} lounge={lobbyLounge} view={view} seat={seat} />
              </Bust>
            ) : hand && hand.legalActions.length > 0 ? (
              <ActionBar
                key={actionsKey(hand.handId, hand.street, hand.currentBet, hand.legalActions.filter((a) => a.type !== ActionType.UNSPECIFIED))}
                view={view}
                seat={seat}
                busy={busy}
                onAct={act}
              />
            ) : (
              <>
                {canPre && (
                  <div class="row pre-actions" role="group" aria-label={t("table.preActions")}>
                    {preButton("checkFold", "table.preCheckFold")}
                    {preButton("check", "table.preCheck")}
                    {preButton("callAny", "table.preCallAny")}
                  </div>
                )}
                <p class="waiting fine" data-testid="waiting">
                  {table.state === TableState.WAITING ? t("table.waitingPlayers")
                    : table.state === TableState.CLOSED ? t("table.closed")
                    : hand?.toAct !== undefined ? t("table.waitingFor", { who: names(hand.toAct) })
                    : t("table.nextHand")}
                </p>
              </>
            )}
            {!bust && (
              <div class="row seat-buttons">
                <button class="ghost" data-testid="sit-out" onClick={() => sitOutIn(!sittingOut)}>{sittingOut ? t("table.sitIn") : playing ? t("table.sitOutNextHand") : t("table.sitOut")}</button>
                {sittingOut && variant === Variant.NLHE && (
                  <label class="check" data-testid="wait-for-big-blind-option">
                    <input type="checkbox" data-testid="wait-for-big-blind" checked={waitForBigBlind} onChange={(e) => setWaitForBigBlind((e.target as HTMLInputElement).checked)} />
                    {t("table.waitForBigBlind")}
                  </label>
                )}
                <button class="ghost" data-testid="leave" onClick={leave}>{t("table.leave")}</button>
              </div>
            )}
            {!bust && <AddChips loungeId={lounge} lounge={lobbyLounge} view={view} seat={seat} />}
          </div>
        </div>
        <aside class="side">
          <section class="panel log" aria-labelledby="log-title">
            <h2 id="log-title">{t("table.log")}</h2>
            <ol aria-live="polite" data-testid="log" ref={logRef}>
              {inPostingOrder(log, (l) => l.event).map((l) => <li class={l.hand ? "hand" : ""}>{logLine(l.event, names, l.raise)}</li>)}
            </ol>
          </section>
          <RecentHands lounge={lounge} ended={handsDone} />
        </aside>
      </div>
    </div>
  );
}

/** Seats around an oval, the viewer's at the bottom. */
function seatPosition(index: number, count: number): { left: string; top: string } {
  const angle = Math.PI / 2 + (2 * Math.PI * index) / count;
  return { left: `${50 + 44 * Math.cos(angle)}%`, top: `${50 + 42 * Math.sin(angle)}%` };
}

export function Felt({ view, awards, names }: { view: TableView; awards: Award[]; names: (s: number) => string }) {
  const table = view.table!;
  const hand = view.hand;
  const count = table.config?.seatCount ?? table.seats.length;
  const me = view.viewerSeat ?? 0;
  const inHand = new Map<number, HandSeat>((hand?.seats ?? []).map((s) => [s.seat, s]));
  const potTotal = (hand?.pots ?? []).reduce((n, p) => n + p.amount, 0n);
  const bets = (hand?.seats ?? []).reduce((n, s) => n + s.bet, 0n);
  const blinds = blindSeats(view);
  // Every hand the viewer can read: its own (while it plays too), and each shown at
  // showdown; the winners' cards that make their hands are highlighted.
  const boardCodes = (hand?.board ?? []).flatMap((c) => (c.kind.case === "code" ? [c.kind.value] : []));
  const made = new Map<number, Made>();
  for (const hs of hand?.seats ?? []) {
    const hole = hs.cards.flatMap((c) => (c.kind.case === "code" ? [c.kind.value] : []));
    if (hs.folded || hole.length === 0 || hole.length < hs.cards.length) continue;
    const m = bestHand([...hole, ...boardCodes]);
    if (m) made.set(hs.seat, m);
  }
  // Only after a showdown (two or more hands still in): a pot won by folds shows no hand.
  const showdown = (hand?.seats ?? []).filter((s) => !s.folded).length > 1;
  const winning = new Set<number>();
  if (showdown) for (const a of awards) for (const c of made.get(a.seat)?.cards ?? []) winning.add(c);
  const isWin = (c: Card) => c.kind.case === "code" && winning.has(c.kind.value);

  return (
    <section class="felt" aria-label={t("table.felt")}>
      <div class="felt-center">
        {hand && <div class="street" data-testid="street">{streetName(hand.street)}</div>}
        <div class="board" aria-label={t("table.board")} data-testid="board">
          {(hand?.board ?? []).map((c) => <CardView card={c} win={isWin(c)} />)}
        </div>
        {hand && (
          <div class="pots" data-testid="pots">
            {potTotal + bets > 0n && <span class="pot total" data-testid="pot" key={String(potTotal)}>{t("table.pot")}: {chips(potTotal + bets)}</span>}
            {hand.pots.length > 1 &&
              hand.pots.map((p, i) => (
                <span class="pot" data-testid="side-pot">{i === 0 ? t("table.mainPot") : t("table.sidePot", { n: i })}: {chips(p.amount)}</span>
              ))}
          </div>
        )}
        {awards.length > 0 && (
          <div class="result" role="status" data-testid="result">
            {awards.map((a) => (
              <div>{t(a.hand ? "log.winsWith" : "log.wins", { who: names(a.seat), amount: chips(a.amount), hand: handName(a.hand) })}</div>
            ))}
          </div>
        )}
      </div>
      {table.seats.map((s) => {
        const idx = (s.seat - me + count) % count;
        const winner = awards.some((a) => a.seat === s.seat);
        return <SeatView seat={s} hs={inHand.get(s.seat)} view={view} pos={seatPosition(idx, count)} blind={blinds.get(s.seat)} mine={s.seat === view.viewerSeat} made={made.get(s.seat)} isWin={isWin} winner={winner} />;
      })}
      {awards.map((a, i) => {
        const idx = table.seats.findIndex((s) => s.seat === a.seat);
        return idx < 0 ? null : <PotToWinner key={`${hand?.handId}-${i}`} to={seatPosition((a.seat - me + count) % count, count)} />;
      })}
    </section>
  );
}

/** Which seats post the blinds this hand: after the button, as the rules place them. */
function blindSeats(view: TableView): Map<number, string> {
  const out = new Map<number, string>();
  const hand = view.hand;
  if (!hand || hand.variant !== Variant.NLHE || hand.seats.length < 2) return out;
  const order = hand.seats.map((s) => s.seat).sort((a, b) => a - b);
  const after = (s: number) => order.find((x) => x > s) ?? order[0];
  const sb = order.length === 2 ? hand.button : after(hand.button);
  out.set(sb, "SB");
  out.set(after(sb), "BB");
  return out;
}

/** A stack of chips flying from the pot to a winner's seat (none with reduced motion). */
function PotToWinner({ to }: { to: { left: string; top: string } }) {
  const el = useRef<HTMLSpanElement>(null);
  const [landed, setLanded] = useState(false);
  useLayoutEffect(() => {
    if (el.current) fly(el.current, to, () => setLanded(true));
  }, []);
  return landed ? null : <span class="fly" ref={el} aria-hidden="true" data-testid="pot-fly" />;
}

function SeatView({ seat, hs, view, pos, blind, mine, made, isWin, winner }: { seat: Seat; hs?: HandSeat; view: TableView; pos: { left: string; top: string }; blind?: string; mine: boolean; made?: Made; isWin: (c: Card) => boolean; winner?: boolean }) {
  const hand = view.hand;
  if (seat.status === SeatStatus.EMPTY) {
    return <div class="seat empty" style={pos} aria-label={t("table.emptySeat")}><span class="fine">{t("table.emptySeat")}</span></div>;
  }
  const toAct = hand?.toAct === seat.seat;
  const cards: Card[] = hs?.cards ?? [];
  const cls = ["seat", mine ? "mine" : "", toAct ? "to-act" : "", hs?.folded ? "folded" : "", seat.status === SeatStatus.SITTING_OUT ? "out" : "", winner ? "winner" : ""].join(" ");
  return (
    <div class={cls} style={pos} data-testid={mine ? "my-seat" : "seat"} aria-current={toAct ? "true" : undefined}>
      <div class="seat-cards">{!hs?.folded && cards.map((c) => <CardView card={c} small={!mine} win={isWin(c)} />)}</div>
      <div class="plate">
        <span class="name" title={seatName(seat)}>{seatName(seat)}</span>
        {seat.aiLevel ? (
          <span class="badge ai">
            <span class="sr-only">{t("table.ai")} </span>
            <span data-testid="ai-level">{LEVEL_NAMES[seat.aiLevel] ? t(`ai.${LEVEL_NAMES[seat.aiLevel]}`) : t("table.ai")}</span>
          </span>
        ) : null}
        <span class="stack" data-testid="stack">{chips(hs ? hs.stack : seat.stack)}</span>
        {toAct && hand?.actionDeadline && <Clock deadline={Number(hand.actionDeadline.seconds) * 1000 + hand.actionDeadline.nanos / 1e6} />}
        {made && <span class="tag hand-name" data-testid={mine ? "my-hand" : "shown-hand"}>{t(`hand.${made.category}`)}</span>}
        {hs?.folded && <span class="tag">{t("table.folded")}</span>}
        {hs?.allIn && <span class="tag">{t("table.allIn")}</span>}
        {seat.status === SeatStatus.SITTING_OUT && (
          <span class="tag">{hs && !hs.folded && hand && hand.street !== Street.COMPLETE ? t("table.sitOutNext") : t("table.sittingOut")}</span>
        )}
        {seat.waitingForBigBlind && !hs && <span class="tag" data-testid="waiting-for-big-blind">{t("table.waitingForBigBlind")}</span>}
        {hs && hs.drawnCount > 0 && <span class="tag">{t("table.drew", { n: hs.drawnCount })}</span>}
      </div>
      <div class="markers">
        {hand?.button === seat.seat && <span class="dealer" title={t("table.button")} aria-label={t("table.button")}>D</span>}
        {blind && <span class="blind">{blind}</span>}
        {hs && hs.bet > 0n && <span class="bet" aria-label={t("table.betOf", { amount: chips(hs.bet) })}>{chips(hs.bet)}</span>}
      </div>
    </div>
  );
}

function Clock({ deadline }: { deadline: number }) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 250);
    return () => clearInterval(timer);
  }, []);
  const left = Math.max(0, Math.ceil((deadline - now) / 1000));
  return (
    <span class={left <= 5 ? "clock urgent" : "clock"} role="timer" aria-label={t("table.secondsLeft", { n: left })} data-testid="clock">
      {left}s
    </span>
  );
}

/** The seat is out of chips: add chips to the seat (``children``: the AddChips form), leave
 * (its chips, none, settle), or buy in again (leave, then JoinLounge with a new buy-in from the
 * balance, through the lobby's ledger). */
function Bust({ lounge, onLeave, onRejoined, children }: {
  lounge: Lounge | null; onLeave: () => void; onRejoined: () => void; children?: ComponentChildren;
}) {
  const [balance, setBalance] = useState<bigint | null>(null);
  const left = useRef(false);
  const leaveId = useRef(requestId()); // one leave, however often the join is retried
  const leaveOnce = async () => {
    if (left.current || !lounge) return;
    try {
      await session.lobby().leaveLounge({ loungeId: lounge.loungeId, requestId: leaveId.current });
    } catch (err) {
      if (!refusedFor(err, Reason.NOT_SEATED)) throw err;
    }
    left.current = true;
    session.forgetSeat(lounge.loungeId);
  };
  const rebuy = async () => {
    try {
      setBalance((await session.lobby().getBalance({})).balance);
    } catch {
      setBalance(0n);
    }
  };
  return (
    <section class="panel bust" role="status" aria-labelledby="bust-title" data-testid="bust">
      <h2 id="bust-title">{t("table.bustTitle")}</h2>
      <p>{t("table.bustText")}</p>
      {children}
      <div class="row">
        <button class="secondary" data-testid="bust-leave" onClick={onLeave}>{t("table.leave")}</button>
        <button class="primary" data-testid="bust-rebuy" disabled={!lounge} onClick={rebuy}>{t("table.buyInAgain")}</button>
      </div>
      {lounge && balance !== null && (
        <JoinDialog lounge={lounge} balance={balance} before={leaveOnce} onJoined={onRejoined} onClose={() => setBalance(null)} />
      )}
    </section>
  );
}
