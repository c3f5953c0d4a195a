import os
from pathlib import Path

import pytest

SOURCE = Path(os.environ.get("SMASH_SOURCE_DIR", Path(__file__).resolve().parents[2]))

# The Ray tests' clusters live on this machine for the length of a test: Ray's token
# authentication (on by default since 2.5x) is turned off for them — with it, a `ray start` finds
# the token an earlier run left in ~/.ray and its own processes are refused (seen in CI). Real
# clusters keep it on (docs/python.md).
os.environ["RAY_AUTH_MODE"] = "disabled"
os.environ["RAY_USAGE_STATS_ENABLED"] = "0"


def pytest_configure(config):
    config.addinivalue_line("markers", "ray: starts a local Ray cluster (the batch tests)")


@pytest.fixture
def lab_path():
    return SOURCE / "scenes" / "lab_bunny.json"


@pytest.fixture
def source():
    return SOURCE
