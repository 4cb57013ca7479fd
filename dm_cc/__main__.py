"""``python -m dm_cc``."""

import sys

from dm_cc.cli import main

sys.exit(main())
