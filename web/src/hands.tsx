// The player's own hands, from the server's hand archive (HistoryService.ListPlayerHands,
// newest first, paged) with the player's statistics over all of them; each hand opens in the
// replay (GetHandHistory, as the player's seat saw it). Only finished hands the projector has
// archived are listed, so a hand shows up a moment after it ends.
import { useEffect, useRef, useState } from "preact/hooks";
import * as session from "./session";
import { errorText } from "./errors";
import { t, chips, language, type Key } from "./i18n";
import { reportIfLost } from "./lost";
import { go } from "./route";
import { variantName } from "./lobby";
import type { PlayerHand, PlayerStats } from "./gen/poker/v1/history_service_pb";

const PAGE = 20;

/** `part` of `whole` as a whole percentage ("–" when there is no whole). */
function percent(part: bigint, whole: bigint): string {
  return whole > 0n ? `${Math.round((Number(part) * 100) / Number(whole))}%` : "–";
}

function signed(n: bigint): string {
  return n > 0n ? `+${chips(n)}` : n < 0n ? `−${chips(-n)}` : chips(0n);
}

export function replayHref(h: PlayerHand): string {
  return `#/replay/${encodeURIComponent(h.tableId)}/${encodeURIComponent(h.handId)}`;
}

function Stats({ stats }: { stats: PlayerStats }) {
  const n = stats.handsPlayed;
  const rows: [Key, string, string][] = [
    ["hands.played", String(n), "played"],
    ["hands.net", signed(stats.netChips), "net"],
    ["hands.vpip", percent(stats.voluntarilyPutIn, n), "vpip"],
    ["hands.pfr", percent(stats.raisedFirstRound, n), "pfr"],
    ["hands.wentToShowdown", percent(stats.wentToShowdown, n), "wtsd"],
    ["hands.wonAtShowdown", percent(stats.wonAtShowdown, stats.wentToShowdown), "wsd"],
  ];
  return (
    <dl class="stats" data-testid="hand-stats">
      {rows.map(([key, value, id]) => (
        <div>
          <dt>{t(key)}</dt>
          <dd data-testid={`stat-${id}`}>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

export function HandsScreen() {
  const [hands, setHands] = useState<PlayerHand[]>([]);
  const [stats, setStats] = useState<PlayerStats | null>(null);
  const [next, setNext] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");

  const load = async (pageToken: string) => {
    setBusy(true);
    setError("");
    try {
      const res = await session.history().listPlayerHands({ pageSize: PAGE, pageToken });
      setHands((h) => (pageToken ? [...h, ...res.hands] : res.hands));
      setStats(res.stats ?? null);
      setNext(res.nextPageToken);
    } catch (err) {
      if (!reportIfLost(err)) setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  useEffect(() => {
    load("");
  }, []);

  return (
    <section class="panel hands" aria-labelledby="hands-title">
      <div class="table-head">
        <h1 id="hands-title">{t("hands.title")}</h1>
        <button class="ghost" onClick={() => go({ name: "lobby" })}>{t("replay.back")}</button>
      </div>
      {error && <p class="error" role="alert">{error}</p>}
      {stats && <Stats stats={stats} />}
      {stats && hands.length === 0 ? (
        <p class="fine">{t("hands.none")}</p>
      ) : (
        <table class="list">
          <thead>
            <tr><th>{t("hands.ended")}</th><th>{t("lobby.variant")}</th><th>{t("hands.result")}</th><th>{t("hands.showdown")}</th><th><span class="sr-only">{t("hands.replay")}</span></th></tr>
          </thead>
          <tbody>
            {hands.map((h) => (
              <tr data-testid="hand-row">
                <td>{h.endedAt ? new Date(Number(h.endedAt.seconds) * 1000).toLocaleString() : ""}</td>
                <td>{variantName(h.variant)}</td>
                <td class={h.net > 0n ? "net-up" : h.net < 0n ? "net-down" : ""} data-testid="hand-net">{signed(h.net)}</td>
                <td>{h.wonAtShowdown ? t("hands.wonShowdown") : h.wentToShowdown ? t("hands.lostShowdown") : ""}</td>
                <td><a href={replayHref(h)} data-testid="hand-replay">{t("hands.replay")}</a></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {next && (
        <button class="secondary" data-testid="hands-more" disabled={busy} onClick={() => load(next)}>{t("hands.more")}</button>
      )}
    </section>
  );
}

/** The player's latest archived hands at one table (the first page of its hands, filtered):
 * loaded when the table opens, then once each time `ended` (the count of hands seen to end)
 * changes, after the projector's lag: one request a hand, for what only the archive holds. */
// How long after a hand's end its archived record is looked for (the projector's lag).
const ARCHIVE_LAG_MS = 2000;

export function RecentHands({ lounge, ended }: { lounge: string; ended: number }) {
  const [hands, setHands] = useState<PlayerHand[]>([]);
  const live = useRef(true);
  const pending = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const load = async () => {
    try {
      const res = await session.history().listPlayerHands({ pageSize: 50 });
      if (live.current) setHands(res.hands.filter((h) => h.tableId === lounge));
    } catch {
      /* the list stays as it was; the game goes on */
    }
  };
  useEffect(() => {
    live.current = true;
    load();
    return () => {
      live.current = false;
      clearTimeout(pending.current);
      pending.current = undefined;
    };
  }, [lounge]);
  const latest = useRef(ended);
  latest.current = ended;
  useEffect(() => {
    // A hand that just ended is archived a moment later: look then, not now. A later end
    // does not cancel the look; one that came while it waited gets a look of its own after.
    if (!ended || pending.current !== undefined) return;
    const wait = (seen: number) => {
      pending.current = setTimeout(() => {
        pending.current = undefined;
        load();
        if (latest.current !== seen && live.current) wait(latest.current);
      }, ARCHIVE_LAG_MS);
    };
    wait(ended);
  }, [ended]);
  return (
    <section class="panel replays" aria-labelledby="replays-title">
      <h2 id="replays-title">{t("table.pastHands")}</h2>
      {hands.length > 0 ? (
        <ul>
          {hands.slice(0, 6).map((h) => (
            <li>
              <a href={replayHref(h)} data-testid="replay-link">{t("table.replayHand", { time: h.endedAt ? new Date(Number(h.endedAt.seconds) * 1000).toLocaleTimeString(language()) : "" })}</a>{" "}
              <span class="fine">{signed(h.net)}</span>
            </li>
          ))}
        </ul>
      ) : (
        <p class="fine">{t("hands.noneHere")}</p>
      )}
      <a href="#/hands" data-testid="all-hands">{t("hands.all")}</a>
    </section>
  );
}
