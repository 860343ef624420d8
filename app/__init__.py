"""uartlab.app — the application: CLI, benchmarks and (later) rig, recorder, replay and GUI."""
