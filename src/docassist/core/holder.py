"""This process's name on the claims and leases it takes: inbox claims, sync leases and the
retention schedule's lease all name their holder the same way."""

from __future__ import annotations

import os
import socket
import uuid
from typing import Final

PROCESS_HOLDER: Final = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
"""Unique per start: a restarted process does not take over its predecessor's claims."""
