// "Add chips" at the table: AddSeatChips moves chips from the balance to the player's own seat,
// between that seat's hands (a rebuy once busted, or a top-up to the lounge's maximum), through
// the lobby's saga. One request id per intended add: a retry after an unknown outcome (the
// server did not answer) resends the same add, which the lobby answers as the first time, so
// the chips move once; after a definite refusal the next try is a new request. Out of chips,
// the choice is shown prominently: add chips, or leave the table.
import { useRef, useState } from "preact/hooks";
import { ConnectError, Code } from "@connectrpc/connect";
import * as session from "./session";
import { requestId } from "./api";
import { errorText } from "./errors";
import { t, chips } from "./i18n";
import type { Lounge } from "./gen/poker/v1/lobby_pb";
import type { TableView } from "./gen/poker/v1/table_pb";
import { Street } from "./gen/poker/events/v1/events_pb";

/** The outcome may be unknown (the chips may be held for the seat): resend the same request. */
function unknownOutcome(err: unknown): boolean {
  const code = ConnectError.from(err).code;
  return code === Code.Unavailable || code === Code.DeadlineExceeded || code === Code.Unknown || code === Code.Internal;
}

export function AddChips({ loungeId, lounge, view, seat }: {
  loungeId: string;
  lounge: Lounge | null;
  view: TableView;
  seat: number;
}) {
  const [open, setOpen] = useState(false);
  const [amount, setAmount] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  const [done, setDone] = useState("");
  const pending = useRef<{ amount: bigint; id: string } | null>(null);

  const mine = view.table?.seats.find((s) => s.seat === seat);
  if (!mine?.playerId || !lounge) return null;
  const hand = view.hand;
  const inHand = !!hand?.handId && hand.street !== Street.COMPLETE && hand.seats.some((s) => s.seat === seat);
  const room = lounge.maxBuyIn > mine.stack ? lounge.maxBuyIn - mine.stack : 0n;
  const out = mine.stack === 0n && !inHand;

  const send = async (wanted: bigint) => {
    setError("");
    setDone("");
    setBusy(true);
    if (pending.current?.amount !== wanted) pending.current = { amount: wanted, id: requestId() };
    try {
      const res = await session.lobby().addSeatChips({ loungeId, amount: wanted, requestId: pending.current.id });
      pending.current = null;
      setOpen(false);
      setAmount("");
      setDone(t("chips.added", { amount: chips(res.amount), stack: chips(res.stack) }));
    } catch (err) {
      if (!unknownOutcome(err)) pending.current = null;
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  const typed = /^\d{1,13}$/.test(amount.trim()) ? BigInt(amount.trim()) : 0n;
  const form = (
    <form class="row add-chips-form" onSubmit={(e) => { e.preventDefault(); if (typed > 0n) send(typed); }}>
      <label class="fine">
        {t("chips.amount")}{" "}
        <input type="number" inputMode="numeric" min={1} max={String(room)} value={amount} data-testid="add-chips-amount"
          onInput={(e) => setAmount((e.target as HTMLInputElement).value)} disabled={busy} />
      </label>
      <button type="submit" class="primary" disabled={busy || typed <= 0n || typed > room} data-testid="add-chips-send">{t("chips.add")}</button>
      <button type="button" class="ghost" disabled={busy || room === 0n} data-testid="add-chips-max" onClick={() => send(0n)}>
        {t("chips.toMax", { amount: chips(lounge.maxBuyIn) })}
      </button>
    </form>
  );
  const notes = (
    <>
      {error && <p class="error" role="alert" data-testid="add-chips-error">{error}</p>}
      {done && <p class="fine" role="status" data-testid="add-chips-done">{done}</p>}
    </>
  );

  if (out) {
    // Inside the table's out-of-chips panel, which says why and offers leaving.
    return (
      <div class="add-chips-out" data-testid="out-of-chips">
        {form}
        {notes}
      </div>
    );
  }
  return (
    <div class="add-chips">
      {open ? (
        <>
          {inHand ? <p class="fine">{t("chips.betweenHands")}</p> : form}
          <button type="button" class="ghost" onClick={() => { setOpen(false); setError(""); }}>{t("app.cancel")}</button>
        </>
      ) : (
        <button class="ghost" data-testid="add-chips" disabled={room === 0n} onClick={() => { setOpen(true); setDone(""); }}>
          {t("chips.add")}
        </button>
      )}
      {notes}
    </div>
  );
}
