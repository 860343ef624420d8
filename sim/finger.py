"""Finger: the public face of the model — kinematics, dynamics and forward simulation in one object.

    from uartlab.sim import Finger, FingerParams, Sigmoid
    finger = Finger(FingerParams.uart())
    x0 = finger.initial_state(theta_deg=[0, 30, 45, 30], tensions_N=1.0)
    result = finger.simulate(x0, [Sigmoid("FDP", 0.015)])
    print(result.steady_state())
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from uartlab.sim.bondgraph import W_FORCE, contact_into, make_work, moment_arms_into, rhs
from uartlab.sim.compiled import compile_model, no_surface, view
from uartlab.sim.dynamics import gravity_torques, inverse_dynamics, joint_inertias, mass_matrix, potential_energy
from uartlab.sim.errors import SimulationDiverged
from uartlab.sim.inputs import Sigmoid, excursions_at, inputs_end_s, sigmoid_inputs
from uartlab.sim.integrators import (
    DEFAULT_DT_S,
    DIVERGED,
    SETTLED,
    STEADY_HOLD_S,
    STEADY_SPEED_RAD_S,
    Stepper,
    default_atol,
    dopri5_run,
    rk4_run,
)
from uartlab.sim.kinematics import forward_frames, frames_into, jacobian_at, point_on_link
from uartlab.sim.names import JOINTS, TENDONS
from uartlab.sim.params import FingerParams
from uartlab.sim.state import N_AUX, N_STATES, FingerState, balanced_em_forces
from uartlab.sim.surface import PlaneSurface

FINGERTIP_LINK = 4  # the distal D-H frame; its origin is the fingertip end of a4


@dataclass
class SimResult:
    """A simulated trial: sampled states, contact history and how the run ended."""

    t: np.ndarray                 # (n,) s
    x: np.ndarray                 # (n, 35) states
    aux: np.ndarray               # (n, 4) contact flag and stick point
    finger: Finger = field(repr=False)
    surface: PlaneSurface | None
    inputs: np.ndarray = field(repr=False)  # compiled input array (inputs.py)
    settled: bool
    method: str
    wall_s: float

    @property
    def states(self) -> FingerState:
        return FingerState(self.x)

    @property
    def final(self) -> FingerState:
        return FingerState(self.x[-1])

    @property
    def theta_deg(self) -> np.ndarray:
        return np.degrees(self.x[:, 8:12])

    @property
    def tensions_N(self) -> np.ndarray:
        return self.x[:, 12:18]

    @property
    def excursions_m(self) -> np.ndarray:
        return excursions_at(self.inputs, self.t)

    def fingertip_force_N(self) -> np.ndarray:
        """(n, 3) contact force on the fingertip in the world frame (zeros without a surface)."""
        return self.finger.contact_forces(self.x, self.aux, self.surface)

    def steady_state(self) -> dict:
        """The paper's outputs at the end of the run: joint angles, tendon tensions, fingertip force."""
        final = self.final
        force = self.fingertip_force_N()[-1]
        return {
            "settled": bool(self.settled),
            "t_end_s": float(self.t[-1]),
            "joint_angles_deg": {j: float(v) for j, v in zip(JOINTS, final.theta_deg, strict=True)},
            "tendon_tensions_N": {t: float(v) for t, v in zip(TENDONS, final.F_input, strict=True)},
            "fingertip_force_N": {"X": float(force[0]), "Y": float(force[1]), "Z": float(force[2]),
                                  "magnitude": float(np.linalg.norm(force))},
            "fingertip_position_mm": (1e3 * self.finger.fingertip(final.theta)).round(3).tolist(),
        }


class Finger:
    """The UART finger model for one parameter set."""

    def __init__(self, params: FingerParams | None = None):
        self.params = params if params is not None else FingerParams.uart()
        self.P = compile_model(self.params)  # the flat array the kernels read

    # ------------------------------------------------------------ kinematics
    def frames(self, q) -> tuple[np.ndarray, np.ndarray]:
        """World rotations (5, 3, 3) and origins (5, 3) of the base and the four joint frames."""
        return forward_frames(self.P, q)

    def fingertip(self, q) -> np.ndarray:
        """World position (m) of the fingertip end of the distal phalanx."""
        return point_on_link(self.P, q, FINGERTIP_LINK, np.zeros(3))

    def interaction_point(self, q) -> np.ndarray:
        """World position (m) of the pad centre, where the contact model acts (the paper's IP)."""
        return point_on_link(self.P, q, FINGERTIP_LINK, view(self.P).interaction_point)

    def joint_positions(self, q) -> np.ndarray:
        """(4, 3) world positions (m) of the MCP, PIP, DIP and the fingertip: the bones as a polyline."""
        return self.frames(q)[1][1:]

    def jacobian(self, q, point: str = "fingertip") -> np.ndarray:
        """6 x 4 geometric Jacobian [v; w] at the fingertip or the ``"interaction"`` point."""
        local = np.zeros(3) if point == "fingertip" else view(self.P).interaction_point
        if point not in ("fingertip", "interaction"):
            raise ValueError(f"point must be 'fingertip' or 'interaction', got {point!r}")
        return jacobian_at(self.P, q, FINGERTIP_LINK, local)

    def moment_arms(self, q) -> np.ndarray:
        """(17, 4) moment arms (m) of every tendon segment (names.SEGMENTS) at every joint, pose q."""
        arms = np.zeros((17, 4))
        moment_arms_into(self.P, np.ascontiguousarray(q, dtype=float), arms)
        return arms

    # ------------------------------------------------------------ dynamics
    def gravity_torques(self, q) -> np.ndarray:
        """Torque (N·m) gravity applies at each joint, by recursive Newton-Euler."""
        return gravity_torques(self.P, q)

    def inverse_dynamics(self, q, qd, qdd, gravity: bool = True) -> np.ndarray:
        return inverse_dynamics(self.P, q, qd, qdd, gravity)

    def mass_matrix(self, q) -> np.ndarray:
        return mass_matrix(self.P, q)

    def joint_inertias(self, q) -> np.ndarray:
        return joint_inertias(self.P, q)

    def potential_energy(self, q) -> float:
        return potential_energy(self.P, q)

    # ------------------------------------------------------------ states
    def initial_state(self, theta_deg, tensions_N=0.0) -> FingerState:
        """Velocities zero, joint angles given, input tensions given, EM balanced at the junctions."""
        theta = np.radians(np.asarray(theta_deg, dtype=float))
        if theta.shape != (4,):
            raise ValueError(f"theta_deg needs four angles ({', '.join(JOINTS)}), got {theta.shape}")
        rom = self.params.rom_rad
        for j, name in enumerate(JOINTS):
            if not rom[j, 0] - 1e-12 <= theta[j] <= rom[j, 1] + 1e-12:
                raise ValueError(f"initial {name} angle {np.degrees(theta[j]):.1f} deg is outside its ROM "
                                 f"[{np.degrees(rom[j, 0]):.0f}, {np.degrees(rom[j, 1]):.0f}] deg")
        F = np.broadcast_to(np.asarray(tensions_N, dtype=float), (6,)).copy()
        if np.any(F < 0):
            raise ValueError(f"tendon tensions must be >= 0 N, got {F.tolist()}")
        x = FingerState()
        x.theta = theta
        x.F_input = F
        x.F_em = balanced_em_forces(F)
        x.tau_K = self.params.joint_stiffness_Nm_per_rad * 0.0  # springs relaxed at the start pose
        return x

    def rhs(self, x, rates_m_per_s, surface: PlaneSurface | None = None, aux=None, inertia=None):
        """dx/dt at state x for input excursion velocities (6,) — the exact function the solvers use."""
        x = np.ascontiguousarray(x.array if isinstance(x, FingerState) else x, dtype=float)
        inertia = self.joint_inertias(x[8:12]) if inertia is None else inertia
        aux = np.zeros(N_AUX) if aux is None else np.asarray(aux, dtype=float)
        return rhs(self.P, self._surface(surface), np.ascontiguousarray(inertia, dtype=float), x, aux,
                   np.ascontiguousarray(rates_m_per_s, dtype=float))

    def contact_forces(self, x: np.ndarray, aux: np.ndarray, surface: PlaneSurface | None) -> np.ndarray:
        x = np.atleast_2d(x)
        out = np.zeros((x.shape[0], 3))
        if surface is None:
            return out
        S = surface.compiled()
        w = make_work()
        aux = np.atleast_2d(aux)
        for k in range(x.shape[0]):
            frames_into(self.P, np.ascontiguousarray(x[k, 8:12]), w.R, w.o)
            contact_into(self.P, S, np.ascontiguousarray(aux[k]), w.R, w.o, w.scratch)
            out[k] = w.scratch[W_FORCE:W_FORCE + 3]
        return out

    def stepper(self, x0: FingerState, surface: PlaneSurface | None = None, method: str = "rk4",
                max_substep_s: float = DEFAULT_DT_S) -> Stepper:
        """An incremental integrator starting at x0 (for running the model live)."""
        x = x0.array.copy()
        return Stepper(self.P, self._surface(surface), self.joint_inertias(x[8:12]), x,
                       method=method, max_substep_s=max_substep_s)

    # ------------------------------------------------------------ simulation
    def simulate(
        self,
        x0: FingerState,
        inputs: np.ndarray | list[Sigmoid] | tuple[Sigmoid, ...],
        surface: PlaneSurface | None = None,
        *,
        method: str = "rk4",
        dt: float = DEFAULT_DT_S,
        t_max: float | None = None,
        settle_timeout_s: float = 20.0,
        stop_at_steady: bool = True,
        record_dt: float = 0.01,
        rtol: float = 1e-6,
        inertia: np.ndarray | None = None,
        stick_point_m: np.ndarray | None = None,
    ) -> SimResult:
        """Run from x0 with the given tendon excursions until the paper's steady state (or t_max).

        ``method`` "rk4" (fixed step ``dt``, the paper's) or "dopri5" (adaptive, ``rtol``).
        The joint inertias default to the diagonal of M(q) at the start pose (see dynamics.py).
        ``stick_point_m``: where the pad sticks to the surface at the start (world, m), so the shear springs
        start loaded (a measured start's shear force); default: placed under the pad at first touch, unloaded.
        """
        inp = inputs if isinstance(inputs, np.ndarray) else sigmoid_inputs(list(inputs))
        end = inputs_end_s(inp)
        t_stop = t_max if t_max is not None else end + settle_timeout_s
        settle_from = end if stop_at_steady else np.inf
        if dt <= 0 or record_dt <= 0:
            raise ValueError("dt and record_dt must be > 0")
        x = np.ascontiguousarray(x0.array if isinstance(x0, FingerState) else x0, dtype=float).copy()
        aux = np.zeros(N_AUX)
        if stick_point_m is not None:
            aux[0], aux[1:] = 1.0, np.asarray(stick_point_m, dtype=float)
        inertia = self.joint_inertias(x[8:12]) if inertia is None else np.asarray(inertia, dtype=float)
        surf = self._surface(surface)
        start = time.perf_counter()
        if method == "rk4":
            every = max(1, int(round(record_dt / dt)))
            cap = int(np.ceil(t_stop / (dt * every))) + 3
            T, X, A = np.empty(cap), np.empty((cap, N_STATES)), np.empty((cap, N_AUX))
            n, t_end, status = rk4_run(self.P, surf, inertia, x, aux, inp, 0.0, dt, settle_from, t_stop,
                                    STEADY_SPEED_RAD_S, STEADY_HOLD_S, every, T, X, A)
        elif method == "dopri5":
            cap = int(np.ceil(t_stop / record_dt)) + 3
            T, X, A = np.empty(cap), np.empty((cap, N_STATES)), np.empty((cap, N_AUX))
            n, t_end, status, _ = dopri5_run(self.P, surf, inertia, x, aux, inp, 0.0, 1e-5, 2e-3, rtol,
                                          default_atol(), settle_from, t_stop, STEADY_SPEED_RAD_S,
                                          STEADY_HOLD_S, record_dt, T, X, A)
        else:
            raise ValueError(f"unknown integrator {method!r}; use 'rk4' or 'dopri5'")
        wall = time.perf_counter() - start
        if status == DIVERGED:
            # No option name here: the model does not know which command (if any) chose the step.
            why = (f" with dt = {dt * 1e3:g} ms; try a smaller dt (<= {DEFAULT_DT_S:g} s)"
                   if method == "rk4" and dt > DEFAULT_DT_S else "; the parameters may make the model unstable")
            raise SimulationDiverged(f"the {method} integration diverged at t = {t_end:.3f} s{why}",
                                     t_s=t_end, dt_s=dt if method == "rk4" else None, method=method)
        return SimResult(T[:n].copy(), X[:n].copy(), A[:n].copy(), self, surface, inp, status == SETTLED,
                         method, wall)

    @staticmethod
    def _surface(surface: PlaneSurface | None) -> np.ndarray:
        return surface.compiled() if surface is not None else no_surface()
