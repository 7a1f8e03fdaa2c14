"""The compiled methods' and functions' extension builds wherever it can: the tests of its cases skip where it
is not built, so a source that stopped compiling would otherwise leave them all skipped. Plain tests (torch
defines nothing here)."""
import os

import pytest

from ember._inductor import _compiler
from ember.ops import _compiled_methods


def test_the_extension_builds_where_a_compiler_and_the_headers_are_found():
    if os.environ.get("EMBER_COMPILED_METHODS", "1") == "0":
        pytest.skip("the compiled methods are switched off (EMBER_COMPILED_METHODS=0)")
    if not _compiler.compiler_available() or _compiled_methods.include_dirs() is None:
        pytest.skip("no C compiler or no Python and NumPy headers here")
    _compiled_methods.install()
    # (built: the methods themselves may be out of place, while a tensor subclass's dispatch is on)
    assert _compiled_methods._state["module"] is not None
