#!/usr/bin/env bash
# Install LibreOffice Calc without a GUI, the engine the tests recalculate
# exported workbooks in (tests/recalc.py). Debian or Ubuntu, run as root.
# Does nothing when soffice is already installed.
set -euo pipefail

if command -v soffice >/dev/null 2>&1 || [ -x /usr/lib/libreoffice/program/soffice ]; then
    echo "LibreOffice already installed; skipping."
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "install-libreoffice.sh: run as root (apt-get needs it)" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# The -nogui build is enough for headless conversion and avoids the X11/GTK
# stack (about 107 MB of packages on Debian 12).
apt-get install -y -q libreoffice-calc-nogui

soffice --version
