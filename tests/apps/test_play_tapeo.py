"""Tapeo at the terminal (apps/play_tapeo.py), driven by scripted input."""
from __future__ import annotations

import io
import re

import numpy as np
import pytest

from _bots import Scripted
from hod.apps.play import PlayOptions, Terminal
from tapeo_env.rules.cards import CHURRO, CROQUETA, FREELOADER, HAM3, KIND_NAMES, NUM_KINDS, PEPPER, PRAWNS, TORTILLA
from tapeo_env.rules.engine import Config, new_game, sample_consistent_state
from hod.apps.play_tapeo import TAPA_NAMES, TapeoSession, main, steals
from tapeo_env.rules.record import load_record, replay

#: 4 players: 8 tapas a hand, 7 decision picks a round (T7), 3 rounds.
PICKS_4P = 3 * 7


def _play(argv, text):
    out = io.StringIO()
    code = main(argv, stdin=io.StringIO(text), stdout=out)
    return code, out.getvalue()


def test_full_game_with_bad_input_replays(tmp_path):
    rec = tmp_path / "t.json"
    hand = new_game(Config(num_players=4), seed=7).hand(0)  # the deal of --seed 7, seat 0
    held = [k for k in range(NUM_KINDS) if hand[k]]
    missing = KIND_NAMES[next(k for k in range(NUM_KINDS) if not hand[k])]
    bad = ["0", str(len(held) + 1), "garbage", missing, "", "?"]
    text = "\n".join(bad) + "\n" + "1\n" * PICKS_4P
    code, out = _play(["--players", "4", "--opponents", "random", "--seed", "7", "--record", str(rec)], text)
    assert code == 0
    assert out.count("Your pick [") == PICKS_4P + len(bad)
    assert f"{len(held) + 1} is not a choice number" in out
    assert "'garbage' is not a legal choice now." in out
    assert f"You hold no {TAPA_NAMES[KIND_NAMES.index(missing)]}." in out
    assert out.count("scoring ===") == 3 and "=== Game over ===" in out
    state = replay(load_record(rec))
    record = load_record(rec)
    # the bad lines changed nothing: the first pick is "1", the first kind held
    assert record["rounds"][0]["picks"][0][0] == KIND_NAMES[held[0]]
    finals = [int(x) for x in state.final_scores]
    for i, name in enumerate(["You", "player_1 (random)", "player_2 (random)", "player_3 (random)"]):
        assert re.search(rf"^  {re.escape(name)}\s+-?\d+\s+\d+\s+[+-]\d+\s+{finals[i]}$", out, re.M)
    assert "Winner: " in out or "Shared win: " in out


def test_eof_mid_game_prints_score_and_writes_no_record(tmp_path):
    rec = tmp_path / "t.json"
    code, out = _play(["--players", "3", "--opponents", "random", "--seed", "1", "--record", str(rec)], "1\n" * 4)
    assert code == 0
    assert "End of input: the game stops here." in out and "Score so far" in out
    assert not rec.exists()


def test_ctrl_c_exits_130():
    class Interrupting(io.StringIO):
        def readline(self, *a):
            raise KeyboardInterrupt

    out = io.StringIO()
    code = main(["--players", "2", "--opponents", "random", "--seed", "1", "--no-record"], Interrupting(), out)
    assert code == 130 and "Interrupted (Ctrl-C)" in out.getvalue()


def test_opponents_per_seat_and_quit():
    code, out = _play(["--players", "3", "--opponents", "random", "random", "--seat", "2", "--seed", "2",
                       "--no-record"], "quit\n")
    assert code == 0 and "You quit" in out
    assert "You are player_2; player_0 (random), player_1 (random)." in out


def test_steals_by_hand():
    F = FREELOADER
    # 4 seats: seat 0 steals seat 1's ham3; seat 2's left (3) revealed a Freeloader: nothing;
    # seat 3's left (0) revealed a Freeloader: nothing (T6)
    assert steals([F, HAM3, F, F]) == [(0, 1, HAM3), (2, 3, None), (3, 0, None)]
    # 2 seats: each is the other's left
    assert steals([TORTILLA, F]) == [(1, 0, TORTILLA)]
    assert steals([TORTILLA, CHURRO, PEPPER]) == []


# A 2-player game with 3 tapas a hand (2 decision picks, the 3rd revealed by itself), per round
# the hand dealt to seat 0 (you) and seat 1 (the bot). Hands pass left = to the other seat.
T, C, H3, PR, B, P, F, CH = TORTILLA, CROQUETA, HAM3, PRAWNS, 6, PEPPER, FREELOADER, CHURRO
DEALS = [
    [[H3, PR, B], [P, P, P]],
    [[F, CH, T], [C, CH, T]],
    [[CH, C, C], [CH, C, T]],
]
YOU = "ham3\npepper\nfreeloader\nchurro\nchurro\ncroqueta\n"
BOT = [P, PR, C, T, CH, C]


def _hand_built_session(text):
    out = io.StringIO()
    table = PlayOptions(players=2, seat=0, seed=0, opponents={1: "scripted"}, record=None)
    session = TapeoSession(table, Terminal(io.StringIO(text), out), bots={1: Scripted(BOT)})
    session.start()
    session.env.game_state = new_game(Config(num_players=2, hand_size=3), deals=DEALS)
    return session, out


def test_hand_built_game_reveals_steals_and_scores(tmp_path):
    session, out = _hand_built_session(YOU)
    session.table.record = str(tmp_path / "g.json")
    session.loop()
    text = out.getvalue()
    # Round 1: you pick ham3, the bot a pepper; hands swap: you pick a pepper from [P, P], the bot
    # prawns from [PR, B]; last tapas: you bread, the bot a pepper.
    # You: ham3, pepper, bread -> ham 6 (lone holder), pepper 2 (max 2 < 3: not hot), bread no prawns 0 = 8
    # Bot: pepper x2, prawns -> prawns 3, pepper 4 = 7
    assert re.search(r"^  You\s+0\s+0\s+6\s+0\s+2\s+8\s+8\s+0$", text, re.M)
    assert re.search(r"^  player_1 \(scripted\)\s+0\s+0\s+0\s+3\s+4\s+7\s+7\s+0$", text, re.M)
    # Round 2: your Freeloader takes the croqueta the bot reveals at pick 1
    assert "  player_1 (scripted)  croqueta  (taken by your Freeloader)" in text
    assert "Freeloader: You steal the croqueta player_1 (scripted) revealed, onto your bar." in text
    # Then you pick a churro from the bot's hand [churro, tortilla], the bot a tortilla from yours
    # [churro, tortilla]; last tapas: you the churro left of your hand, the bot a tortilla.
    # You: Freeloader, croqueta, churro x2 -> croqueta 1; bot: tortilla x2 -> 5. Churros kept: you 2.
    assert re.search(r"^  You\s+0\s+1\s+0\s+0\s+0\s+1\s+9\s+2$", text, re.M)
    assert re.search(r"^  player_1 \(scripted\)\s+5\s+0\s+0\s+0\s+0\s+5\s+12\s+0$", text, re.M)
    # Round 3: you churro, croqueta x2 -> 3; bot churro, croqueta, tortilla -> 1. Churros 3 and 1.
    # End (T9, 2 players): most churros +6, nobody loses: you 8+1+3+6 = 18, bot 7+5+1 = 13.
    assert re.search(r"^  You\s+12\s+3\s+\+6\s+18$", text, re.M)
    assert re.search(r"^  player_1 \(scripted\)\s+13\s+1\s+\+0\s+13$", text, re.M)
    assert "Winner: You." in text
    assert replay(load_record(tmp_path / "g.json")).final_scores.tolist() == [18, 13]


def test_screen_shows_no_hidden_information():
    """Every screen is the same for any state the person's seat cannot tell apart from the real
    one (engine.sample_consistent_state): no unseen hand leaks."""
    rng = np.random.default_rng(0)
    screens = []

    class Checked(TapeoSession):
        def ask_pick(self):
            real = self.env.game_state
            text = self.screen()
            for _ in range(3):
                self.env.game_state = sample_consistent_state(real, self.table.seat, rng)
                assert self.screen() == text
            self.env.game_state = real
            screens.append(text)
            return super().ask_pick()

    out = io.StringIO()
    table = PlayOptions(players=4, seat=1, seed=11, opponents={2: "random", 3: "random", 0: "random"}, record=None)
    from hod.apps.play import make_bots
    Checked(table, Terminal(io.StringIO("1\n" * PICKS_4P), out), make_bots("tapeo", table)).play()
    assert len(screens) == PICKS_4P and "=== Game over ===" in out.getvalue()
    # and the sampler did hide something: at the first pick the other hands differ
    s = new_game(Config(num_players=4), seed=11)
    other = sample_consistent_state(s, 1, np.random.default_rng(1))
    assert not np.array_equal(other.hands, s.hands)


@pytest.mark.parametrize("players", [2, 6])
def test_every_table_size_plays_through(players):
    picks = 3 * ({2: 10, 6: 7}[players] - 1)
    code, out = _play(["--players", str(players), "--opponents", "random", "--seed", "3", "--no-record"],
                      "1\n" * picks)
    assert code == 0 and "=== Game over ===" in out
