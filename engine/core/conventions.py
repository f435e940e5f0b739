"""The public API's convention as code (CONTRIBUTING.md, "API convention"): old call forms kept for one release
with a DeprecationWarning naming the new form, and :class:`Result`, which gives an analysis's result dataclass
``to_pandas()``."""

from __future__ import annotations

import functools
import inspect
import os
import warnings
from typing import Callable

from .errors import LexprobeError

REMOVED_IN = "0.2.0"  # the release that drops the deprecated forms


def deprecated(old: str, new: str) -> None:
    """Warn that the call form ``old`` goes in :data:`REMOVED_IN`, naming ``new`` (the caller's caller's line)."""
    warnings.warn(f"{old} is deprecated and goes in lexprobe {REMOVED_IN}: use {new}", DeprecationWarning,
                  stacklevel=3)


def old_order(*old: str):
    """Accept a function's positional order before the convention for one release: ``old`` names its positional
    parameters then (``"home", "name", "spec"``). A call is in the old order when it passes more positional
    arguments than the new signature takes, or when ``old`` starts with ``home`` and the first argument is a path
    object (an index name is a str)."""
    def wrap(func):
        params = list(inspect.signature(func).parameters.values())
        bound = 1 if params and params[0].name == "cls" else 0  # a classmethod: args[0] is the class
        positional = [p.name for p in params if p.kind is p.POSITIONAL_OR_KEYWORD]

        @functools.wraps(func)
        def call(*args, **kwargs):
            given = args[bound:]
            if len(args) > len(positional) or (old[0] == "home" and given and isinstance(given[0], os.PathLike)):
                if len(given) > len(old):
                    raise TypeError(f"{func.__name__}() takes at most {len(old)} positional arguments")
                where = f"{args[0].__name__}.{func.__name__}" if bound else func.__name__
                used = old[:len(given)]
                new = [n for n in positional if n in used] + [f"{n}={n}" for n in used if n not in positional]
                deprecated(f"{where}({', '.join(used)})", f"{where}({', '.join(new)})")
                return func(*args[:bound], **dict(zip(old, given)), **kwargs)
            return func(*args, **kwargs)

        return call

    return wrap


def renamed(**old: str | tuple[str, Callable]):
    """Accept old keyword names for one release: ``renamed(topn="k")``, or ``renamed(honest=("exclude_inputs",
    operator.not_))`` for a name whose new one means the opposite."""
    def wrap(func):
        @functools.wraps(func)
        def call(*args, **kwargs):
            for name in [n for n in old if n in kwargs]:
                new, convert = (old[name], None) if isinstance(old[name], str) else old[name]
                if new in kwargs:
                    raise TypeError(f"{func.__name__}() got {new}= and its old name {name}=: give {new}= only")
                deprecated(f"{func.__name__}({name}=)", f"{func.__name__}({new}={'not ' if convert else ''}{name})")
                value = kwargs.pop(name)
                kwargs[new] = convert(value) if convert else value
            return func(*args, **kwargs)

        return call

    return wrap


def arrow_to_pandas(table):
    """``table.to_pandas()``, or one clear error when pandas is not installed (it comes with the ``notebook``
    extra, not with core)."""
    try:
        import pandas  # noqa: F401  (pyarrow imports it itself; this only asks whether it is there)
    except ImportError:
        raise LexprobeError("to_pandas() needs pandas, which is not installed (pip install 'lexprobe[notebook]' "
                            "or pandas); to_arrow() gives the same table as an Arrow table") from None
    return table.to_pandas()


def _brief(value) -> str:
    """One field's value in a few characters: shapes and lengths for arrays, tables and collections."""
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (bool, int)) or value is None:
        return repr(value)
    if isinstance(value, str):
        return repr(value if len(value) <= 40 else value[:39] + "…")
    shape = getattr(value, "shape", None)
    if shape is not None and hasattr(value, "dtype"):  # numpy (or torch) arrays
        return f"{str(value.dtype).replace('torch.', '')}{list(shape)}"
    if hasattr(value, "num_rows") and hasattr(value, "num_columns"):  # Arrow tables
        return f"table[{value.num_rows} x {value.num_columns}]"
    if isinstance(value, (list, tuple, dict, set)):
        short = repr(value)
        return short if len(short) <= 40 else f"{type(value).__name__}[{len(value)}]"
    return f"<{type(value).__name__}>"


def short_repr(obj) -> str:
    """A one-line repr of a dataclass: ``<Name field=value ...>`` with arrays, tables and long collections
    given by shape or length (never their contents), long strings cut, and the fields past about 150
    characters counted."""
    import dataclasses

    names = [f.name for f in dataclasses.fields(obj) if f.repr]
    parts: list[str] = []
    for n in names:
        if sum(len(p) + 1 for p in parts) > 150:
            parts.append(f"… {len(names) - len(parts)} more fields")
            break
        parts.append(f"{n}={_brief(getattr(obj, n))}")
    return f"<{type(obj).__name__} " + " ".join(parts) + ">"


class Result:
    """Base of an analysis's result dataclass: :meth:`to_arrow` is its main table (one row per item the analysis
    scored), :meth:`to_pandas` the same as a DataFrame; the other fields hold summaries and the material. Its
    repr is one short line (:func:`short_repr`) unless the subclass writes its own."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "__repr__" not in cls.__dict__:  # set before @dataclass runs, which then keeps it
            cls.__repr__ = short_repr

    def to_arrow(self):
        raise NotImplementedError(f"{type(self).__name__} names its main table")

    def to_pandas(self):
        """:meth:`to_arrow` as a pandas DataFrame (needs pandas)."""
        return arrow_to_pandas(self.to_arrow())
