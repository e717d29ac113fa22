"""A frozen copy of a learner's actor network that runs with numpy only.

Opponent-pool snapshots are kept in this form: a forward pass of a small MLP at batch size 1 is
several times faster in numpy than in torch, the copy never changes when the learner trains,
and it is saved as a plain ``.npz`` archive (no pickle).

The network is the actor of an SB3 ``MlpPolicy`` with a flatten feature extractor:
``logits = head(act(W_k ... act(W_1 x + b_1) ... + b_k))``. Masking follows sb3-contrib's
``MaskableCategorical``: illegal logits are replaced by :data:`HUGE_NEG`.

:meth:`NumpyPolicy.act_batch` and :class:`NumpyBatchPolicy` play many seats at once (the
opponents of the batched training envs, :class:`hod.training.pool.BatchOpponents`).
"""
from __future__ import annotations

import io
from typing import Optional, Sequence

import numpy as np

from hod.agents.base import Bot, Observation, legal_actions
from hod.agents.encoders import get_encoder
from hod.agents import model_card
from hod.agents.model_card import ACTIVATIONS
from hod.core.errors import ConfigError

from .npz import npz_headers, read_arrays

#: Logit given to illegal actions (the value sb3-contrib's MaskableCategorical uses).
HUGE_NEG = -1e8
#: The longest activation or encoder name a policy archive may hold (characters).
MAX_NAME_LENGTH = 64


class NumpyPolicy:
    """Masked MLP actor in numpy.

    Args:
        layers: hidden layers as ``(W, b)`` pairs in torch's layout: ``W`` float32 (out, in),
            ``b`` float32 (out,).
        head: the action layer ``(W, b)``, ``W`` float32 (num_actions, last_hidden).
        activation: ``"tanh"`` or ``"relu"`` (applied after every hidden layer).
        encoder: observation encoder name (:mod:`hod.agents.encoders`): :meth:`act` and
            :meth:`act_batch` accept the game's observation (width ``obs_size - extra``) and
            append the encoder's features themselves; an already encoded input
            (width ``obs_size``) is used as it is.

    Raises:
        ValueError: unknown activation or shapes that do not chain; ConfigError: unknown encoder.
    """

    def __init__(self, layers: Sequence[tuple[np.ndarray, np.ndarray]], head: tuple[np.ndarray, np.ndarray],
                 activation: str = "tanh", encoder: str = "none") -> None:

        if activation not in ACTIVATIONS:
            raise ValueError(f"activation={activation!r} is not supported; legal values: {list(ACTIVATIONS)}")
        self.activation = activation
        self.encoder = get_encoder(encoder)
        self.layers = [(np.ascontiguousarray(w, np.float32), np.ascontiguousarray(b, np.float32)) for w, b in layers]
        self.head = (np.ascontiguousarray(head[0], np.float32), np.ascontiguousarray(head[1], np.float32))
        dim = self.layers[0][0].shape[1] if self.layers else self.head[0].shape[1]
        self.obs_size = int(dim)
        for w, b in self.layers + [self.head]:
            if w.ndim != 2 or w.shape[1] != dim or b.shape != (w.shape[0],):
                raise ValueError(f"layer shapes do not chain: W {w.shape}, b {b.shape}, input {dim}; legal: each W of "
                                 f"shape (out, in) with in = the previous out ({dim}) and b of shape (out,)")
            dim = w.shape[0]
        self.num_actions = int(dim)

    def prepare(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The network input for ``obs`` float32 (obs_size,) or (M, obs_size): encoded with the
        policy's encoder when it has the game observation's width (``mask``: the matching action
        mask(s)), as it is when it is already ``obs_size`` wide
        (:meth:`hod.agents.encoders.Encoder.network_input`).

        Raises:
            ValueError: another width (the accepted ones are named).
        """
        obs = np.asarray(obs, np.float32)
        if obs.ndim == 1:
            return self.encoder.network_input(obs[None], np.asarray(mask)[None], self.obs_size)[0]
        return self.encoder.network_input(obs, mask, self.obs_size)

    def logits(self, obs: np.ndarray) -> np.ndarray:
        """Unmasked action logits: float32 (B, num_actions) for ``obs`` float32 (B, obs_size) or (obs_size,)."""
        x = np.asarray(obs, np.float32)
        for w, b in self.layers:
            x = x @ w.T + b
            x = np.tanh(x) if self.activation == "tanh" else np.maximum(x, 0.0)
        w, b = self.head
        return x @ w.T + b

    def masked_logits(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Logits with illegal actions (``mask == 0``) set to :data:`HUGE_NEG`; same shape as :meth:`logits`."""
        return np.where(np.asarray(mask) != 0, self.logits(obs), np.float32(HUGE_NEG)).astype(np.float32)

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: Optional[np.random.Generator] = None,
            deterministic: bool = True) -> int:
        """One legal action for one observation (obs float32 (obs_size,), mask int8 (num_actions,)).

        Deterministic: the legal action of highest logit. Otherwise sampled from the masked softmax
        with ``rng``.

        Raises:
            ValueError: the mask allows no action.
        """
        if not np.any(mask):
            raise ValueError("the action mask allows no action; legal: a mask with at least one legal action (a 1)")
        z = self.masked_logits(self.prepare(obs, mask), mask)
        if deterministic:
            return int(np.argmax(z))
        z = z - z.max()
        p = np.exp(z.astype(np.float64))
        p /= p.sum()
        return int((rng or np.random.default_rng()).choice(p.size, p=p))

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, rng: Optional[np.random.Generator] = None,
                  deterministic: bool = False) -> np.ndarray:
        """Legal actions for M observations at once: int64 (M,) for ``obs`` float32 (M, obs_size)
        and ``mask`` (M, num_actions) (nonzero = legal).

        Deterministic: each row's legal action of highest logit. Otherwise each row is sampled
        from its masked softmax (the distribution of :meth:`act`) by inverse CDF with one uniform
        draw per row from ``rng``: an illegal action has probability exactly 0 and is never drawn.

        Raises:
            ValueError: ``obs`` not (M, obs_size) or ``mask`` not (M, num_actions) for the same M
                (the expected and received shapes are named), or a row whose mask allows no action.
        """
        obs = np.asarray(obs)
        mask = np.asarray(mask) != 0
        widths = {self.obs_size, self.obs_size - self.encoder.extra}
        if (mask.ndim != 2 or obs.ndim != 2 or obs.shape[0] != mask.shape[0] or obs.shape[1] not in widths
                or mask.shape[1] != self.num_actions):
            raise ValueError(f"expected obs (M, {self.obs_size}) and mask (M, {self.num_actions}) with the same M; "
                             f"got obs {obs.shape} and mask {mask.shape}")
        if len(mask) == 0:
            return np.empty(0, np.int64)
        legal_any = mask.any(axis=1)
        if not legal_any.all():
            raise ValueError(f"the action mask of row {int(np.flatnonzero(~legal_any)[0])} allows no action; legal: "
                             "masks with at least one legal action (a 1) per row")
        z = self.logits(self.prepare(obs, mask)).astype(np.float64)
        z[~mask] = -np.inf
        if deterministic:
            return np.argmax(z, axis=1).astype(np.int64)
        p = np.exp(z - z.max(axis=1, keepdims=True))        # exp(-inf) = 0 for illegal actions
        cdf = np.cumsum(p, axis=1)
        u = (rng or np.random.default_rng()).random(len(p)) * cdf[:, -1]
        # the first action whose cumulative mass exceeds u; a zero-mass action never is the first.
        # u may round up to the row's total mass, which no entry exceeds: then the count runs past
        # the last legal action, so it is clipped to each row's last legal index.
        last_legal = mask.shape[1] - 1 - np.argmax(mask[:, ::-1], axis=1)
        return np.minimum((cdf <= u[:, None]).sum(axis=1), last_legal).astype(np.int64)

    def copy_from(self, other: "NumpyPolicy") -> None:
        """Overwrite these weights in place with ``other``'s (same shapes)."""
        for (w, b), (w2, b2) in zip(self.layers + [self.head], other.layers + [other.head]):
            w[...] = w2
            b[...] = b2

    # ---- files -------------------------------------------------------------------------------
    def to_bytes(self) -> bytes:
        """The policy as ``.npz`` bytes (keys ``w0, b0, ..., head_w, head_b, activation, encoder``)."""
        arrays = {}
        for k, (w, b) in enumerate(self.layers):
            arrays[f"w{k}"], arrays[f"b{k}"] = w, b
        arrays["head_w"], arrays["head_b"] = self.head
        arrays["activation"] = np.array(self.activation)
        arrays["encoder"] = np.array(self.encoder.name)
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes, max_parameters: Optional[int] = None) -> "NumpyPolicy":
        """Read :meth:`to_bytes` output (``allow_pickle=False``), every size checked from the
        archive's directory and ``.npy`` headers before any array is read
        (:func:`hod.training.npz.npz_headers`): the members declare at most
        :data:`~hod.agents.model_card.MAX_FILE_BYTES` together, the weights and biases hold at
        most ``max_parameters`` numbers (None: :data:`~hod.agents.model_card.MAX_PARAMETERS`), and
        ``activation`` and ``encoder`` are str scalars of at most :data:`MAX_NAME_LENGTH` characters.

        Raises:
            ValueError: not a policy archive (garbage, a truncated or corrupt archive, missing
                arrays, object arrays, shapes that do not chain) or one over those limits (the
                limit is named).
        """
        if max_parameters is None:
            max_parameters = model_card.MAX_PARAMETERS
        try:
            headers = npz_headers(data, model_card.MAX_FILE_BYTES, "MAX_FILE_BYTES", "policy archive")
            k = 0
            while f"w{k}" in headers:
                k += 1
            weights = [f"{p}{i}" for i in range(k) for p in ("w", "b")] + ["head_w", "head_b"]
            missing = [n for n in weights + ["activation"] if n not in headers]
            if missing:
                raise KeyError(f"no arrays {missing}")
            count = sum(headers[n].size for n in weights)
            if count > max_parameters:
                raise ValueError(f"the policy has {count:,} weights and biases; the limit is {max_parameters:,} "
                                 f"(MAX_PARAMETERS, hod.agents.model_card); refused before reading them")
            for n in weights:
                if headers[n].dtype.kind not in "biuf":
                    raise ValueError(f"array {n!r} has dtype {headers[n].dtype}; legal: numbers")
            names = [n for n in ("activation", "encoder") if n in headers]
            for n in names:
                h = headers[n]
                if h.shape != () or h.dtype.kind != "U" or h.dtype.itemsize > 4 * MAX_NAME_LENGTH:
                    raise ValueError(f"array {n!r} is {h.dtype} of shape {h.shape}; legal: a str scalar of at most "
                                     f"{MAX_NAME_LENGTH} characters")
            arrays = read_arrays(data, weights + names, "policy archive")
            layers = [(arrays[f"w{i}"], arrays[f"b{i}"]) for i in range(k)]
            encoder = str(arrays["encoder"]) if "encoder" in arrays else "none"
            return cls(layers, (arrays["head_w"], arrays["head_b"]), str(arrays["activation"]), encoder)
        except (KeyError, ValueError, ConfigError) as e:
            raise ValueError(f"not a numpy policy archive: {e}; legal: the .npz bytes of NumpyPolicy.to_bytes() "
                             f"(w0, b0, ..., head_w, head_b, activation, encoder)") from e


class PolicyBot(Bot):
    """A :class:`hod.agents.base.Bot` playing a :class:`NumpyPolicy` (always masked).

    Args:
        policy: the network (shared, not copied: an in-place update changes the bot's play).
        deterministic: argmax of the masked logits (True) or sampling from the masked softmax.
        seed: seed of the bot's generator (used when sampling).
    """

    name = "policy"

    def __init__(self, policy: NumpyPolicy, deterministic: bool = True, seed: Optional[int] = None) -> None:
        super().__init__(seed=seed)
        self.policy = policy
        self.deterministic = deterministic

    def act(self, observation: Observation, belief=None) -> int:
        legal_actions(observation)  # raises on an empty mask
        return self.policy.act(observation["observation"], observation["action_mask"], self.rng,
                               self.deterministic)


class NumpyBatchPolicy:
    """A :class:`NumpyPolicy` as a batch policy of the vectorized envs (``hod.agents.batch_policies``):
    ``policy(observations float32 (M, obs_size), masks int8 (M, num_actions)) -> int64 (M,)``
    legal actions (:meth:`NumpyPolicy.act_batch`).

    Args:
        policy: the network (shared, not copied: an in-place update, e.g. the pool's latest copy,
            changes the play).
        deterministic: argmax of the masked logits (True) or sampling from the masked softmax.
        seed: seed of its ``numpy.random.default_rng`` (used when sampling).
    """

    needs_observation = True

    def __init__(self, policy: NumpyPolicy, deterministic: bool = False, seed=None) -> None:
        self.policy = policy
        self.deterministic = deterministic
        self.rng = np.random.default_rng(seed)

    def __call__(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        return self.policy.act_batch(observations, action_masks, self.rng, self.deterministic)

    def __repr__(self) -> str:
        return (f"NumpyBatchPolicy({self.policy.obs_size}->{self.policy.num_actions}, "
                f"deterministic={self.deterministic})")
