"""uartlab.sim — the bond-graph forward-dynamics model of the UART finger (Tigue & Mascaro).

Pure numerics: parameters, kinematics, moment arms, contact, the bond-graph right-hand side,
integrators, rigid-body dynamics, inverse kinematics and the paper's scenarios. No I/O beyond
parameter files, no threads, no Qt.

The names below load on first use (PEP 562): ``from uartlab.sim.names import TENDONS`` or
``import uartlab.sim`` costs no numba import and no kernel compilation; ``uartlab.sim.Finger`` does.
"""

from __future__ import annotations

import importlib

from uartlab.sim.errors import ParameterError

# Each public name and the submodule that defines it.
_LAZY: dict[str, str] = {
    "EM_SEGMENTS": "names", "JOINTS": "names", "POSES": "names", "SEGMENTS": "names", "TENDONS": "names",
    "Finger": "finger", "SimResult": "finger",
    "IKResult": "ik", "Marker": "ik", "default_markers": "ik", "solve_ik": "ik", "solve_ik_trajectory": "ik",
    "Sigmoid": "inputs", "sigmoid_inputs": "inputs", "table_inputs": "inputs",
    "FingerParams": "params",
    "Trial": "scenarios", "contact": "scenarios", "contact_trial": "scenarios", "free_motion": "scenarios",
    "free_motion_trial": "scenarios", "paper_trials": "scenarios", "run_trial": "scenarios",
    "FingerState": "state",
    "PlaneSurface": "surface",
}

__all__ = ["ParameterError", *_LAZY]


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # once loaded, a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))

