// House Of Decks web page: draws the view the server sends and posts the chosen action.
// No rules here: the server (hod.apps.web) decides what is legal and what happens.
"use strict";

function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") el.className = v; else if (k === "text") el.textContent = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v); else el.setAttribute(k, v);
  }
  for (const kid of kids.flat()) if (kid !== null && kid !== undefined) el.append(kid);
  return el;
}
const $ = (id) => document.getElementById(id);

async function api(method, url, body) {
  const r = await fetch(url, {method, headers: {"Content-Type": "application/json"},
                              body: body === undefined ? undefined : JSON.stringify(body)});
  const data = await r.json();
  return {status: r.status, data};
}

// ---- the new-game page -------------------------------------------------------------------
async function newGamePage() {
  const opts = (await api("GET", "/api/options")).data;
  const gameBox = $("games");
  for (const [game, o] of Object.entries(opts)) {
    gameBox.append(h("label", {}, h("input", {type: "radio", name: "game", value: game,
      checked: game === "tapeo", onchange: () => fill(game, true)}), " " + o.title));
  }
  function fill(game, resetPlayers) {
    const o = opts[game], sel = $("players");
    const was = Number(sel.value);
    sel.replaceChildren(...o.players.map((n) => h("option", {value: n, text: n})));
    sel.value = (!resetPlayers && o.players.includes(was)) ? was : o.default_players;
    const n = Number(sel.value), def = o.default_opponent[n];
    $("seat").replaceChildren(...Array.from({length: n}, (_, i) => h("option", {value: i,
      text: String(i)})));
    $("opponents").replaceChildren(...Array.from({length: n - 1}, (_, k) => h("label", {},
      `${k === 0 ? "On your left" : `${k + 1}th to your left`.replace(/^2th/, "2nd").replace(/^3th/, "3rd")} `,
      h("select", {class: "opponent", "aria-label": `opponent ${k + 1} to your left`},
        o.bots.filter((b) => b.players.includes(n)).map((b) => h("option", {value: b.name, selected: b.name === def,
          text: `${b.name} (${b.label}${b.rating === null ? "" : ", rating " + b.rating})`}))))));
  }
  $("players").addEventListener("change", () => fill(document.querySelector("input[name=game]:checked").value, false));
  fill("tapeo", true);
  $("form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const seed = $("seed").value.trim();
    if (seed !== "" && !(/^[0-9]+$/.test(seed) && Number.isSafeInteger(Number(seed)))) {
      $("error").textContent = `seed ${seed}: legal values: a whole number in 0..${Number.MAX_SAFE_INTEGER} `
        + "(the integers the page holds exactly), or empty for a fresh one";
      return;
    }
    const body = {game: document.querySelector("input[name=game]:checked").value, players: Number($("players").value),
                  seat: Number($("seat").value),
                  opponents: [...document.querySelectorAll(".opponent")].map((s) => s.value),
                  seed: seed === "" ? null : Number(seed)};
    const r = await api("POST", "/api/games", body);
    if (r.status === 201) location.assign(r.data.url); else $("error").textContent = r.data.error;
  });
}

// ---- drawing cards -----------------------------------------------------------------------
function tapa(t, extra) {
  return h("span", {class: `tapa k-${t.kind}`, "data-kind": t.kind, title: t.name},
    h("span", {class: "tname", text: t.name}), t.count > 1 ? h("span", {class: "count", text: "×" + t.count}) : null, extra);
}
const SUIT_SVG = {  // small drawings of the Spanish suits
  oros: '<circle cx="10" cy="10" r="7" fill="#d4a017" stroke="#8a6500" stroke-width="2"/>',
  copas: '<path d="M4 3h12c0 6-3 8-5 8v4h3v2H6v-2h3v-4c-2 0-5-2-5-8z" fill="#c0392b"/>',
  espadas: '<path d="M10 1l2 12h-4zM5 13h10v2H5zM9 15h2v4H9z" fill="#2c5aa0"/>',
  bastos: '<path d="M8 2c3 0 4 2 4 4l-1 12H9L8 6C7 4 6 2 8 2z" fill="#2e7d32"/>',
};
function card(c) {
  const svg = h("span", {class: "suit-icon"});
  svg.innerHTML = `<svg viewBox="0 0 20 20" width="20" height="20" aria-hidden="true">${SUIT_SVG[c.suit]}</svg>`;
  return h("span", {class: `card suit-${c.suit}`, "data-card": c.key, title: c.name, "aria-label": c.name},
    h("span", {class: "rank", text: c.rank}), svg);
}
const backs = (n) => h("span", {class: "backs", "aria-label": `${n} cards in hand`},
  Array.from({length: n}, () => h("span", {class: "card back"})));

// ---- the game page -----------------------------------------------------------------------
let current = null;
const gameId = location.pathname.split("/").pop();

const seedText = (v) => v.seed === null ? "" : ` · seed ${v.seed}`;   // a drawn seed is shown at the end

function seatLine(v, s) {
  return h("h3", {}, s.name, s.bot ? h("small", {text: ` ${s.label}${s.rating === null ? "" : " · " + s.rating}`}) : null);
}

function drawTapeo(v) {
  const t = v.table;
  $("info").textContent = (v.over ? "game over"
    : `round ${t.round}/${t.rounds} · pick ${t.pick} of ${t.picks} · ${t.in_hand} tapas in each hand`) + seedText(v);
  $("seats").replaceChildren(...t.bars.map((b) => h("div", {class: "seat" + (v.seats[b.seat].you ? " you" : ""), "data-seat": b.seat},
    seatLine(v, v.seats[b.seat]), h("p", {text: `score ${b.score} · churros ${b.churros}`}),
    h("div", {class: "bar", "aria-label": "bar"}, b.tapas.length ? b.tapas.map((x) => tapa(x)) : h("em", {text: "empty bar"})))));
  const parts = [];
  for (const r of t.reveals) {
    parts.push(h("div", {class: "reveal"}, h("h3", {text: r.last ? `Round ${r.round}: last tapas, revealed by themselves`
      : `Round ${r.round}, pick ${r.pick} revealed`}),
      r.tapas.map((x) => h("div", {class: "revealed"}, h("span", {class: "who", text: v.seats[x.seat].name}),
        tapa(x, x.stolen_by === null ? null : h("span", {class: "stolen", text: ` taken by ${v.seats[x.stolen_by].name}'s Freeloader`})))),
      r.steals.map((st) => h("p", {class: "steal", text: st.tapa === null
        ? `Freeloader: ${v.seats[st.thief].name} steals nothing: ${v.seats[st.victim].name} also revealed a Freeloader.`
        : `Freeloader: ${v.seats[st.thief].name} steals the ${st.tapa} ${v.seats[st.victim].name} revealed, onto their bar.`}))));
  }
  for (const k of t.known_hands) {
    parts.push(h("div", {class: "known", "data-hand-of": k.seat}, h("span", {class: "who",
      text: `${v.seats[k.seat].name} now holds a hand you passed:`}), k.tapas.map((x) => tapa(x))));
  }
  if (t.scoring.length) {
    const last = t.scoring[t.scoring.length - 1];
    parts.push(h("table", {class: "scoring"}, h("caption", {text: `Round ${last.round} scoring`}),
      h("tr", {}, h("th"), last.rules.map((r) => h("th", {text: r})), h("th", {text: "round"})),
      last.rows.map((r) => h("tr", {}, h("th", {text: v.seats[r.seat].name}), r.points.map((p) => h("td", {text: p})),
        h("td", {text: r.total})))));
  }
  $("table").replaceChildren(...parts);
  $("prompt").textContent = v.choices.length ? `Your hand (${t.in_hand} tapas): pick one` : "";
  $("choices").replaceChildren(...v.choices.map((c, i) => h("button", {class: "choice hand-tapa", "data-action": c.action,
    title: c.label, "aria-label": `${keyOf(i)}: ${c.label}`, onclick: () => play(c.action)},
    tapa({kind: c.name, name: c.tapa, count: c.count}), h("span", {class: "hint", text: c.hint}))));
  if (t.result) drawResult(v, ["rounds", "churros", "churro_points", "final"], ["rounds", "churros kept", "churro points", "final"]);
}

function drawRobada(v) {
  const t = v.table;
  $("info").textContent = `deck: ${t.deck} cards left` + (v.over ? " · game over" : "") + seedText(v);
  $("seats").replaceChildren(...t.piles.map((p) => h("div", {class: "seat" + (v.seats[p.seat].you ? " you" : "")
      + (t.to_act === p.seat ? " to-act" : ""), "data-seat": p.seat},
    seatLine(v, v.seats[p.seat]),
    h("p", {text: `${p.points} pts · pile ${p.size} cards` + (t.last_runner === p.seat ? " · last run" : "")}),
    h("div", {class: "pile"}, p.top ? card(p.top) : h("em", {text: "empty pile"})),
    v.seats[p.seat].you ? null : backs(p.in_hand))));
  const parts = [];
  if (v.recent.length) parts.push(h("div", {class: "recent"}, h("h3", {text: "Since your last choice"}),
    h("ul", {}, v.recent.map((line) => h("li", {text: line.trim()})))));
  parts.push(h("div", {class: "loose"}, h("h3", {text: `Loose cards (${t.loose.length})`}), t.loose.map(card)));
  if (t.run) parts.push(h("div", {class: "run"}, h("h3", {text: `Run in progress: ${t.run.cards.length} cards, ${t.run.points} pts; it ${t.run.need}`}),
    t.run.cards.map(card)));
  parts.push(h("div", {class: "hand"}, h("h3", {text: "Your hand"}), t.hand.map(card)));
  $("table").replaceChildren(...parts);
  $("prompt").textContent = v.choices.length ? "Your choice" : (v.over ? "" : "The computer is playing…");
  $("choices").replaceChildren(...v.choices.map((c, i) => h("button", {class: "choice", "data-action": c.action,
    "aria-label": `${keyOf(i)}: ${c.name}: ${c.label}`, onclick: () => play(c.action)},
    h("b", {text: `${keyOf(i)}. ${c.name}`}), " ", c.label)));
  if (t.result) drawResult(v, ["cards", "points"], ["pile cards", "points"]);
}

function drawResult(v, keys, heads) {
  const r = v.table.result;
  const who = r.winners.map((w) => v.seats[w].name).join(" and ");
  $("result").replaceChildren(h("h2", {text: "Game over"}),
    h("table", {class: "final"}, h("tr", {}, h("th"), heads.map((x) => h("th", {text: x}))),
      r.rows.map((row) => h("tr", {class: r.winners.includes(row.seat) ? "winner" : null}, h("th", {text: v.seats[row.seat].name}),
        keys.map((k) => h("td", {text: row[k]}))))),
    h("p", {id: "winner", text: (r.winners.length > 1 ? "Shared win: " : "Winner: ") + who + "."}),
    h("a", {id: "record", href: `/api/games/${v.id}/record`, download: "", text: "Download the game record (JSON)"}));
}

function draw(v) {
  current = v;
  document.title = `${v.title} · House Of Decks`;
  $("title").textContent = v.title;
  document.body.dataset.step = v.step;
  document.body.dataset.over = v.over;
  $("result").replaceChildren();
  (v.game === "tapeo" ? drawTapeo : drawRobada)(v);
  const log = $("log");
  log.textContent = v.log.join("\n");
  log.scrollTop = log.scrollHeight;
}

// The keys that choose the 1st..10th choice (a Tapeo hand can show all 10 kinds): 1..9, then 0.
const CHOICE_KEYS = "1234567890";

function keyOf(i) {
  return CHOICE_KEYS[i] ?? "";
}

function focusChoice(index) {   // the buttons are redrawn after a move: focus the same place again
  const buttons = document.querySelectorAll("button.choice");
  if (buttons.length) buttons[Math.min(Math.max(index, 0), buttons.length - 1)].focus();
}

async function play(action) {
  const buttons = [...document.querySelectorAll("button.choice")];
  const index = buttons.indexOf(document.activeElement);
  for (const b of buttons) b.disabled = true;
  const r = await api("POST", `/api/games/${gameId}/actions`, {step: current.step, action});
  if (r.status === 200) { $("error").textContent = ""; draw(r.data); focusChoice(index); return; }
  $("error").textContent = r.data.error;
  draw((await api("GET", `/api/games/${gameId}`)).data);   // a stale page catches up
  focusChoice(index);
}

async function gamePage() {
  const r = await api("GET", `/api/games/${gameId}`);
  if (r.status !== 200) { $("error").textContent = r.data.error; return; }
  draw(r.data);
  document.addEventListener("keydown", (ev) => {   // 1..9 and 0 choose the 1st..10th choice
    const n = ev.key.length === 1 ? CHOICE_KEYS.indexOf(ev.key) : -1;
    const buttons = document.querySelectorAll("button.choice");
    if (n >= 0 && n < buttons.length && !ev.target.matches("input, select")) buttons[n].click();
  });
}

if ($("new-game")) newGamePage(); else gamePage();
