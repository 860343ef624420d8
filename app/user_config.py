"""The operator's own uartlab folder: what the window remembers, and the log of a rig core started for a
client (the window, `uartlab run`), which has no terminal of its own to write to.

``$UARTLAB_CONFIG_DIR`` when it is set (tests set it for their whole session), else the user's configuration
folder (``platformdirs.user_config_dir("uartlab")``: ``~/.config/uartlab`` on Linux).
"""

from __future__ import annotations

import os
from pathlib import Path

CONFIG_DIR_ENV = "UARTLAB_CONFIG_DIR"


def config_dir() -> Path:
    given = os.environ.get(CONFIG_DIR_ENV)
    if given:
        return Path(given)
    import platformdirs

    return Path(platformdirs.user_config_dir("uartlab", appauthor=False))
