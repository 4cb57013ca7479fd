"""A library's compiled extension module, imported without its package's Python.

Some libraries keep what dm_cc calls in a compiled module and, in their package's
``__init__.py``, import much Python it never calls: pydantic_core's brings its
``core_schema`` (some 200 TypedDicts, typing_extensions, decimal, fractions: ~8 ms of
every ``dm_cc policy check``) to re-export ``SchemaValidator`` and ``ValidationError``
from ``pydantic_core._pydantic_core``. :func:`extension` imports just that module, as
the import system would (the same file, the same loader), and registers it under its
full name: a later ``import pydantic_core`` (pydantic, litellm) finds it there, so its
classes are the very ones dm_cc caught and made (one ``ValidationError``, never two).
Where the layout is not as expected it falls back to the ordinary import. One trace
is left: a package imported after it lacks the attribute naming it
(``pydantic_core._pydantic_core``; ``from pydantic_core import _pydantic_core`` still
finds it): no installed library reads it so.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from importlib.machinery import ExtensionFileLoader, PathFinder
from types import ModuleType


def extension(package: str, name: str) -> ModuleType:
    """``package.name`` (a compiled module), its package's ``__init__`` not run when
    the package is not imported yet."""
    full = f"{package}.{name}"
    module = sys.modules.get(full)
    if module is not None:
        return module
    if package not in sys.modules:
        parent = importlib.util.find_spec(package)  # finds; runs nothing of the package
        locations = parent.submodule_search_locations if parent else None
        spec = PathFinder.find_spec(full, list(locations)) if locations else None
        if spec is not None and isinstance(spec.loader, ExtensionFileLoader):
            module = importlib.util.module_from_spec(spec)
            sys.modules[full] = module
            try:
                spec.loader.exec_module(module)
            except BaseException:
                del sys.modules[full]
                raise
            return module
    return importlib.import_module(full)


def pydantic_core_native() -> ModuleType:
    """pydantic_core's compiled module (``SchemaValidator``, ``ValidationError``)."""
    return extension("pydantic_core", "_pydantic_core")
