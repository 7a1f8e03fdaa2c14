import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))


@pytest.fixture
def fake_cuda():
    """ember with tests/cuda/fake_cupy.py standing in for CuPy (one fake GPU)."""
    import fake_cupy
    if "cuda" in __import__("ember")._backend._BACKEND_BY_DEVICE_TYPE and sys.modules.get("cupy") is fake_cupy:
        yield fake_cupy  # already installed for the whole run (--device fake-cuda)
        return
    fake_cupy.install()
    try:
        yield fake_cupy
    finally:
        fake_cupy.uninstall()
