"""ember raises glibc's malloc thresholds on import unless told not to."""
import os
import subprocess
import sys

import pytest

PROBE = "import ember; from ember._backend import host_allocator as h; print(h.applied)"


def _applied(**env):
    full = dict(os.environ, **env)
    out = subprocess.run([sys.executable, "-c", PROBE], env=full, capture_output=True, text=True,
                         timeout=120, check=True)
    return out.stdout.strip()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mallopt is glibc's")
def test_tuning_is_applied_on_import_and_can_be_turned_off():
    assert _applied(EMBER_MALLOC_TUNING="1") == "True"
    assert _applied(EMBER_MALLOC_TUNING="0") == "False"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mallopt is glibc's")
def test_users_own_glibc_settings_win():
    assert _applied(EMBER_MALLOC_TUNING="1", MALLOC_MMAP_THRESHOLD_="131072") == "False"
