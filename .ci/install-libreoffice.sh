#!/usr/bin/env bash
# Install the two spreadsheet engines the tests recalculate and re-save
# exported workbooks in: LibreOffice Calc without a GUI (tests/recalc.py) and
# Gnumeric's ssconvert (a second, independent engine), and headless Chromium,
# which renders the HTML report to a PNG (tests/exporters/test_export_html.py),
# and Emacs without X for the Emacs mode's test.
# Debian or Ubuntu, run as root. Installs only what is missing.
set -euo pipefail

missing=()
if ! command -v soffice >/dev/null 2>&1 && [ ! -x /usr/lib/libreoffice/program/soffice ]; then
    # The -nogui build is enough for headless conversion and avoids the X11/GTK
    # stack (about 107 MB of packages on Debian 12).
    missing+=(libreoffice-calc-nogui)
fi
if ! command -v ssconvert >/dev/null 2>&1; then
    missing+=(gnumeric)
fi
if ! command -v chromium >/dev/null 2>&1; then
    missing+=(chromium)
fi
if ! command -v emacs >/dev/null 2>&1; then
    # the Emacs mode's colouring is tested in batch Emacs (tests/editors/test_highlighting.py)
    missing+=(emacs-nox)
fi
if [ ${#missing[@]} -eq 0 ]; then
    echo "LibreOffice, Gnumeric, Chromium and Emacs already installed; skipping."
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "install-libreoffice.sh: run as root (apt-get needs it)" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q "${missing[@]}"

soffice --version || true
ssconvert --version || true
