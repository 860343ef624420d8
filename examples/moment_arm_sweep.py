"""Script the model: how does the FDP moment arm at the MCP change the steady-state free-motion pose?

    python examples/moment_arm_sweep.py [--out sweep.png]

Scales the FDP's MCP-FE moment arm from 0.8x to 1.2x of the default, runs the paper's FDP free-motion
trial for each, and prints (and optionally plots) the steady joint angles.
"""

from __future__ import annotations

import argparse

import numpy as np
from uartlab.sim import Finger, FingerParams, free_motion
from uartlab.sim.names import JOINTS, MOMENT_ARM_GROUPS


def sweep(scales) -> np.ndarray:
    base = FingerParams.uart()
    g, j = MOMENT_ARM_GROUPS.index("FDP"), JOINTS.index("MCP_FE")
    angles = []
    for s in scales:
        arms = base.moment_arm_coeffs.copy()
        arms[g, j] *= s
        result = free_motion(Finger(base.replace(moment_arm_coeffs=arms)), "FDP")
        angles.append(result.final.theta_deg)
    return np.array(angles)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="save a PNG of the sweep")
    args = parser.parse_args()
    scales = np.linspace(0.8, 1.2, 5)
    angles = sweep(scales)
    print("FDP MCP-FE moment arm scale -> steady joint angles [deg]")
    for s, a in zip(scales, angles, strict=True):
        print(f"  {s:4.2f}  " + "  ".join(f"{name} {v:6.2f}" for name, v in zip(JOINTS, a, strict=True)))
    if args.out:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 4), constrained_layout=True)
        for k, name in enumerate(JOINTS):
            ax.plot(scales, angles[:, k], "o-", label=name)
        ax.set(xlabel="FDP moment arm at MCP-FE (x default)", ylabel="steady angle [deg]",
               title="free motion, FDP pulled 15 mm")
        ax.legend()
        fig.savefig(args.out, dpi=110)
        print(f"plot written to {args.out}")


if __name__ == "__main__":
    main()
