"""`python -m uartlab.app.cli`: the `uartlab` command, for when the console script is not on PATH."""

import sys

from uartlab.app.cli.main import main

sys.exit(main())
