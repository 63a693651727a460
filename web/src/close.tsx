// "Close lounge", for its owner only: a confirm step, then CloseLounge. The lobby answers
// CLOSING (the hand in play ends first, then every seat's chips go home as "table closed"
// ledger entries) or CLOSED; the lounge is then watched (GetLounge) until it is CLOSED, and
// the owner's balance shown, so the owner sees the settlement done, not only asked for.
import { useEffect, useRef, useState } from "preact/hooks";
import * as session from "./session";
import { requestId } from "./api";
import { errorText } from "./errors";
import { t, chips } from "./i18n";
import { LoungeState } from "./gen/poker/v1/lobby_pb";

const POLL_MS = 1500;
const POLL_FOR_MS = 120_000;

type Phase = { name: "idle" } | { name: "confirm" } | { name: "busy" } | { name: "closing" } | { name: "closed"; balance: bigint };

/** `onClosing` is told when the lobby has taken the close (a list keeps the lounge shown then,
 * though the lobby no longer lists it, so the result stays in view). */
export function CloseLounge({ loungeId, ownerId, name, onClosing, onClosed }: { loungeId: string; ownerId: string; name: string; onClosing?: () => void; onClosed?: (balance: bigint) => void }) {
  const [phase, setPhase] = useState<Phase>({ name: "idle" });
  const [error, setError] = useState("");
  // One request id per confirmed close: a retry after an error resends the same close.
  const rid = useRef("");
  const live = useRef(true);
  useEffect(() => () => void (live.current = false), []);
  if (session.current()?.playerId !== ownerId) return null;

  const settled = async () => {
    const balance = (await session.lobby().getBalance({})).balance;
    if (onClosed) onClosed(balance);
    else if (live.current) setPhase({ name: "closed", balance });
  };

  const watch = async () => {
    const until = Date.now() + POLL_FOR_MS;
    while (live.current && Date.now() < until) {
      await new Promise((r) => setTimeout(r, POLL_MS));
      try {
        const res = await session.lobby().getLounge({ loungeId });
        if (res.lounge?.state === LoungeState.CLOSED) return await settled();
      } catch {
        /* the next look may answer; the lobby settles by itself either way */
      }
    }
  };

  const close = async () => {
    setError("");
    setPhase({ name: "busy" });
    rid.current ||= requestId();
    try {
      const res = await session.lobby().closeLounge({ loungeId, requestId: rid.current });
      onClosing?.();
      if (res.lounge?.state === LoungeState.CLOSED) await settled();
      else {
        setPhase({ name: "closing" });
        watch();
      }
    } catch (err) {
      setError(errorText(err));
      setPhase({ name: "idle" });
    }
  };

  return (
    <div class="close-lounge">
      {phase.name === "idle" && (
        <button class="ghost danger" data-testid="close-lounge" onClick={() => setPhase({ name: "confirm" })}>{t("close.button")}</button>
      )}
      {(phase.name === "confirm" || phase.name === "busy") && (
        <div class="confirm" role="alertdialog" aria-labelledby={`close-${loungeId}`} onKeyDown={(e) => e.key === "Escape" && setPhase({ name: "idle" })}>
          <p id={`close-${loungeId}`}>{t("close.confirm", { name })}</p>
          <div class="row">
            <button class="ghost" onClick={() => setPhase({ name: "idle" })}>{t("app.cancel")}</button>
            <button class="primary danger" data-testid="close-confirm" disabled={phase.name === "busy"} autoFocus onClick={close}>{t("close.yes")}</button>
          </div>
        </div>
      )}
      {phase.name === "closing" && <p class="ok" role="status" data-testid="close-result">{t("close.closing")}</p>}
      {phase.name === "closed" && <p class="ok" role="status" data-testid="close-result">{t("close.closed", { balance: chips(phase.balance) })}</p>}
      {error && <p class="error" role="alert" data-testid="close-error">{error}</p>}
    </div>
  );
}
