"""`python -m okstra_tui` opens the terminal app."""

from __future__ import annotations

import sys

from .entry import main

sys.exit(main())
