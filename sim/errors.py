"""Errors raised by the model package, each naming what is wrong and where."""

from __future__ import annotations

from uartlab.errors import ConfigError


class ParameterError(ConfigError):
    """A model parameter is missing, malformed or physically impossible.

    The message names the file (and line, when known) and the dotted key, e.g.
    ``params.toml:42: tendons.input_stiffness_N_per_mm: must be > 0, got -0.3``.
    """

    def __init__(self, key: str, reason: str, source: str | None = None, line: int | None = None):
        self.key, self.reason, self.source, self.line = key, reason, source, line
        where = ""
        if source:
            where = f"{source}:{line}: " if line else f"{source}: "
        super().__init__(f"{where}{key}: {reason}" if key else f"{where}{reason}")  # key "": the whole file


class SimulationDiverged(ConfigError):
    """The integration blew up (a state became non-finite or physically absurd): the step is too large for
    the model. ``t_s`` is when it was noticed, ``dt_s`` the fixed step (None for the adaptive method)."""

    def __init__(self, message: str, t_s: float | None = None, dt_s: float | None = None,
                 method: str | None = None):
        self.t_s, self.dt_s, self.method = t_s, dt_s, method
        super().__init__(message)
