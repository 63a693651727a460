// Screens are addressed by the URL's hash, so a reload lands on the same screen:
// #/ (lobby), #/table/<lounge id>, #/hands (the player's hands), #/replay/<table id>/<hand's
// public id>.
import { useEffect, useState } from "preact/hooks";

export type Route =
  | { name: "lobby" }
  | { name: "table"; lounge: string }
  | { name: "hands" }
  | { name: "replay"; lounge: string; hand: string };

export function parse(hash: string): Route {
  const parts = hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  if (parts[0] === "table" && parts[1]) return { name: "table", lounge: parts[1] };
  if (parts[0] === "hands") return { name: "hands" };
  if (parts[0] === "replay" && parts[1]) return { name: "replay", lounge: parts[1], hand: parts[2] ?? "" };
  return { name: "lobby" };
}

export function go(route: Route): void {
  const parts =
    route.name === "table" ? ["table", route.lounge]
    : route.name === "replay" ? ["replay", route.lounge, route.hand]
    : route.name === "hands" ? ["hands"]
    : [];
  location.hash = "#/" + parts.map(encodeURIComponent).join("/");
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
