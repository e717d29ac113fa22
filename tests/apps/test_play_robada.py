"""Ronda Robada at the terminal (apps/play_robada.py), driven by scripted input."""
from __future__ import annotations

import io
import re

import numpy as np

from _bots import Scripted
from hod.apps.play import PlayOptions, Terminal, make_bots
from robada_env.rules.actions import DROP
from robada_env.rules.cards import card
from robada_env.rules.engine import Config, from_position, legal_actions, new_game, sample_consistent_state
from hod.apps.play_robada import RobadaSession, carta, main
from robada_env.rules.record import load_record, replay

OROS, COPAS, ESPADAS, BASTOS = range(4)
SOTA, CABALLO, REY = 7, 8, 9


def _play(argv, text):
    out = io.StringIO()
    code = main(argv, stdin=io.StringIO(text), stdout=out)
    return code, out.getvalue()


def test_carta_uses_spanish_names():
    assert carta(card(SOTA, COPAS)) == "Sota de copas"
    assert carta(card(0, OROS)) == "As de oros"
    assert carta(card(6, BASTOS)) == "7 de bastos"
    assert carta(card(REY, ESPADAS)) == "Rey de espadas"


def test_english_rank_names_are_given_once_in_the_greeting_and_with_the_help():
    glossary = ("Ranks in English: As = Ace, Sota = Jack, Caballo = Knight (the Queen of a French deck), "
                "Rey = King.\nSuits: oros = coins, copas = cups, espadas = swords, bastos = clubs.")
    code, out = _play(["--players", "2", "--opponents", "random", "--seed", "1", "--no-record"], "?\nq\n")
    assert code == 0
    assert out.count(glossary) == 2     # the greeting, then the help asked for once
    assert out.index(glossary) < out.index("? help")


def test_full_game_with_bad_input_replays(tmp_path):
    rec = tmp_path / "r.json"
    s = new_game(Config(num_players=2), seed=7)  # the deal of --seed 7; seat 0 acts first
    first = legal_actions(s)
    # "1" picks the first legal action; more lines than any game needs (the rest stays unread)
    bad = ["0", str(len(first) + 1), "hello", "tap loose", "confirm", ""]
    text = "\n".join(bad) + "\n" + "1\n" * 500
    code, out = _play(["--players", "2", "--opponents", "random", "--seed", "7", "--record", str(rec)], text)
    assert code == 0
    assert f"{len(first) + 1} is not a choice number" in out
    assert "'hello' is not a legal choice now." in out
    assert "'tap loose' is not a legal choice now." in out  # no run yet: tapping is illegal
    record = load_record(rec)
    state = replay(record)
    # the bad lines changed nothing: the first action is the first legal one
    assert record["actions"][0] == {"seat": 0, "action": first[0], "name": record["actions"][0]["name"]}
    for i, name in enumerate(["You", "player_1 (random)"]):
        assert re.search(rf"^  {re.escape(name)}\s+{len(state.piles[i])}\s+{state.points[i]}$", out, re.M)
    assert "=== Game over ===" in out


def test_eof_mid_game_and_ctrl_c(tmp_path):
    rec = tmp_path / "r.json"
    code, out = _play(["--players", "3", "--opponents", "random", "--seed", "1", "--record", str(rec)], "1\n")
    assert code == 0 and "End of input: the game stops here." in out and "Score so far" in out
    assert not rec.exists()

    class Interrupting(io.StringIO):
        def readline(self, *a):
            raise KeyboardInterrupt

    out = io.StringIO()
    assert main(["--seed", "1", "--opponents", "random", "--no-record"], Interrupting(), out) == 130
    assert "Interrupted (Ctrl-C)" in out.getvalue()


def test_hand_built_turns_are_told_step_by_step():
    sota_o, cinco_c = card(SOTA, OROS), card(4, COPAS)
    sota_c, caballo_c, seis_e, rey_b = card(SOTA, COPAS), card(CABALLO, COPAS), card(5, ESPADAS), card(REY, BASTOS)
    used = {sota_o, cinco_c, sota_c, caballo_c, seis_e, rey_b}
    pile1 = [c for c in range(40) if c not in used] + [rey_b]  # 35 cards, Rey de bastos on top
    pos = from_position(Config(num_players=2), hands=[[sota_o], [cinco_c]], loose=[sota_c, caballo_c, seis_e],
                        piles=[[], pile1])
    out = io.StringIO()
    table = PlayOptions(players=2, seat=0, seed=0, opponents={1: "scripted"}, record=None)
    session = RobadaSession(table, Terminal(io.StringIO("start sota\ntap\n3\ntake pile +1\nconfirm\n"), out),
                            bots={1: Scripted([DROP + 4])})
    session.start()
    session.env.game_state = pos
    session.loop()
    text = out.getvalue()
    # the deck holds 244 points (4 x 61); the pile of player_1 = 244 - (Sota 10 + 5 + Sota 10 + Caballo 11 + 6) = 202
    assert "start Sota  play your Sota de oros on the loose Sota de copas; the run then needs a Caballo" in text
    assert "You start a run: Sota de oros from hand on the loose Sota de copas; the run needs a Caballo." in text
    assert "You tap the loose Caballo de copas: run of 3 cards, 31 pts; it needs a Rey." in text
    # "3" is out of range: only take pile +1 and confirm are legal when the Rey is needed
    assert "3 is not a choice number; choose 1 to 2." in text
    assert ("You take player_1 (scripted)'s pile: 35 cards, 202 pts (Rey de bastos on top): run of 38 cards, "
            "233 pts; it needs an As (the closing card).") in text
    # the screen after the take lists the start and the piles taken, not the 35 cards of the pile
    assert ("Your run: Sota de oros on Sota de copas, ..., piles taken: player_1 (scripted) = 38 cards, 233 pts; "
            "it needs an As (the closing card).") in text
    assert ("You confirm the run: 38 cards (233 pts) go to your pile, Sota de oros on top (38 cards, 233 pts).") in text
    assert ("--- player_1 (scripted)'s turn ---\n"
            "  player_1 (scripted) drops 5 de copas on the table as a loose card.") in text
    # R7: the loose cards left, 6 de espadas and 5 de copas (11 pts), go to the last runner: 233 + 11 = 244
    assert "The loose cards left (6 de espadas, 5 de copas, 11 pts) go to You, who made the last run." in text
    assert re.search(r"^  You\s+40\s+244$", text, re.M)
    assert re.search(r"^  player_1 \(scripted\)\s+0\s+0$", text, re.M)
    assert "Winner: You." in text
    # the bot's hand card was never on the person's screen before it was dropped
    assert "5 de copas" not in text.split("drops 5 de copas")[0]


def test_screens_never_show_an_opponent_hand():
    """At every decision the screen and the legend name no card of another hand, and they are the
    same for any state the person's seat cannot tell from the real one."""
    rng = np.random.default_rng(0)
    seen = []

    class Checked(RobadaSession):
        def ask_action(self):
            real, me = self.env.game_state, self.table.seat
            text = self.screen() + "\n" + "\n".join(self.describe(a) for a in legal_actions(real))
            for i in range(real.n):
                if i != me:
                    for c in real.hands[i]:
                        assert not re.search(rf"\b{re.escape(carta(c))}\b", text), carta(c)
            for _ in range(3):
                self.env.game_state = sample_consistent_state(real, me, rng)
                again = self.screen() + "\n" + "\n".join(self.describe(a) for a in legal_actions(real))
                assert again == text
            self.env.game_state = real
            seen.append(text)
            return super().ask_action()

    table = PlayOptions(players=3, seat=1, seed=5, opponents={2: "random", 0: "random"}, record=None)
    out = io.StringIO()
    Checked(table, Terminal(io.StringIO("1\n" * 500), out), make_bots("robada", table)).play()
    assert len(seen) >= 12 and "=== Game over ===" in out.getvalue()  # at least one decision per hand card


def test_four_players_seat_3():
    code, out = _play(["--players", "4", "--seat", "3", "--opponents", "random", "--seed", "4", "--no-record"],
                      "2\n1\n" * 500)  # a refused "2" (one legal choice) is followed by a "1"
    assert code == 0 and "=== Game over ===" in out and "You are player_3" in out
