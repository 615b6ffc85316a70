"""Parameters as users type them: bounded parsing, the closest name, papermill's cell.

- :func:`load_yaml`: a parameter file or a YAML/JSON value (``-p tasks "[1, 2]"``),
  parsed with its size, nesting depth and anchors bounded: a 600-byte alias bomb, a
  binary file or a 1,000-deep list is refused in one line, in milliseconds.
- :func:`preview`: what a refusal shows of a value, rendered bounded (``reprlib``),
  never the whole of a huge or deeply nested value first.
- :func:`closest`: the declared name nearest to a misspelled one (difflib).
- :func:`injected_names`: the names papermill assigned in this kernel (its
  ``injected-parameters`` cell, found in IPython's input history), so that a name no
  notebook declares is refused before anything is measured instead of being ignored.
"""

from __future__ import annotations

import ast
import difflib
import json
import os
import reprlib
import stat
import typing
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from threadcost import paths
from threadcost.errors import ParameterError

MAX_FILE_BYTES = 64 * 1024  # the largest shipped set is about 2 KiB
MAX_DEPTH = 8  # a parameter is a scalar or a list of scalars: depth 2 inside a file
MAX_NODES = 10_000
PAPERMILL_HEADER = "# Parameters\n"  # papermill's injected cell starts so (Python)


class FileRefused(ParameterError):
    """A parameter file refused as a whole: ``<file>: <why>``."""

    def __init__(self, path: Path, why: str) -> None:
        Exception.__init__(self, f"parameter set {path}: {why}")
        self.name, self.value, self.allowed = str(path), None, why

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (Path(self.name), self.allowed))


class NotebookParameterError(ParameterError):
    """A refusal in a notebook's kernel: IPython shows its one line, no traceback."""

    def _render_traceback_(self) -> list[str]:
        return [f"ParameterError: {self}"]


class InputError(ValueError):
    """A value or file that cannot be read as parameters; the message says why."""


def _loader() -> type:
    import yaml

    class BoundedLoader(yaml.SafeLoader):
        """SafeLoader that refuses anchors and aliases and bounds depth and size."""

        def __init__(self, stream: Any) -> None:
            super().__init__(stream)
            self._depth = 0
            self._nodes = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                raise InputError("uses a YAML alias (*name): parameter values are written "
                                 "out, without anchors or aliases")
            event = self.peek_event()
            if getattr(event, "anchor", None):
                raise InputError("uses a YAML anchor (&name): parameter values are written "
                                 "out, without anchors or aliases")
            self._nodes += 1
            if self._nodes > MAX_NODES:
                raise InputError(f"holds more than {MAX_NODES:,} values")
            self._depth += 1
            try:
                if self._depth > MAX_DEPTH:
                    raise InputError(f"is nested deeper than {MAX_DEPTH} levels")
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1

    return BoundedLoader


def load_yaml(data: bytes | str) -> Any:
    """``data`` parsed as YAML (JSON is YAML) within the bounds; InputError says why not."""
    import yaml

    if isinstance(data, bytes):
        if len(data) > MAX_FILE_BYTES:
            raise InputError(f"is {len(data):,} bytes; a parameter set is at most "
                             f"{MAX_FILE_BYTES:,}")
        if b"\0" in data:
            raise InputError("is binary, not YAML text")
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError("is not UTF-8 text") from None
    elif len(data) > MAX_FILE_BYTES:
        raise InputError(f"is {len(data):,} characters; at most {MAX_FILE_BYTES:,}")
    loader = _loader()(data)
    try:
        return loader.get_single_data()
    except InputError:
        raise
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(f"is not valid YAML: {problem}{where}") from None
    except RecursionError:
        raise InputError(f"is nested deeper than {MAX_DEPTH} levels") from None
    finally:
        loader.dispose()


_REPR = reprlib.Repr()
_REPR.maxlevel = 2
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = 8
_REPR.maxstring = _REPR.maxother = 60


class Preview:
    """A value as a refusal shows it: ``repr`` bounded in length and depth."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        return _REPR.repr(self.value)


def preview(value: Any) -> Any:
    """``value`` itself when it is a plain scalar, else a bounded :class:`Preview`."""
    if value is None or isinstance(value, bool | int | float) or (
            isinstance(value, str) and len(value) <= 80):
        return value
    return Preview(value)


def size_within(value: Any, limit: int = MAX_NODES, depth: int = MAX_DEPTH) -> bool:
    """True when ``value`` holds at most ``limit`` items, nested at most ``depth`` deep
    (counted without walking further than that, so an alias bomb answers at once)."""
    seen = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        seen += 1
        if seen > limit or level > depth:
            return False
        if isinstance(item, list | tuple | set):
            stack.extend((v, level + 1) for v in item)
        elif isinstance(item, dict):
            stack.extend((v, level + 1) for v in item.values())
    return True


def closest(name: str, names: Iterable[str]) -> str | None:
    """The declared name nearest to ``name``, or None when none is close."""
    found = difflib.get_close_matches(name, list(names), n=1, cutoff=0.6)
    return found[0] if found else None


def injected_names() -> list[str]:
    """Names papermill's injected cell assigned in this IPython kernel (none elsewhere:
    JupyterLab, a plain Python process)."""
    import sys

    ipython = sys.modules.get("IPython")  # loaded in a kernel; never imported here
    shell = ipython.get_ipython() if ipython is not None else None
    history = getattr(getattr(shell, "history_manager", None), "input_hist_raw", None)
    if not history:
        return []
    names: list[str] = []
    for source in history:
        if not isinstance(source, str) or not source.startswith(PAPERMILL_HEADER):
            continue
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, ast.Assign):
                names += [t.id for t in node.targets if isinstance(t, ast.Name)]
    return names


def read_file(path: Path) -> bytes:
    """A parameter file's bytes: a regular file only (a pipe or a device would block),
    opened without blocking, at most one byte past the bound read."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise InputError("is not a regular file")
        chunks, left = [], MAX_FILE_BYTES + 1
        while left > 0:
            chunk = os.read(fd, left)
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def inside_build(folder: str) -> bool:
    """True when ``folder`` (relative: to the build folder) lies inside the build folder."""
    build = paths.build_dir()
    target = Path(folder)
    target = target if target.is_absolute() else build / target
    return target.resolve().is_relative_to(build.resolve())


# ------------------------------------------------------------ one declared parameter

@dataclass(frozen=True)
class Param:
    """One parameter of one or more notebooks, declared once (in its family's spec, or
    threadcost.experiments.parameters): its type, default, unit and range, and the functions
    whose argument takes its default. The experiments' checks, the CLI's options and the
    parameter sets read the default and range from here."""

    name: str
    type: str  # the annotation written in the cell (papermill reads it)
    default: Any
    notebooks: tuple[str, ...]
    doc: str
    unit: str = ""
    minimum: int | float | None = None  # of the value, or of every item of a list
    maximum: int | float | None = None
    choices: tuple[str, ...] = ()  # the strings a str or list[str] value may hold
    api_name: str = ""  # the experiment API's name for it (``malloc_mib`` -> ``mib``)
    # the functions of its family taking its default ("run.run", "checks.check_params:n"
    # where the argument is not api_name, "family.module.function" for another family's)
    feeds: tuple[str, ...] = ()
    narrowed: bool = False  # the machine (memory, pids) or another argument may narrow the maximum

    def line(self) -> str:
        """The parameters-cell line declaring it."""
        return f"{self.name}: {self.type} = {literal(self.default)}  # {self.doc}"

    @property
    def bounds(self) -> dict[str, Any]:
        """``minimum`` and ``maximum`` as keywords of
        :func:`threadcost.settings.validate.integer`."""
        return {"minimum": self.minimum, "maximum": self.maximum}

    def range_text(self) -> str:
        """The declared range in words (``1 .. 10,000,000 MiB``), or ""."""
        unit = f" {self.unit}" if self.unit else ""
        if self.choices:
            return "one of " + ", ".join(self.choices)
        if self.minimum is not None and self.maximum is not None:
            return f"{self.minimum:,} .. {self.maximum:,}{unit}"
        if self.minimum is not None:
            return f">= {self.minimum:,}{unit}"
        if self.maximum is not None:
            return f"<= {self.maximum:,}{unit}"
        return ""

    def check(self, value: Any, where: str = "") -> Any:
        """``value`` if it fits the declared type and range, else ParameterError
        naming this parameter (and ``where``: the file it came from)."""
        name = f"{where}: {self.name}" if where else self.name
        if not size_within(value):
            raise ParameterError(name, preview(value),
                                 f"is too large or nested too deep for {self.type}")
        if not fits(self.type, value):
            hint = ""
            if isinstance(value, str) and "list" in self.type:
                hint = ("; a list is written as YAML or JSON, e.g. -p "
                        f"{self.name} '{literal(self.default)}', or given in a file "
                        "with -f/-y")
            raise ParameterError(name, preview(value), f"must be {self.type} ({self.doc}){hint}")
        items = value if isinstance(value, list) else [value]
        numbers = [v for v in items if isinstance(v, int | float) and not isinstance(v, bool)]
        if (self.minimum is not None and any(v < self.minimum for v in numbers)) or (
                self.maximum is not None and any(v > self.maximum for v in numbers)):
            raise ParameterError(name, preview(value), f"must be {self.range_text()}")
        if self.choices and any(isinstance(v, str) and v not in self.choices for v in items):
            raise ParameterError(name, preview(value),
                                 "every entry must be one of " + ", ".join(self.choices))
        return value

    def coerce(self, value: Any) -> Any:
        """A list typed on papermill's command line arrives as text (``-p
        malloc_allocators "[malloc]"``): parsed as YAML/JSON when that text is not
        itself a value the parameter takes."""
        if not isinstance(value, str) or "list" not in self.type or fits(self.type, value):
            return value
        try:
            parsed = load_yaml(value)
        except InputError:
            return value
        return parsed if isinstance(parsed, list) else value


def literal(value: Any) -> str:
    """A default as Python source, strings in double quotes."""
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    return repr(value)


def fits(annotation: str, value: Any) -> bool:
    """True when ``value`` has the type the annotation names (papermill's spelling)."""
    hint = eval(annotation, {"Optional": typing.Optional, "Union": typing.Union})
    return _fits_hint(hint, value)


def _fits_hint(hint: Any, value: Any) -> bool:
    origin = typing.get_origin(hint)
    if hint is type(None):
        return value is None
    if origin is typing.Union:
        return any(_fits_hint(h, value) for h in typing.get_args(hint))
    if origin is list:
        (item,) = typing.get_args(hint)
        return isinstance(value, list) and all(_fits_hint(item, v) for v in value)
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, hint)
