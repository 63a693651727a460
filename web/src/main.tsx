import { render } from "preact";
import { App } from "./app";
import { setLanguage } from "./i18n";
import "./style.css";

setLanguage().finally(() => render(<App />, document.getElementById("app")!));
