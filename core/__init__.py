"""uartlab: control, data acquisition and bond-graph modelling for the UART robotic finger.

The package root holds only what every layer shares: the version, the error classes
(`uartlab.errors`), the paper's joint, tendon and pose names (`uartlab.names`) and the declaration of every
recorded stream (`uartlab.schema`). It imports none of the layers (pyproject's import contracts). Importing it costs
nothing; the model, drivers and window load on first use.
"""

from uartlab._version import __version__

__all__ = ["__version__"]
