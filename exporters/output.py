"""Writing an export without ever leaving half a file, or writing through a trap.

Exports are written as every file ifr writes is: see `ifr.storage.safe_write`.
"""
from __future__ import annotations

from ifr.storage.safe_write import Terminated, atomic_output, write_failed

__all__ = ["Terminated", "atomic_output", "write_failed"]
