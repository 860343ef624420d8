"""Offline sim-vs-experiment analysis: `uartlab compare` (the paper's Results section).

  measured.py   trials out of session files: signals relative to actuation start, initial and steady values,
                the Nano17 wrench turned into the fingertip force in the model's world frame
  resim.py      the paper's initial state from measurements, re-simulation with the recorded excursions
  metrics.py    the formulas of Tables 4-6 (joint-angle error and SD, force error, footnotes b and c)
  analysis.py   trials grouped by name across sessions and repeats, one or two parameter sets, every table
  tables.py     every table as rows (the paper's column order), the transient curves
  figures.py    Figs. 13-16 of the paper as PNGs
  report.py     CSV of every table, the HTML report, the text summary
  sessions.py   what a comparison compares: the sessions' settled trials, the parameter sets, the JSON summary
  synthetic.py  session files written from the model (known parameters: ground truth for tests and demos)

The command itself is app/cli/compare.py.

The package itself loads nothing (PEP 562): ``CompareError`` comes from measured.py (h5py) on first use.
"""

from __future__ import annotations

__all__ = ["CompareError"]


def __getattr__(name: str):
    if name == "CompareError":
        from uartlab.app.compare.measured import CompareError

        return CompareError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
