"""Names for things that are imported only when used: policies, checks, samplers, executors.

Built-ins are registered in code as `module:attribute` targets; other packages
add their own through Python entry points, with no change to egym:

    # pyproject.toml of your package
    [project.entry-points."egym.policies"]
    my-agent = "my_package.agent:MyPolicy"

after which `--policy my-agent` works. A name may also be given directly as
`module:attribute`. Unknown names fail with the closest known one; a name two installed
packages give to different targets fails naming both.
"""

from __future__ import annotations

import importlib
from functools import cached_property
from importlib.metadata import entry_points
from typing import Any

from core.errors import ConfigError, EgymError
from core.validation import closest


class Registry:
    """One kind of plugin (e.g. "policy"), found by name in code and in the entry-point group."""

    def __init__(self, kind: str, group: str, *, error: type[EgymError] = ConfigError):
        self.kind, self.group, self.error = kind, group, error
        self._builtin: dict[str, str] = {}
        self._extras: dict[str, str] = {}

    def register(self, name: str, target: str, *, extra: str = "") -> None:
        """A built-in: `target` is "module:attribute"; `extra` is the pip extra its imports need."""
        self._builtin[name] = target
        if extra:
            self._extras[name] = extra

    @cached_property
    def _installed(self) -> dict[str, list[str]]:
        """Entry points of installed packages (read once per process): each name's targets, more than
        one where packages clash."""
        found: dict[str, list[str]] = {}
        for ep in entry_points(group=self.group):
            if ep.value not in found.setdefault(ep.name, []):
                found[ep.name].append(ep.value)
        return found

    def names(self) -> list[str]:
        return sorted({*self._builtin, *self._installed})

    def target(self, name: str) -> str:
        """The "module:attribute" a name stands for; the error type (with the closest name) when unknown."""
        installed = self._installed.get(name, [])
        if len(installed) > 1 and name not in self._builtin:
            raise self.error(
                f"{self.kind} '{name}' is defined twice by installed packages ({' and '.join(sorted(installed))}): "
                "uninstall one"
            )
        target = self._builtin.get(name) or next(iter(installed), None)
        if target is None and ":" in name:
            target = name
        if target is None:
            raise self.error(
                f"unknown {self.kind} '{name}'{closest(name, self.names())} (or give module:attribute)"
            )
        return target

    def load(self, name: str) -> Any:
        """The object `name` stands for, imported now."""
        module_name, _, attribute = self.target(name).partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            extra = f" (pip install 'enterprise-gym[{self._extras[name]}]')" if name in self._extras else ""
            raise self.error(f"{self.kind} '{name}' could not be imported: {exc}{extra}") from None
        try:
            return getattr(module, attribute)
        except AttributeError:
            public = [a for a in dir(module) if not a.startswith("_")]
            raise self.error(
                f"{self.kind} '{name}': {module_name} has no attribute '{attribute}'"
                f"{closest(attribute, public, list_known=False)}"
            ) from None
