"""uartlab.protocols — experiment protocols as data: suites, trajectories, steps, limits, interlocks, the runner."""
