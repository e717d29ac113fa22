// House Of Decks web page: draws the view the server sends and posts the chosen action.
// No rules here: the server (hod.apps.web) decides what is legal, what scores and who leads;
// this script only draws the JSON it is sent.
"use strict";

function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") el.className = v; else if (k === "text") el.textContent = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v); else el.setAttribute(k, v);
  }
  for (const kid of kids.flat()) if (kid !== null && kid !== undefined && kid !== false) el.append(kid);
  return el;
}
const $ = (id) => document.getElementById(id);
// no pacing and no movement for a person who asked their system for less motion
const reducedMotion = () => window.matchMedia("(prefers-reduced-motion: reduce)").matches;

async function api(method, url, body) {
  const r = await fetch(url, {method, headers: {"Content-Type": "application/json"},
                              body: body === undefined ? undefined : JSON.stringify(body)});
  const data = await r.json();
  return {status: r.status, data};
}

const ordinal = (k) => k === 1 ? "On your left" : `${k}${k === 2 ? "nd" : k === 3 ? "rd" : "th"} to your left`;

// ---- the home page -----------------------------------------------------------------------
async function newGamePage() {
  const opts = (await api("GET", "/api/options")).data;
  let custom = false;           // true once a bot was chosen by hand under "Advanced"
  const gameBox = $("games");
  for (const [game, o] of Object.entries(opts)) {
    gameBox.append(h("label", {class: "game-card", "data-game": game},
      h("input", {type: "radio", name: "game", value: game, checked: game === "tapeo",
                  onchange: () => fill(true)}),
      h("img", {src: `/static/${game}.svg`, alt: "", width: 160, height: 100}),
      h("span", {class: "game-name", text: o.title}),
      h("span", {class: "blurb", text: o.blurb})));
  }
  const game = () => document.querySelector("input[name=game]:checked").value;
  const players = () => Number($("players").value);
  const difficulty = () => document.querySelector("input[name=difficulty]:checked").value;

  function fill(resetPlayers) {
    const o = opts[game()], sel = $("players");
    const was = Number(sel.value);
    sel.replaceChildren(...o.players.map((n) => h("option", {value: n, text: `${n} players`})));
    sel.value = (!resetPlayers && o.players.includes(was)) ? was : o.default_players;
    const n = players(), d = o.difficulty[String(n)];
    const chosen = document.querySelector("input[name=difficulty]:checked")?.value ?? "easy";
    $("difficulty").replaceChildren(...Object.entries(d.bots).map(([label, bot]) => h("label", {class: "pill"},
      h("input", {type: "radio", name: "difficulty", value: label, checked: label === chosen,
                  disabled: bot === null, onchange: () => { custom = false; fillBots(); }}),
      h("span", {text: label}), h("small", {text: bot === null ? "no bot" : bot}))));
    $("difficulty-note").textContent = d.note ?? "";
    $("seat").replaceChildren(...Array.from({length: n}, (_, i) => h("option", {value: i,
      text: i === 0 ? "0 (plays first)" : String(i)})));
    custom = false;
    fillBots();
  }
  function fillBots() {
    const o = opts[game()], n = players(), bot = o.difficulty[String(n)].bots[difficulty()];
    $("opponents").replaceChildren(...Array.from({length: n - 1}, (_, k) => h("label", {class: "field"},
      h("span", {text: ordinal(k + 1)}),
      h("select", {class: "opponent", onchange: () => { custom = true; }},
        o.bots.filter((b) => b.players.includes(n)).map((b) => h("option", {value: b.name, selected: b.name === bot,
          text: `${b.name} (${b.labels[n]}${b.ratings[n] === null ? "" : ", rating " + b.ratings[n]})`}))))));
  }
  $("players").addEventListener("change", () => fill(false));
  fill(true);
  $("form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const seed = $("seed").value.trim();
    if (seed !== "" && !(/^[0-9]+$/.test(seed) && Number.isSafeInteger(Number(seed)))) {
      $("error").textContent = `seed ${seed}: legal values: a whole number in 0..${Number.MAX_SAFE_INTEGER} `
        + "(the integers the page holds exactly), or empty for a fresh one";
      return;
    }
    const body = {game: game(), players: players(), seat: Number($("seat").value),
                  seed: seed === "" ? null : Number(seed)};
    if (custom) body.opponents = [...document.querySelectorAll(".opponent")].map((s) => s.value);
    else body.difficulty = difficulty();
    $("deal").disabled = true;
    $("deal").textContent = "Dealing…";
    const r = await api("POST", "/api/games", body);
    if (r.status === 201) { location.assign(r.data.url); return; }
    $("deal").disabled = false;
    $("deal").textContent = "Deal";
    $("error").textContent = r.data.error;
  });
}

// ---- drawing cards -----------------------------------------------------------------------
function tapa(t, extra) {
  return h("span", {class: `tapa k-${t.kind}`, "data-kind": t.kind},
    h("span", {class: "tapa-icon", "aria-hidden": "true"}),
    h("span", {class: "tname", text: t.name}), t.count > 1 ? h("span", {class: "count", text: "×" + t.count}) : null, extra);
}
const SUIT_SVG = {  // small drawings of the Spanish suits
  oros: '<circle cx="10" cy="10" r="7" fill="#d4a017" stroke="#8a6500" stroke-width="2"/>',
  copas: '<path d="M4 3h12c0 6-3 8-5 8v4h3v2H6v-2h3v-4c-2 0-5-2-5-8z" fill="#c0392b"/>',
  espadas: '<path d="M10 1l2 12h-4zM5 13h10v2H5zM9 15h2v4H9z" fill="#2c5aa0"/>',
  bastos: '<path d="M8 2c3 0 4 2 4 4l-1 12H9L8 6C7 4 6 2 8 2z" fill="#2e7d32"/>',
};
function card(c, cls) {
  const svg = h("span", {class: "suit-icon", "aria-hidden": "true"});
  svg.innerHTML = `<svg viewBox="0 0 20 20" width="20" height="20" aria-hidden="true">${SUIT_SVG[c.suit]}</svg>`;
  return h("span", {class: `card suit-${c.suit}` + (cls ? " " + cls : ""), "data-card": c.key, role: "img",
                    "aria-label": `${c.name}, ${c.points} points`},
    h("span", {class: "rank", text: c.rank}), svg, h("span", {class: "pts", text: `${c.points} ${c.points === 1 ? "pt" : "pts"}`}));
}
const backs = (n) => h("span", {class: "backs", role: "img", "aria-label": `${n} cards in hand`},
  Array.from({length: n}, () => h("span", {class: "card back"})), h("span", {class: "backs-n", text: `${n} in hand`}));

// ---- the game page -----------------------------------------------------------------------
let current = null;
let options = null;
const gameId = location.pathname.split("/").pop();
const seedText = (v) => v.seed === null ? "" : ` · seed ${v.seed}`;   // a drawn seed is shown at the end
const names = (v, seats) => seats.map((i) => v.seats[i].you ? "you" : v.seats[i].name).join(" and ");

function seatHead(v, s) {
  return h("h3", {}, s.you ? "You" : s.name,
    s.bot ? h("small", {text: ` ${s.label}${s.rating === null ? "" : " · rating " + s.rating}`}) : null);
}

function badge(text, cls) { return h("span", {class: "badge " + (cls || ""), text}); }

function tapeoBadges(v, seat) {   // who leads each majority: the server's figures, drawn as words
  const m = v.table.majorities;
  if (!m) return [];
  const out = [];
  const n = v.players;
  const ham = m.ham, pep = m.pepper, ch = m.churros;
  if (ham.first.includes(seat)) out.push(badge(`Ham: most slices (${ham.slices[seat]}) → ${ham.points[seat]}`, "lead"));
  else if (ham.second.includes(seat)) out.push(badge(`Ham: runner-up (${ham.slices[seat]}) → ${ham.points[seat]}`, "second"));
  if (pep.most.includes(seat)) out.push(badge(`Peppers: most (${pep.counts[seat]})${pep.hot ? `, hot: ${pep.points[seat]}` : ""}`,
    pep.hot ? "risk" : "lead"));
  if (ch.most.length && ch.most.length < n && ch.most.includes(seat)) out.push(badge(`Churros: most (${ch.counts[seat]}) → +${ch.points[seat]}`, "lead"));
  else if (ch.fewest.length && ch.fewest.includes(seat)) out.push(badge(`Churros: fewest (${ch.counts[seat]}) → ${ch.points[seat]}`, "risk"));
  return out;
}

function drawTapeo(v) {
  const t = v.table;
  $("info").textContent = (v.over ? "game over"
    : `Round ${t.round} of ${t.rounds} · pick ${t.pick} of ${t.picks} · ${t.in_hand} tapas in each hand`) + seedText(v);
  $("seats").replaceChildren(...t.bars.map((b) => {
    const bp = t.bar_points ? t.bar_points[b.seat] : null;
    const parts = bp ? Object.entries(bp.points).filter(([, p]) => p !== 0).map(([k, p]) => `${k} ${p}`) : [];
    const now = bp ? `${bp.total} pts` + (parts.length ? ` (${parts.join(", ")})` : "") : null;
    return h("div", {class: "seat" + (v.seats[b.seat].you ? " you" : ""), "data-seat": b.seat},
      seatHead(v, v.seats[b.seat]),
      h("p", {class: "figures"}, h("b", {text: `${b.score} pts`}), ` in finished rounds · churros ${b.churros}`,
        now === null ? null : h("span", {class: "now", text: ` · this bar now: ${now}`})),
      h("div", {class: "badges"}, tapeoBadges(v, b.seat)),
      h("div", {class: "bar", role: "group", "aria-label": "bar"}, b.tapas.length ? b.tapas.map((x) => tapa(x)) : h("em", {text: "empty bar"})));
  }));
  const steps = [];
  for (const r of t.reveals) {
    steps.push(h("li", {class: "reveal step"}, h("h3", {text: r.last ? `Round ${r.round}: the last tapas, revealed by themselves`
      : `Round ${r.round}, pick ${r.pick}: revealed`}),
      h("div", {class: "revealed-row"}, r.tapas.map((x) => h("div", {class: "revealed" + (x.stolen_by === null ? "" : " was-stolen")},
        h("span", {class: "who", text: v.seats[x.seat].you ? "You" : v.seats[x.seat].name}),
        tapa(x), x.stolen_by === null ? null : h("span", {class: "stolen", text: `→ stolen by ${names(v, [x.stolen_by])}`})))),
      r.steals.map((st) => h("p", {class: "steal", text: st.tapa === null
        ? `Freeloader: ${names(v, [st.thief])} steals nothing: ${names(v, [st.victim])} also revealed a Freeloader.`
        : `Freeloader: ${names(v, [st.thief])} steals the ${st.tapa} ${names(v, [st.victim])} revealed.`}))));
  }
  const parts = [];
  for (const k of t.known_hands) {
    parts.push(h("div", {class: "known", "data-hand-of": k.seat}, h("span", {class: "who",
      text: `${v.seats[k.seat].name} now holds a hand you passed:`}), k.tapas.map((x) => tapa(x))));
  }
  if (t.scoring.length) {
    const last = t.scoring[t.scoring.length - 1];
    parts.push(h("div", {class: "scroll", tabindex: "0", role: "region", "aria-label": `Round ${last.round} scoring`},
      h("table", {class: "scoring"}, h("caption", {text: `Round ${last.round} scoring`}),
      h("thead", {}, h("tr", {}, h("th", {scope: "col", text: "seat"}), last.rules.map((r) => h("th", {scope: "col", text: r})),
        h("th", {scope: "col", text: "round"}))),
      h("tbody", {}, last.rows.map((r) => h("tr", {}, h("th", {scope: "row", text: v.seats[r.seat].you ? "You" : v.seats[r.seat].name}),
        r.points.map((p) => h("td", {text: p})), h("td", {text: r.total})))))));
  }
  $("table").replaceChildren(...parts);
  $("prompt").textContent = v.choices.length ? `Your hand (${t.in_hand} tapas): pick one` : "";
  $("choices").replaceChildren(...v.choices.map((c, i) => h("button", {type: "button", class: "choice hand-tapa",
    "data-action": c.action, "aria-keyshortcuts": keyOf(i) || null, onclick: () => play(c.action)},
    h("kbd", {text: keyOf(i)}), tapa({kind: c.name, name: c.tapa, count: c.count}),
    h("span", {class: "hint", text: c.hint}))));
  if (t.result) drawResult(v, ["rounds", "churros", "churro_points", "final"], ["rounds", "churros kept", "churro points", "final"]);
  return steps;
}

function drawRobada(v) {
  const t = v.table;
  $("info").textContent = `Deck: ${t.deck} cards left` + (v.over ? " · game over" : "") + seedText(v);
  const taken = t.run ? t.run.piles_taken : [];
  $("seats").replaceChildren(...t.piles.map((p) => h("div", {class: "seat" + (v.seats[p.seat].you ? " you" : "")
      + (t.to_act === p.seat ? " to-act" : ""), "data-seat": p.seat},
    seatHead(v, v.seats[p.seat]),
    h("p", {class: "figures"}, h("b", {text: `${p.points} pts`}), ` · pile of ${p.size} cards`,
      t.to_act === p.seat ? h("span", {class: "turn", text: " · to play"}) : null),
    h("div", {class: "badges"},
      t.last_runner === p.seat ? badge("last run: gets the leftovers") : null,
      p.takeable ? badge("can be taken now", "risk") : (p.at_risk ? badge(`at risk: no loose ${p.top.rank} on the table`, "risk") : null),
      taken.includes(p.seat) ? badge("taken by the run", "risk") : null),
    h("div", {class: "pile" + (taken.includes(p.seat) ? " taken" : "")},
      p.top ? card(p.top) : h("em", {text: "empty pile"})),
    v.seats[p.seat].you ? null : backs(p.in_hand))));
  const steps = v.recent.map((line) => {      // "--- player_1 (greedy)'s turn ---" heads the steps of a turn
    const head = /^-{3}\s*(.*?)\s*-{3}$/.exec(line.trim());
    return h("li", {class: head ? "step turn-head" : "step", text: head ? head[1] : line.trim()});
  });
  const parts = [];
  parts.push(h("div", {class: "loose"}, h("h3", {text: `Loose cards (${t.loose.length})`}),
    h("div", {class: "cards"}, t.loose.length ? t.loose.map((c) => card(c)) : h("em", {text: "none"}))));
  if (t.run) parts.push(h("div", {class: "run"}, h("h3", {text: `Run in progress: ${t.run.cards.length} cards, ${t.run.points} pts; it ${t.run.need}`}),
    h("div", {class: "cards"}, t.run.cards.map((c, i) => card(c, i === t.run.cards.length - 1 ? "newest" : null)))));
  parts.push(h("div", {class: "hand"}, h("h3", {text: "Your hand"}),
    h("div", {class: "cards"}, t.hand.length ? t.hand.map((c) => card(c)) : h("em", {text: "empty"}))));
  $("table").replaceChildren(...parts);
  $("prompt").textContent = v.choices.length ? "Your choice" : (v.over ? "" : "The computer is playing…");
  $("choices").replaceChildren(...v.choices.map((c, i) => h("button", {type: "button", class: "choice", "data-action": c.action,
    "aria-keyshortcuts": keyOf(i) || null, onclick: () => play(c.action)},
    keyOf(i) ? h("kbd", {text: keyOf(i)}) : null, h("b", {text: c.name}), " ", c.label)));
  if (t.result) drawResult(v, ["cards", "points"], ["pile cards", "points"]);
  return steps;
}

function drawResult(v, keys, heads) {
  const r = v.table.result;
  const who = r.winners.map((w) => v.seats[w].you ? "you" : v.seats[w].name).join(" and ");
  const youWin = r.winners.some((w) => v.seats[w].you);
  $("result").replaceChildren(h("h2", {text: youWin ? (r.winners.length > 1 ? "Game over: a shared win!" : "Game over: you win!")
      : "Game over"}),
    h("p", {id: "winner", text: (r.winners.length > 1 ? "Shared win: " : "Winner: ") + who + "."}),
    h("div", {class: "scroll", tabindex: "0", role: "region", "aria-label": "Final scores"}, h("table", {class: "final"}, h("thead", {}, h("tr", {}, h("th", {scope: "col", text: "player"}),
      heads.map((x) => h("th", {scope: "col", text: x})))),
      h("tbody", {}, r.rows.map((row) => h("tr", {class: r.winners.includes(row.seat) ? "winner" : null},
        h("th", {scope: "row", text: (r.winners.includes(row.seat) ? "★ " : "") + (v.seats[row.seat].you ? "You" : v.seats[row.seat].name)}),
        keys.map((k) => h("td", {text: row[k]}))))))),
    h("div", {class: "end-actions"},
      h("button", {type: "button", id: "play-again", onclick: () => playAgain(v)}, "Play again (same settings)"),
      h("a", {id: "record", class: "btn", href: `/api/games/${v.id}/record`, download: "", text: "Download the game record (JSON)"}),
      h("a", {class: "btn", href: "/", text: "Change game or difficulty"})));
}

async function playAgain(v) {
  $("play-again").disabled = true;
  const r = await api("POST", "/api/games", v.settings);
  if (r.status === 201) location.assign(r.data.url);
  else { $("error").textContent = r.data.error; $("play-again").disabled = false; }
}

// The computer's moves since the person's last choice, one at a time at a readable pace (none
// under prefers-reduced-motion); the choices wait until all are shown, or a key shows them at once.
const PACE_MS = 650;
let pacing = null;

function pace(steps) {
  const box = $("recent");
  const list = $("recent-steps");
  list.replaceChildren(...steps);
  box.hidden = steps.length === 0;
  finishPacing();
  if (steps.length === 0 || reducedMotion()) { for (const s of steps) s.classList.add("shown"); return; }
  const buttons = [...document.querySelectorAll("button.choice")];
  for (const b of buttons) b.disabled = true;
  document.body.dataset.busy = "true";
  let i = 0;
  const next = () => {
    steps[i].classList.add("shown", "enter");
    i += 1;
    if (i >= steps.length) { finishPacing(); return; }
    pacing.timer = setTimeout(next, PACE_MS);
  };
  pacing = {timer: null, steps, buttons, focus: undefined};
  next();
}

function finishPacing() {
  if (pacing) {
    clearTimeout(pacing.timer);
    for (const s of pacing.steps) s.classList.add("shown");
    for (const b of pacing.buttons) b.disabled = false;
    const index = pacing.focus;
    pacing = null;
    if (index !== undefined) focusChoice(index);
  }
  document.body.dataset.busy = "false";
}

function draw(v) {
  current = v;
  document.title = `${v.title} · House Of Decks`;
  $("title").textContent = v.title;
  document.body.dataset.step = v.step;
  document.body.dataset.over = v.over;
  document.body.dataset.game = v.game;
  $("result").replaceChildren();
  // Tapeo: your hand right under the picks just revealed (the bars follow); Ronda Robada: the
  // choices under the loose cards, the run and your hand they play with
  if (v.game === "tapeo") $("recent").after($("choices-box")); else $("table").after($("choices-box"));
  const steps = (v.game === "tapeo" ? drawTapeo : drawRobada)(v);
  $("recent-title").textContent = v.game === "tapeo" ? "Just revealed" : "Since your last choice";
  pace(steps);
  $("choices-box").hidden = v.choices.length === 0 && !$("error").textContent;
  const log = $("log");
  log.textContent = v.log.join("\n");
}

// ---- the rules panel ---------------------------------------------------------------------
function fillRules(game) {
  const o = options[game];
  $("rules-title").textContent = `How to play ${o.title}`;
  $("rules-body").replaceChildren(...o.rules.map((sec) => h("section", {}, h("h3", {text: sec.title}),
    sec.lines.map((line) => h("p", {text: line})))));
  $("legend-title").textContent = game === "tapeo" ? "What each tapa scores" : "What each card scores";
  $("legend").replaceChildren(h("ul", {class: "legend-list"}, o.legend.map((x) => h("li", {},
    game === "tapeo" ? tapa({kind: x.key, name: x.name, count: 1}) : h("b", {class: "rank-word", text: x.name}),
    h("span", {text: " " + x.scores + (x.in_deck ? ` (${x.in_deck} in the deck)` : "")})))));
  $("keys-help").textContent = "Keys: 1-9 and 0 choose the 1st to 10th choice; ? opens these rules; Esc closes them.";
}

function openRules() {
  const d = $("rules");
  if (!d.open) d.showModal();
}

// The keys that choose the 1st..10th choice (a Tapeo hand can show all 10 kinds): 1..9, then 0.
const CHOICE_KEYS = "1234567890";

function keyOf(i) {
  return CHOICE_KEYS[i] ?? "";
}

function focusChoice(index) {   // the buttons are redrawn after a move: focus the same place again
  if (pacing) { pacing.focus = index; return; }      // once the computer's moves are all shown
  const buttons = document.querySelectorAll("button.choice");
  if (buttons.length) buttons[Math.min(Math.max(index, 0), buttons.length - 1)].focus();
  else if ($("play-again")) $("play-again").focus();
}

async function play(action) {
  const buttons = [...document.querySelectorAll("button.choice")];
  const index = buttons.indexOf(document.activeElement);
  for (const b of buttons) b.disabled = true;
  $("prompt").textContent = "The computer is thinking…";
  const r = await api("POST", `/api/games/${gameId}/actions`, {step: current.step, action});
  if (r.status === 200) { $("error").textContent = ""; draw(r.data); focusChoice(index); return; }
  $("error").textContent = r.data.error;
  draw((await api("GET", `/api/games/${gameId}`)).data);   // a stale page catches up
  focusChoice(index);
}

async function gamePage() {
  const [r, o] = await Promise.all([api("GET", `/api/games/${gameId}`), api("GET", "/api/options")]);
  if (r.status !== 200) { $("error").textContent = r.data.error; return; }
  options = o.data;
  fillRules(r.data.game);
  $("rules-open").addEventListener("click", openRules);
  $("rules-close").addEventListener("click", () => $("rules").close());
  draw(r.data);
  document.addEventListener("keydown", (ev) => {
    if (ev.target.matches("input, select, textarea") || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if ($("rules").open) return;                      // the panel has the keys (Esc closes it)
    if (ev.key === "?") { ev.preventDefault(); openRules(); return; }
    const n = ev.key.length === 1 ? CHOICE_KEYS.indexOf(ev.key) : -1;
    if (n < 0) return;
    if (pacing) { finishPacing(); return; }           // a key first shows the rest of the moves
    const buttons = document.querySelectorAll("button.choice");
    if (n < buttons.length) buttons[n].click();
  });
}

if ($("new-game")) newGamePage(); else gamePage();
