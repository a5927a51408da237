"""The package under the distribution's own name: ``differential_dataflow_stages`` is ``final``.

``final`` is the name the stages give the complete engine (after v0..v5),
and a generic one in an environment that installs this package beside
others. Every module ``final.X`` is importable as
``differential_dataflow_stages.X`` too, and is the same module object, not
a copy: one class under two names, so a ``Run`` made under one is a ``Run``
under the other, and ``final`` keeps working (CHANGELOG.md's compatibility
policy says for how long). An engine's code that imports the oracle, a
Python plug-in say, writes::

    from differential_dataflow_stages.conformance.drive import Run

Importing this package puts an ``_Alias`` finder first on ``sys.meta_path``:
asked for ``differential_dataflow_stages.X``, it imports ``final.X`` and
hands that module over, so that the path finder never loads ``final``'s
files a second time under the other name.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import ModuleType

import final

REAL = "final"


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``<alias>.X`` as the module ``final.X``, already imported or imported then.

    The import system sets a loaded module's ``__spec__`` to the spec it
    found it by; ``exec_module`` puts ``final.X``'s own back, so that the
    module still says where it comes from (``importlib.resources``,
    ``importlib.reload`` read it). ``_specs`` holds each between the two.
    """

    def __init__(self, alias: str) -> None:
        self.alias = alias
        self._specs: dict[str, importlib.machinery.ModuleSpec | None] = {}

    def find_spec(self, name: str, path: object = None, target: ModuleType | None = None
                  ) -> importlib.machinery.ModuleSpec | None:
        if not name.startswith(self.alias + "."):
            return None
        if importlib.util.find_spec(REAL + name[len(self.alias):]) is None:
            return None
        return importlib.util.spec_from_loader(name, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(REAL + spec.name[len(self.alias):])
        self._specs[module.__name__] = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run (``create_module`` gave a module ``final``'s import ran already) but the module's
        own spec to put back."""
        module.__spec__ = self._specs.pop(module.__name__)


if not any(isinstance(finder, _Alias) for finder in sys.meta_path):
    sys.meta_path.insert(0, _Alias(__name__))
sys.modules[__name__] = final
