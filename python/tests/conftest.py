import os
from pathlib import Path

import pytest

SOURCE = Path(os.environ.get("SMASH_SOURCE_DIR", Path(__file__).resolve().parents[2]))


def pytest_configure(config):
    config.addinivalue_line("markers", "ray: starts a local Ray cluster (the batch tests)")


@pytest.fixture
def lab_path():
    return SOURCE / "scenes" / "lab_bunny.json"


@pytest.fixture
def source():
    return SOURCE
