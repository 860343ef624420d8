"""The free-motion table of docs/model.md: the cadaver data beside real runs of the model.

    .venv/bin/python docs/make_model_table.py                        # the shipped defaults
    .venv/bin/python docs/make_model_table.py --old old_uart.toml     # a column for another parameter file first
"""

from __future__ import annotations

import argparse

from uartlab.sim import Finger, FingerParams
from uartlab.sim.cadaver import free_motion_table, markdown_table


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", help="a parameter file to run first, as the 'old defaults' column")
    args = ap.parse_args()
    columns = {}
    if args.old:
        columns["old defaults"] = free_motion_table(Finger(FingerParams.from_toml(args.old)))
    columns["defaults"] = free_motion_table(Finger(FingerParams.uart()))
    print(markdown_table(columns))


if __name__ == "__main__":
    main()
