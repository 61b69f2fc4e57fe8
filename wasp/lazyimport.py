"""A package's public face whose names load on first use (PEP 562), so that importing the
package, or a light module of it, does not import its heavy modules (numba kernels, pandas)."""

import importlib


def face(package: str, names: dict):
    """(``__all__``, ``__getattr__``, ``__dir__``) for `package`, whose public names live in
    its modules: `names` maps a module (relative to `package`) to its names, space-separated.
    A name is imported from its module when it is first asked for, then kept."""
    home = {name: module for module, words in names.items() for name in words.split()}

    def __getattr__(name: str):
        module = home.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(importlib.import_module(package), name, value)
        return value

    def __dir__():
        return sorted(home)

    return sorted(home), __getattr__, __dir__
