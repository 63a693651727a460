// Screens are addressed by the URL's hash, so a reload lands on the same screen:
// #/ (lobby), #/table/<lounge id>, #/hands (the player's hands), #/replay/<table id>/<hand's
// public id>. A hash that is not one of these (a malformed `%` escape, an unknown screen, a
// missing id) is the lobby: a bad link never blanks the page.
import { useEffect, useState } from "preact/hooks";

export type Route =
  | { name: "lobby" }
  | { name: "table"; lounge: string }
  | { name: "hands" }
  | { name: "replay"; lounge: string; hand: string };

/** Ids are short (UUIDs, "<table>:<n>" hand ids): a longer part is not a link we made. */
const MAX_PART = 200;

/** One path part decoded, or null when its escapes are malformed ("%E0%A4%A", "%zz"). */
function decodePart(part: string): string | null {
  try {
    return decodeURIComponent(part);
  } catch {
    return null;
  }
}

export function parse(hash: string): Route {
  const raw = hash.replace(/^#\/?/, "").split("/");
  const parts = raw.map(decodePart);
  if (parts.some((p) => p === null || p.length > MAX_PART)) return { name: "lobby" };
  const [screen, a, b] = parts as string[];
  if (screen === "table" && a && raw.length === 2) return { name: "table", lounge: a };
  if (screen === "hands" && raw.length === 1) return { name: "hands" };
  if (screen === "replay" && a && b && raw.length === 3) return { name: "replay", lounge: a, hand: b };
  return { name: "lobby" };
}

export function href(route: Route): string {
  const parts =
    route.name === "table" ? ["table", route.lounge]
    : route.name === "replay" ? ["replay", route.lounge, route.hand]
    : route.name === "hands" ? ["hands"]
    : [];
  return "#/" + parts.map(encodeURIComponent).join("/");
}

export function go(route: Route): void {
  location.hash = href(route);
}

/** A one-time message for the next screen (the lobby shows it): why the player landed there
 * (a closed lounge, an unknown table link, an ended session). A function makes the text in
 * the page's language when it is shown, at each render, so the notice follows a language
 * switch; a string stays as it is. */
export type Notice = string | (() => string);
let pending: Notice = "";
const noticeListeners = new Set<() => void>();

export function goWithNotice(route: Route, notice: Notice): void {
  pending = notice;
  noticeListeners.forEach((f) => f());
  go(route);
}

/** The notice's text now. */
export function noticeText(notice: Notice): string {
  return typeof notice === "function" ? notice() : notice;
}

/** The notice waiting to be shown ("" when none), and a way to dismiss it. */
export function useNotice(): [Notice, () => void] {
  // Held in a wrapper: a function given to useState or its setter would be called by it.
  const [held, setHeld] = useState<{ notice: Notice }>({ notice: pending });
  useEffect(() => {
    const on = () => setHeld({ notice: pending });
    noticeListeners.add(on);
    return () => void noticeListeners.delete(on);
  }, []);
  return [held.notice, () => { pending = ""; setHeld({ notice: "" }); }];
}

export function useRoute(): Route {
  const [route, setRoute] = useState(parse(location.hash));
  useEffect(() => {
    const on = () => setRoute(parse(location.hash));
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return route;
}
