"""Named, documented pieces of a flat observation vector (the OpenSpiel observer idea).

A layout is declared once as an ordered list of :class:`Piece`; it yields the offsets, the
total size, named views into a vector, and the Markdown table that documents it.

Example::

    LAYOUT = ObsLayout("tapeo", version=1, pieces=[
        Piece("hand", 10, "count of each action kind in hand", "/ 10"),
        Piece("round", 3, "one-hot round number"),
    ])
    obs = np.zeros(LAYOUT.size, np.float32)
    LAYOUT.view(obs, "hand")[:] = counts / 10
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

import numpy as np


@dataclass(frozen=True)
class Piece:
    """One named slice of the observation.

    Attributes:
        name: identifier, unique in the layout.
        size: number of float32 entries.
        meaning: what the entries hold (for the layout table).
        scale: how raw values are normalised (for the layout table), e.g. ``"/ 10"`` or ``"0/1"``.
    """

    name: str
    size: int
    meaning: str
    scale: str = "0/1"


@dataclass
class ObsLayout:
    """An ordered set of :class:`Piece` forming a flat float32 observation of ``size`` entries."""

    game: str
    version: int
    pieces: list[Piece]
    offsets: dict[str, slice] = field(init=False)
    size: int = field(init=False)

    def __post_init__(self) -> None:
        offsets: dict[str, slice] = {}
        start = 0
        for p in self.pieces:
            if p.name in offsets:
                raise ValueError(f"duplicate piece name {p.name!r}")
            if p.size <= 0:
                raise ValueError(f"piece {p.name!r} has size {p.size}")
            offsets[p.name] = slice(start, start + p.size)
            start += p.size
        self.offsets = offsets
        self.size = start

    def view(self, obs: np.ndarray, name: str) -> np.ndarray:
        """The slice of ``obs`` (shape (..., size)) holding piece ``name`` (a view, writable).

        Raises:
            KeyError: unknown piece, with the list of names.
        """
        try:
            sl = self.offsets[name]
        except KeyError:
            raise KeyError(f"no piece {name!r}; pieces: {list(self.offsets)}") from None
        return obs[..., sl]

    def names(self) -> list[str]:
        """Piece names in order."""
        return [p.name for p in self.pieces]

    def markdown_table(self, title: str = "Observation layout") -> str:
        """The layout table: index range, name, size, meaning and normalisation of each piece,
        under the line ``"{title} `{game}` version {version}: {size} float32 entries."``."""
        lines = [
            f"{title} `{self.game}` version {self.version}: {self.size} float32 entries.",
            "",
            "| indices | piece | size | meaning | normalisation |",
            "|---|---|---|---|---|",
        ]
        for p in self.pieces:
            sl = self.offsets[p.name]
            lines.append(f"| {sl.start}-{sl.stop - 1} | `{p.name}` | {p.size} | {p.meaning} | {p.scale} |")
        return "\n".join(lines)


def concat_size(pieces: Iterable[Piece]) -> int:
    """Total size of ``pieces``."""
    return sum(p.size for p in pieces)
