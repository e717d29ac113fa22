"""Session-wide test settings.

Stable-Baselines3 gives a model that learns without a logger of its own a fresh
``<tmp>/SB3-<date>`` folder (``stable_baselines3.common.logger.configure`` with no folder), which
nothing removes; with ``SB3_LOGDIR`` set it uses that folder instead. The suite points it at
pytest's own temporary directory (cleaned up by pytest's retention), for this process and the
commands it starts, so a test run leaves nothing in ``/tmp``.
"""
import os

import pytest


@pytest.fixture(scope="session", autouse=True)
def _sb3_logs_in_pytest_tmp(tmp_path_factory):
    if "SB3_LOGDIR" in os.environ:
        yield
        return
    os.environ["SB3_LOGDIR"] = str(tmp_path_factory.mktemp("sb3_logs"))
    try:
        yield
    finally:
        os.environ.pop("SB3_LOGDIR", None)
