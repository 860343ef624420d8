"""uartlab.sim — the bond-graph forward-dynamics model of the UART finger (Tigue & Mascaro).

Pure numerics: parameters, kinematics, moment arms, contact, the bond-graph right-hand side,
integrators, rigid-body dynamics, inverse kinematics and the paper's scenarios. No I/O beyond
parameter files, no threads, no Qt.
"""

from .errors import ParameterError
from .finger import Finger, SimResult
from .ik import IKResult, Marker, default_markers, solve_ik, solve_ik_trajectory
from .inputs import Sigmoid, sigmoid_inputs, table_inputs
from .names import EM_SEGMENTS, JOINTS, POSES, SEGMENTS, TENDONS
from .params import FingerParams
from .scenarios import Trial, contact, contact_trial, free_motion, free_motion_trial, paper_trials, run_trial
from .state import FingerState
from .surface import PlaneSurface

__all__ = [
    "EM_SEGMENTS", "JOINTS", "POSES", "SEGMENTS", "TENDONS",
    "Finger", "FingerParams", "FingerState", "IKResult", "Marker", "ParameterError", "PlaneSurface", "Sigmoid",
    "SimResult", "default_markers", "solve_ik", "solve_ik_trajectory",
    "Trial", "contact", "contact_trial", "free_motion", "free_motion_trial", "paper_trials", "run_trial",
    "sigmoid_inputs", "table_inputs",
]
