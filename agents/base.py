"""The one protocol every bot follows (heuristic bots, trained PPO policies, ONNX exports).

A bot is given a seat's observation dict, exactly what the environment hands that seat:
``{"observation": float32 (obs_size,), "action_mask": int8 (num_actions,)}``, and returns a legal
action (an ``int`` whose mask entry is 1). Bots are seeded and hold no training code.

Search bots may additionally receive a ``belief``: a callable ``belief(rng) -> state`` that samples a
full game state consistent with what the seat knows (see each game's ``sample_consistent_state``).
A belief may carry the seat it samples for as the attribute ``belief.seat`` (the tournament's
does); a bot must not count on it.
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Mapping, Optional, Sequence

import numpy as np

from hod.core.errors import ConfigError, UnknownOptionError
from hod.core.games import game_names, get_game

Observation = Mapping[str, np.ndarray]
BeliefSampler = Callable[[np.random.Generator], Any]


def check_bot_seed(seed: object) -> Optional[int]:
    """A bot's seed as given to :class:`Bot` or :meth:`Bot.reset`: None or a non-negative
    integer (Python or numpy; bools refused). Returns it as None or a Python int.

    Raises:
        ConfigError: anything else (``-1``, ``1.5``, ``"3"``, ``True``), naming the legal values.
    """
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or int(seed) < 0:
        raise ConfigError(f"bot seed={seed!r} is not allowed; legal values: None or a non-negative int "
                          f"(0, 1, 2, ...)")
    return int(seed)


def check_batch_arrays(observations: Any, action_masks: Any, width: int, num_actions: int,
                       actions_are: str = "actions") -> tuple:
    """A batch of seats to act as the batched bots take it (``act_batch``, e.g.
    :meth:`hod.agents.tapeo_bots.ExpertBot.act_batch`): ``(float32 (G, width) C-contiguous, int8
    (G, num_actions) C-contiguous)`` (a bool mask read as 0/1). ``actions_are``: what the
    messages call the actions (Tapeo: "kinds").

    Raises:
        ConfigError: not numpy arrays, another ndim, width or dtype (the message names the legal
            shapes and dtypes), a different number of rows, or a row with no legal action (the
            first such row is named).
    """
    legal = f"observations float32 (G, {width}) and action_masks int8 (or bool) (G, {num_actions})"
    if not isinstance(observations, np.ndarray) or not isinstance(action_masks, np.ndarray):
        raise ConfigError(f"the batched bot takes numpy arrays, got {type(observations).__name__} and "
                          f"{type(action_masks).__name__}; legal: {legal}")
    if observations.ndim != 2 or observations.shape[1] != width or observations.dtype != np.float32:
        raise ConfigError(f"observations of shape {observations.shape} dtype {observations.dtype}; legal: {legal}")
    if action_masks.ndim != 2 or action_masks.shape[1] != num_actions or action_masks.dtype not in (np.int8, np.bool_):
        raise ConfigError(f"action_masks of shape {action_masks.shape} dtype {action_masks.dtype}; legal: {legal}")
    if observations.shape[0] != action_masks.shape[0]:
        raise ConfigError(f"{observations.shape[0]} observations but {action_masks.shape[0]} action masks; "
                          f"legal: {legal}, the same G")
    masks = np.ascontiguousarray(action_masks.view(np.int8) if action_masks.dtype == np.bool_ else action_masks)
    empty = ~masks.any(axis=1)
    if empty.any():
        r = int(np.argmax(empty))
        raise ConfigError(f"row {r} of action_masks allows no action ({int(empty.sum())} such rows); legal: every "
                          f"row with at least one 1 among the {num_actions} {actions_are}")
    return np.ascontiguousarray(observations), masks


#: The largest float32: an observation entry beyond it would be infinite in the float32 layout.
_FLOAT32_MAX = float(np.finfo(np.float32).max)


def check_observation(observation: Any, game: str = "") -> None:
    """Check that ``observation`` is a seat's observation dict, of ``game`` when it is an installed
    game's name (``""``: any game).

    Legal: a mapping with the keys ``"observation"`` (a 1-D array of the game's observation size,
    :attr:`hod.core.games.GameInfo.layout`) and ``"action_mask"`` (a 1-D integer or bool array of
    the game's action count, :attr:`hod.core.games.GameInfo.num_actions`).

    Raises:
        ConfigError: not a mapping, a key missing, an array of another shape (e.g. a Tapeo
            observation given to a Ronda Robada bot), or observation entries that are not finite
            float32 numbers (NaN, infinities, or beyond float32's range in a wider array); the
            message names the legal keys, shapes or values.
    """
    if not isinstance(observation, Mapping) or "observation" not in observation or "action_mask" not in observation:
        got = sorted(observation) if isinstance(observation, Mapping) else type(observation).__name__
        raise ConfigError(f"a bot takes a seat's observation dict with the keys ['action_mask', 'observation'], "
                          f"got {got}")
    obs, mask = np.asarray(observation["observation"]), np.asarray(observation["action_mask"])
    if mask.ndim != 1 or not (mask.dtype == np.bool_ or np.issubdtype(mask.dtype, np.integer)):
        raise ConfigError(f"action_mask must be a 1-D int8 (or bool) array, got shape {mask.shape} dtype {mask.dtype}")
    if game in game_names():
        info = get_game(game)
        want = ((info.layout.size,), (info.num_actions,))
        if (obs.shape, mask.shape) != want:
            raise ConfigError(f"not a {info.title} observation: observation shape {obs.shape} and action_mask "
                              f"shape {mask.shape}; legal shapes: {want[0]} and {want[1]}")
    kind = obs.dtype.kind
    if kind not in "biuf" or (kind == "f" and not np.isfinite(obs).all()):
        flat = obs.ravel()
        bad = "not numbers" if kind not in "biuf" else \
            f"entry {int(np.flatnonzero(~np.isfinite(flat))[0])} = {flat[~np.isfinite(flat)][0]}"
        raise ConfigError(f"observation {bad}; legal: finite numbers (the game's observation vector)")
    if obs.dtype.itemsize > 4 and obs.size and np.abs(obs).max() > _FLOAT32_MAX:   # float32 would make it inf
        flat = obs.ravel()
        i = int(np.flatnonzero(np.abs(flat) > _FLOAT32_MAX)[0])
        raise ConfigError(f"observation entry {i} = {flat[i]}; legal: finite float32 numbers (the game's "
                          f"observation vector, |x| <= {_FLOAT32_MAX:.4g})")


class Bot:
    """Base class of every bot.

    Subclasses implement :meth:`act`; every ``act`` first checks its observation
    (:func:`check_observation` against :attr:`game`), so a bad or another game's observation is a
    :class:`ConfigError`, never a wrong move or a stray ``KeyError``; a bot that declares its
    :attr:`player_counts` also refuses (:func:`check_player_count`) an observation of another
    table size (:func:`observed_player_count`). ``game`` names the game the bot plays (``"tapeo"`` or
    ``"robada"``); ``name`` is its registry name.

    Args:
        seed: seed of the bot's own random generator (``numpy.random.default_rng``): None or a
            non-negative int.

    Raises:
        ConfigError: an unknown option (an :class:`hod.core.errors.UnknownOptionError`, whose
            ``unknown`` and ``legal`` attributes list them; the message too) or a bad seed
            (:func:`check_bot_seed`).
    """

    game: str = ""
    name: str = ""
    #: True for bots that use the ``belief`` argument of :meth:`act`.
    needs_belief: bool = False
    #: Names of the table's rule options the bot takes as keyword arguments
    #: (:mod:`hod.agents.rules`); listed among the legal options in the unknown-option error.
    rule_options: tuple = ()
    #: Table sizes (player counts) the bot can play, as a tuple of ints, or None: every table size
    #: of its game. Trained policies (:class:`hod.agents.onnx_policy.OnnxPolicy`, the torch
    #: ``PPOBot``) set it from their model card's ``player_counts``; the tournament and the play
    #: commands refuse a bot at another size (:func:`check_player_count`).
    player_counts: Optional[tuple] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        act = cls.__dict__.get("act")
        if act is not None and not getattr(act, "checks_observation", False):
            @functools.wraps(act)
            def checked_act(self: "Bot", observation: Observation, belief: Optional[BeliefSampler] = None) -> int:
                check_observation(observation, self.game)
                if self.player_counts is not None:   # a trained policy at a table size it was not trained for
                    n = observed_player_count(self.game, observation)
                    if n is not None:
                        check_player_count(self, n)
                return act(self, observation, belief)
            checked_act.checks_observation = True  # type: ignore[attr-defined]
            cls.act = checked_act  # type: ignore[method-assign]

    def __init__(self, seed: Optional[int] = None, **options: Any) -> None:
        if options:
            legal = [p for p in inspect.signature(type(self).__init__).parameters
                     if p not in ("self", "options", "args", "kwargs")]
            legal += [p for p in getattr(self, "rule_options", ()) if p not in legal]
            err = UnknownOptionError(f"unknown option(s) {sorted(options)} for {type(self).__name__}; legal options: {legal}")
            err.unknown, err.legal = sorted(options), legal   # the registry drops the options its entry binds
            raise err
        seed = check_bot_seed(seed)
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: Optional[int] = None) -> None:
        """Start a new game; reseeds the generator when ``seed`` is given (None or a non-negative
        int; anything else raises :class:`ConfigError`, :func:`check_bot_seed`)."""
        seed = check_bot_seed(seed)
        if seed is not None:
            self.seed = seed
            self.rng = np.random.default_rng(seed)

    def act(self, observation: Observation, belief: Optional[BeliefSampler] = None) -> int:
        """Return a legal action for the seat that received ``observation``.

        Args:
            observation: ``{"observation": float32 (obs_size,), "action_mask": int8 (num_actions,)}``.
            belief: optional sampler of consistent full states (search bots only).

        Returns:
            int action with ``observation["action_mask"][action] == 1``.
        """
        raise NotImplementedError

    def resample_actions(self, observation: Observation, belief: Optional[BeliefSampler],
                         seeds: Sequence[int]) -> Optional[list]:
        """The actions this bot would play at ``observation`` if its generator were seeded with
        each of ``seeds`` instead (independent draws of its policy at this decision), its own
        state (generator included) unchanged; None when the bot cannot say (the default).

        The luck correction's decision terms (:mod:`hod.evaluation.luck`, AIVAT's action terms
        with the policy estimated by these draws) use them for bots whose play is random (search
        bots: their determinizations). A bot returns a list only when its ``act`` changes nothing
        but its generator (:class:`CandidateSearchBot` does so).

        Args:
            observation: as :meth:`act`. belief: as :meth:`act`. seeds: non-negative ints.

        Returns:
            list of int legal actions, one per seed, or None.
        """
        return None

    def __call__(self, observation: Observation, belief: Optional[BeliefSampler] = None) -> int:
        return self.act(observation, belief)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(game={self.game!r}, name={self.name!r}, seed={self.seed})"


def check_player_count(bot: Any, num_players: int, where: str = "") -> None:
    """Raise :class:`ConfigError` if ``bot`` declares the table sizes it plays
    (:attr:`Bot.player_counts`, not None) and ``num_players`` is not one of them; the message
    names the bot, the table size and the supported sizes. ``where`` prefixes the message
    (e.g. ``"lineup slot 0: "``)."""
    counts = getattr(bot, "player_counts", None)
    if counts is not None and num_players not in tuple(counts):
        raise ConfigError(f"{where}{bot!r} was trained for {list(counts)} players, not {num_players}; "
                          f"legal table sizes for it: {list(counts)}")


def observed_player_count(game: str, observation: Observation) -> Optional[int]:
    """The table size an observation of ``game`` encodes: its layout's ``num_players`` piece, one-hot
    over the game's table sizes (:attr:`hod.core.games.GameInfo.player_counts`; docs/tapeo_env.md,
    docs/robada_env.md). None when ``game`` is not installed, its layout has no such piece, or the
    piece is not one-hot (the size cannot be told)."""
    if game not in game_names():
        return None
    info = get_game(game)
    sizes = tuple(info.player_counts)
    if info.layout.offsets.get("num_players") is None:
        return None
    piece = info.layout.view(np.asarray(observation["observation"]), "num_players")
    if piece.shape != (len(sizes),) or np.count_nonzero(piece) != 1 or piece.max() != 1:
        return None
    return int(sizes[int(np.argmax(piece))])


def legal_actions(observation: Observation) -> np.ndarray:
    """Indices of the legal actions (int64, ascending) of an observation dict.

    Raises:
        ValueError: the mask allows no action.
    """
    legal = np.flatnonzero(observation["action_mask"])
    if legal.size == 0:
        raise ValueError("the action mask allows no action")
    return legal


def resample_by_generator(bot: Bot, observation: Observation, belief: Optional[BeliefSampler],
                          seeds: Sequence[int]) -> list:
    """:meth:`Bot.resample_actions` of a bot whose ``act`` changes nothing but its generator
    ``bot.rng``: ``act`` once per seed with ``numpy.random.default_rng(seed)`` in its place, the
    bot's own generator put back afterwards (also when ``act`` raises).

    Returns:
        list of int, one action per seed.

    Raises:
        ConfigError: a seed that is not a non-negative int; the errors of ``act``.
    """
    seeds = list(seeds)
    if not seeds or any(check_bot_seed(s) is None for s in seeds):
        raise ConfigError(f"seeds={seeds!r}; legal: a non-empty list of non-negative ints")
    own = bot.rng
    out = []
    try:
        for s in seeds:
            bot.rng = np.random.default_rng(int(s))
            out.append(int(bot.act(observation, belief)))
    finally:
        bot.rng = own
    return out


class RandomBot(Bot):
    """Uniform over the legal actions of the mask. Works for every game and under any rules:
    :func:`hod.agents.registry.make` checks the table's rule options it is given, then drops them."""

    name = "random"
    #: Plays under any rule options (the mask says what is legal); see :func:`hod.agents.registry.make`.
    rule_blind = True

    def act(self, observation: Observation, belief: Optional[BeliefSampler] = None) -> int:
        return int(self.rng.choice(legal_actions(observation)))

    def resample_actions(self, observation: Observation, belief: Optional[BeliefSampler],
                         seeds: Sequence[int]) -> list:
        """Other uniform draws (:func:`resample_by_generator`): the luck correction's decision
        terms apply to this bot."""
        return resample_by_generator(self, observation, belief, seeds)


class CandidateSearchBot(Bot):
    """A search bot that scores a short list of candidate actions and plays the best.

    Subclasses implement :meth:`candidate_actions` (legal actions worth searching, best first)
    and :meth:`action_values` (a value per candidate from belief samples). :meth:`act` plays a
    lone candidate at once, else the highest value, ties broken with the bot's seeded generator.
    Search bots get hidden-state samples through ``belief`` (``needs_belief = True``).
    """

    needs_belief = True

    def candidate_actions(self, observation: Observation) -> list:
        """Legal actions to score, best first (at least one)."""
        raise NotImplementedError

    def action_values(self, observation: Observation, belief: Optional[BeliefSampler],
                      candidates: Optional[list] = None) -> dict:
        """``{action: value}`` of the candidates (higher is better)."""
        raise NotImplementedError

    def act(self, observation: Observation, belief: Optional[BeliefSampler] = None) -> int:
        """The candidate of highest value (a lone candidate without search).

        Returns:
            int action with ``observation["action_mask"][action] == 1``.

        Raises:
            ConfigError: several candidates and no ``belief`` (raised by :meth:`action_values`).
        """
        return self.decide(observation, belief)[0]

    def resample_actions(self, observation: Observation, belief: Optional[BeliefSampler],
                         seeds: Sequence[int]) -> Optional[list]:
        """:meth:`Bot.resample_actions` by :func:`resample_by_generator` (a search's only
        randomness is its generator: the belief samples, the playouts' draws and the
        tie-breaks). A subclass whose ``act`` keeps other state returns None."""
        return resample_by_generator(self, observation, belief, seeds)

    def decide(self, observation: Observation, belief: Optional[BeliefSampler] = None) -> tuple[int, dict]:
        """:meth:`act` with the values it chose from (the expert-iteration targets,
        :mod:`hod.training.expert_iteration`).

        Returns:
            ``(action, {candidate: value})``: the action :meth:`act` plays (same generator draws)
            and the searched candidates' values; a lone candidate is played without search and
            its dict is empty.

        Raises:
            ConfigError: a bad observation dict (:func:`check_observation`), or several candidates
                and no ``belief`` (raised by :meth:`action_values`).
        """
        check_observation(observation, self.game)
        cands = self.candidate_actions(observation)
        if len(cands) == 1:
            return cands[0], {}
        values = self.action_values(observation, belief, cands)
        return self.best_candidate(values, cands), values

    def best_candidate(self, values: dict, candidates: list) -> Any:
        """The candidate of highest value; exact ties (within 1e-9) broken with the bot's seeded
        generator (one draw, only on a tie).

        Args:
            values: ``{candidate: value}`` for every candidate. candidates: in order, at least one.
        """
        best = max(values.values())
        top = [c for c in candidates if values[c] >= best - 1e-9]
        return top[0] if len(top) == 1 else top[int(self.rng.integers(len(top)))]
