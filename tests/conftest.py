"""Shared pytest fixtures."""

import os

import pytest
from recalc import find_soffice


@pytest.fixture(scope="session")
def soffice() -> str:
    """Path of LibreOffice's soffice, for tests that recalculate workbooks.

    Without LibreOffice such tests are skipped, unless IFR_REQUIRE_SOFFICE=1
    (as in CI), where a missing engine must fail rather than pass unnoticed.
    """
    path = find_soffice()
    if path is None:
        message = "LibreOffice (soffice) not found; install it with .ci/install-libreoffice.sh"
        if os.environ.get("IFR_REQUIRE_SOFFICE") == "1":
            pytest.fail(message + " (IFR_REQUIRE_SOFFICE=1)")
        pytest.skip(message)
    return path
