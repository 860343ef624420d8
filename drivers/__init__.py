"""uartlab.drivers — device interfaces, real backends and their simulated twins (later issues)."""
