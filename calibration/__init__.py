"""uartlab.calibration — sensor calibration and parameter identification (later issues)."""
