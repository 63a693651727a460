// The page: a header (name, balance, language) and one screen: the lobby, a table, the
// player's hands or a replay.
import { useEffect, useState } from "preact/hooks";
import { onSessionLost } from "./lost";
import { errorText } from "./errors";
import { LANGUAGES, language, setLanguage, t } from "./i18n";
import * as session from "./session";
import { useRoute, go, useNotice, noticeText } from "./route";
import { Welcome, LobbyScreen } from "./lobby";
import { TableScreen } from "./table";
import { ReplayScreen } from "./replay";
import { HandsScreen } from "./hands";
import { isMuted, onMuteChange, setMuted } from "./sound";

export function App() {
  const [lang, setLang] = useState(language());
  const [me, setMe] = useState(session.current());
  const route = useRoute();
  const [notice, dismiss] = useNotice();
  const [muted, setMute] = useState(isMuted());
  useEffect(() => onMuteChange(setMute), []);
  // A session the servers no longer know (signed out elsewhere, or the servers restarted
  // with new secrets): the sign-in screen, saying so, not a half-signed-in lobby.
  // The refusal is kept, not its sentence: the note is made at each render, in the page's
  // language then.
  const [lost, setLost] = useState<{ err: unknown } | null>(null);
  const lostNote = lost ? t("app.sessionLost", { reason: errorText(lost.err) }) : "";
  useEffect(
    () =>
      onSessionLost((err) => {
        session.clear();
        setMe(null);
        setLost({ err });
      }),
    [],
  );

  const signOut = async () => {
    try {
      await session.lobby().signOut({ requestId: crypto.randomUUID() });
    } catch {
      /* signed out locally either way */
    }
    session.clear();
    setMe(null);
    go({ name: "lobby" });
  };

  return (
    <div class="page">
      <header class="top">
        <a class="logo" href="#/" aria-label={t("app.home")}>
          <span aria-hidden="true">♠</span> Felt
        </a>
        <div class="top-right">
          {me && (
            <span class="who" data-testid="player-name">
              {me.name}
              {!me.registered && <span class="badge">{t("lobby.guest")}</span>}
            </span>
          )}
          <label class="lang">
            <span class="sr-only">{t("app.language")}</span>
            <select
              data-testid="language"
              value={lang}
              onChange={async (e) => {
                const code = (e.target as HTMLSelectElement).value;
                await setLanguage(code);
                setLang(code);
              }}
            >
              {LANGUAGES.map((l) => (
                <option value={l.code}>{l.name}</option>
              ))}
            </select>
          </label>
          <button
            class="ghost sound"
            data-testid="mute"
            aria-pressed={muted}
            aria-label={t("app.mute")}
            title={t("app.mute")}
            onClick={() => setMuted(!muted)}
          >
            <svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round">
              <path d="M4 9h4l5-4v14l-5-4H4z" fill="currentColor" />
              {muted ? <path d="M17 9l5 6M22 9l-5 6" /> : <path d="M16.5 8.5a5 5 0 0 1 0 7M19.5 5.5a9 9 0 0 1 0 13" />}
            </svg>
          </button>
          {me && (
            <button class="ghost" onClick={signOut}>
              {t("app.signOut")}
            </button>
          )}
        </div>
      </header>
      <main id="main">
        {notice && route.name === "lobby" && me && (
          <p class="notice" role="status" data-testid="notice">
            {noticeText(notice)}
            <button class="ghost small" aria-label={t("app.dismiss")} onClick={dismiss}>✕</button>
          </p>
        )}
        {!me ? (
          <Welcome note={lostNote} onSignedIn={() => { setLost(null); setMe(session.current()); }} />
        ) : route.name === "table" ? (
          <TableScreen lounge={route.lounge} />
        ) : route.name === "hands" ? (
          <HandsScreen />
        ) : route.name === "replay" ? (
          <ReplayScreen lounge={route.lounge} hand={route.hand} />
        ) : (
          <LobbyScreen />
        )}
      </main>
    </div>
  );
}
