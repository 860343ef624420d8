"""uartlab.protocols — experiment protocols as data and the runner (later issues)."""
