"""``.npz`` archives of plain arrays read with every size checked before anything is allocated.

An ``.npz`` is a zip of ``.npy`` members. :func:`npz_headers` reads, for each member, only what
the zip directory declares (its uncompressed size, ``ZipInfo.file_size``) and the ``.npy``
header (numpy's own ``numpy.lib.format.read_magic`` and ``read_array_header_1_0/2_0``: shape,
dtype, order), so a caller compares the shapes with what it expects (a model card's network)
and caps their sizes before :func:`read_arrays` reads a single array. The zip reader never
decompresses more than a member's declared size, and every array must fit in its member, so
what is read is bounded by the declared sizes checked here. Object arrays (pickles) are refused
from their header; the arrays are then read with ``numpy.load(..., allow_pickle=False)``.
"""
from __future__ import annotations

import io
import math
import os
import zipfile
import zlib
from dataclasses import dataclass
from typing import Iterable, Optional

import numpy as np

from hod.agents.model_card import MAX_ZIP_MEMBERS

#: dtype kinds an array may have: bool, signed and unsigned integers, floats, and str (``U``,
#: the two names of a pool snapshot).
ARRAY_KINDS = "biufU"


@dataclass(frozen=True)
class ArrayHeader:
    """What an ``.npy`` header declares: ``shape`` (tuple of int), ``dtype``, and ``size`` (the
    element count, the product of ``shape``)."""

    shape: tuple[int, ...]
    dtype: np.dtype

    @property
    def size(self) -> int:
        """The element count: the product of :attr:`shape` (1 for a 0-d array)."""
        return math.prod(self.shape)


#: The end-of-central-directory record of a zip: its signature and its fixed size (bytes).
_EOCD_SIGNATURE, _EOCD_SIZE = b"PK\x05\x06", 22
#: The zip64 end-of-central-directory locator's signature (it stands just before the record).
_ZIP64_LOCATOR = b"PK\x06\x07"
#: The size of a central-directory entry with an empty name and no extra field or comment (bytes).
_MIN_ENTRY = 46


def check_member_count(data: bytes | str | os.PathLike, limit: int, limit_name: str, source: str) -> int:
    """The number of members the zip ``data`` (bytes or a path) lists, read from its
    end-of-central-directory record (the last 22 bytes plus at most a 65,535-byte comment)
    before :mod:`zipfile` parses the directory, which it does whole: a small file listing
    hundreds of thousands of members would take hundreds of MB to parse. Both the count the
    record states and the directory's size are checked (``zipfile`` parses as many entries as
    the size holds, whatever the count says: at most size / 46). Returns the count.

    Raises:
        ValueError: an unreadable file, no end-of-central-directory record (not a zip, or cut short), a zip64
            directory (``0xFFFF`` entries, a zip64 locator: this project never writes one), or more than
            ``limit`` members (``limit_name``) stated or room for more in the directory's size.
    """
    if isinstance(data, bytes):
        tail = data[-(_EOCD_SIZE + 0xFFFF):]
    else:
        try:
            with open(data, "rb") as f:
                f.seek(0, os.SEEK_END)
                f.seek(max(0, f.tell() - (_EOCD_SIZE + 0xFFFF)))
                tail = f.read()
        except OSError as e:
            raise ValueError(f"{source}: cannot be read ({e})") from e
    at = tail.rfind(_EOCD_SIGNATURE)
    if at < 0 or len(tail) - at < _EOCD_SIZE:
        raise ValueError(f"{source}: not a zip archive, or one cut short (no end-of-central-directory record)")
    on_disk, total = int.from_bytes(tail[at + 8:at + 10], "little"), int.from_bytes(tail[at + 10:at + 12], "little")
    directory = int.from_bytes(tail[at + 12:at + 16], "little")
    count = max(on_disk, total)
    if count == 0xFFFF or directory == 0xFFFFFFFF or (at >= 20 and tail[at - 20:at - 16] == _ZIP64_LOCATOR):
        raise ValueError(f"{source}: a zip64 directory; refused before parsing it (this project writes none; "
                         f"the limit is {limit:,} members, {limit_name})")
    if count > limit:
        raise ValueError(f"{source}: the zip directory lists {count:,} members; the limit is {limit:,} "
                         f"({limit_name}); refused before parsing it")
    # zipfile reads the directory by its size, whatever count the record states: a directory of
    # that many bytes holds up to size / 46 entries (46 bytes: an entry with an empty name)
    if directory // _MIN_ENTRY > limit:
        raise ValueError(f"{source}: the zip directory takes {directory:,} bytes, room for up to "
                         f"{directory // _MIN_ENTRY:,} members; the limit is {limit:,} members ({limit_name}); "
                         f"refused before parsing it")
    return count


def check_declared_sizes(infos: Iterable[zipfile.ZipInfo], limit: int, limit_name: str, source: str) -> int:
    """Sum the uncompressed sizes the zip directory declares (``ZipInfo.file_size``), member by
    member, refusing the first member that takes the total over ``limit`` bytes, before any
    member is opened. Returns the total (bytes).

    Raises:
        ValueError: the member that goes over, its declared size and the limit (``limit_name``).
    """
    total = 0
    for info in infos:
        total += info.file_size
        if total > limit:
            raise ValueError(f"{source}: member {info.filename!r} declares {info.file_size:,} bytes uncompressed, "
                             f"which takes the archive over {limit:,} bytes, the limit {limit_name}; refused "
                             f"before reading it")
    return total


def npz_headers(data: bytes | str | os.PathLike, limit: int, limit_name: str, source: str,
                max_members: Optional[int] = None) -> dict[str, ArrayHeader]:
    """The array headers ``{name: ArrayHeader}`` of the ``.npz`` bytes (or file) ``data`` (names
    without ``.npy``), reading nothing but the zip directory (at most ``max_members`` members, default
    :data:`hod.agents.model_card.MAX_ZIP_MEMBERS`, counted by :func:`check_member_count` before it is parsed) and each member's header.

    Args:
        data: the archive's bytes, or its path.
        limit: the most bytes all members may declare together (:func:`check_declared_sizes`).
        limit_name: the limit's name for the messages (e.g. ``"MAX_FILE_BYTES"``).
        source: what the archive is, for the messages.

    Raises:
        ValueError: not a zip, a member that is not ``.npy`` or declares too much, a ``.npy``
            version other than 1.0 and 2.0, a bad header, a dtype outside :data:`ARRAY_KINDS`
            (object arrays: pickles), a negative dimension, or an array larger than its member
            (truncated or forged).
    """
    check_member_count(data, MAX_ZIP_MEMBERS if max_members is None else max_members, "MAX_ZIP_MEMBERS", source)
    try:
        z = zipfile.ZipFile(io.BytesIO(data) if isinstance(data, bytes) else data)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError, OSError) as e:
        raise ValueError(f"{source}: not an .npz archive ({type(e).__name__}: {e})") from e
    out: dict[str, ArrayHeader] = {}
    with z:
        infos = z.infolist()
        check_declared_sizes(infos, limit, limit_name, source)
        for info in infos:
            if not info.filename.endswith(".npy"):
                raise ValueError(f"{source}: member {info.filename!r} is not an array (.npy); an .npz of plain "
                                 f"arrays holds only .npy members")
            try:
                with z.open(info) as f:
                    version = np.lib.format.read_magic(f)
                    if version == (1, 0):
                        shape, _, dtype = np.lib.format.read_array_header_1_0(f)
                    elif version == (2, 0):
                        shape, _, dtype = np.lib.format.read_array_header_2_0(f)
                    else:
                        raise ValueError(f".npy format version {version[0]}.{version[1]}; legal: 1.0, 2.0")
                    offset = f.tell()
            except (ValueError, OSError, EOFError, zipfile.BadZipFile, zlib.error, NotImplementedError) as e:
                raise ValueError(f"{source}: array {info.filename!r} has an unreadable header: {e}") from e
            if dtype.hasobject or dtype.kind not in ARRAY_KINDS:
                raise ValueError(f"{source}: array {info.filename!r} has dtype {dtype}; only numbers and strings are "
                                 f"loaded (dtype kinds {list(ARRAY_KINDS)}; object arrays are pickles, refused)")
            header = ArrayHeader(tuple(int(d) for d in shape), dtype)
            if any(d < 0 for d in header.shape):
                raise ValueError(f"{source}: array {info.filename!r} declares shape {header.shape}; legal: "
                                 f"dimensions >= 0")
            if offset + header.size * dtype.itemsize > info.file_size:
                raise ValueError(f"{source}: array {info.filename!r} declares shape {header.shape} of {dtype} "
                                 f"({header.size * dtype.itemsize:,} bytes) but its member holds "
                                 f"{info.file_size - offset:,} bytes after the header (truncated or forged)")
            out[info.filename[:-4]] = header
    return out


def read_arrays(data: bytes | str | os.PathLike, names: Optional[Iterable[str]] = None,
                source: str = "archive") -> dict[str, np.ndarray]:
    """The arrays ``names`` (all when None) of the ``.npz`` bytes (or file) ``data``, read with
    ``numpy.load(..., allow_pickle=False)``. Call it once :func:`npz_headers` has checked the
    archive: each array then allocates no more than its member's declared size.

    Raises:
        ValueError: an unreadable archive or array, or a name it does not hold.
    """
    try:
        with np.load(io.BytesIO(data) if isinstance(data, bytes) else data, allow_pickle=False) as f:
            return {k: f[k] for k in (f.files if names is None else names)}
    except (ValueError, OSError, EOFError, KeyError, zipfile.BadZipFile, zlib.error) as e:
        raise ValueError(f"{source}: unreadable array ({type(e).__name__}: {e})") from e
