"""uartlab.drivers — device interfaces (interfaces.py), the real drivers, and their simulated twins (twins/)."""
