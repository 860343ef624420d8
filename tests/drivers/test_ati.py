"""drivers/ati.py against ATI's own DAQ F/T C library, on a real ATI calibration file (FT18766.cal).

Provenance of the reference numbers:

* ``ATIIAFTT_*``: the expected output published in the tests of the PyPI package atiiaftt 0.1.1
  (github shayden--/atiiaftt, atiiaftt/test/test_ft_iface.py, commit 09f35acd2aff462c57a71b190bfc528d9ab2f051),
  which wraps ATI's C library; they are also the hard-coded sample of ATI's Samples/ftconvert.c.
* ``C_REF``, ``C_TEMP_COMP``, ``C_INDEX2``: ATI DAQ F/T C Library v1.0.6 (so says its readme.txt; ftconfig.c's
  header still says v1.0.2), the ATIDAQ_c_lib copy in that same atiiaftt commit (ftconfig.c, ftrt.c, dom.c,
  expatls.c, node.c, stack.c, xmlparse.c, xmlrole.c, xmltok.c),
  compiled in /tmp with gcc 12.2.0 -O0 and linked to a 30-line runner that calls createCalibration(file, index),
  SetForceUnits, SetTorqueUnits, SetToolTransform, SetTempComp, Bias(BIAS), ConvertToFT(r) for r in READINGS,
  and prints cal->rt.working_matrix and the results with printf("%.9e") (kept here to 9 digits, %.8e). The
  inputs are the constants below; the files are FT18766.cal byte for byte, or the variants
  ``_temp_comp_file`` and ``_two_calibrations_file`` make from it. No ATI code is in this repository, only
  these numbers.

The C library computes in float32 and drivers/ati.py in float64, so they agree to float32 precision:
the comparisons allow 2e-6 of each row's (or result's) magnitude, not of each element.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest
from conftest import FT18766, FT18766_LINES, FT18766_SHA256
from uartlab.drivers.ati import FTCalibration
from uartlab.errors import CalibrationError

SHARED_FIXTURE = Path("/work/shared/fixtures/ati/FT18766.cal")  # the team's copy, when present

# ATI's sample bias and reading (ftconvert.c; 7 channels, the 7th is the thermistor) and more readings.
BIAS = [0.2651, -0.0177, -0.0384, -0.0427, -0.1891, 0.1373, -3.2423]
READINGS = [
    [-3.2863, 0.3875, -3.4877, 0.4043, -3.9341, 0.5474, -3.2106],
    [1.2345, -0.5432, 2.1, -1.75, 0.333, 4.2, -3.0],
    [-0.05, 0.06, -0.07, 0.08, -0.09, 0.1, -3.2],
    [7.5, -6.25, 5.0, -3.75, 2.5, -1.25, -2.9],
]
# name: (force units, torque units, tool transform, dist units, angle units); every unit of the C tables.
CASES = {
    "file_units": ("N", "N-m", [0, 0, 0, 0, 0, 0], "m", "degrees"),
    "atiiaftt_N": ("N", "N-m", [0, 0, 20, 45, 0, 0], "mm", "degrees"),
    "atiiaftt_kN": ("kN", "N-m", [0, 0, 20, 45, 0, 0], "mm", "degrees"),
    "lb_inlb_mm_deg": ("lb", "in-lb", [10, -5, 30, 15, -20, 30], "mm", "deg"),
    "g_kgcm_in_rad": ("g", "kg-cm", [0.5, 0.25, -1.0, 0.1, 0.2, -0.3], "in", "rad"),
    "klb_ftlb_m_degree": ("klb", "ft-lb", [0.01, 0.02, -0.005, 5, 10, -15], "m", "degree"),
    "kg_kNm_ft_radians": ("kg", "kN-m", [0.1, 0, 0.05, 0, 1.2, 0], "ft", "radians"),
    "N_Nmm_cm_degrees": ("N", "N-mm", [1.5, -2.5, 0.5, 30, 0, -60], "cm", "degrees"),
}


def _temp_comp_file() -> str:
    """FT18766 with software temperature compensation data added (values made up for the test)."""
    extra = ('\t\t<BiasSlope values=" 0.01200 -0.00800  0.02100 -0.01500  0.00600 -0.01900 "/>\r\n'
             '\t\t<GainSlope values=" 0.03100 -0.02400  0.01800 -0.02700  0.02200 -0.01300 "/>\r\n'
             '\t\t<Thermistor value="-3.9"/>\r\n')
    marker = "\t\t<UserAxis Name=\"Fx\""
    return FT18766.replace('HWTempComp="True"', 'HWTempComp="False"').replace(marker, extra + marker, 1)


def _two_calibrations_file() -> str:
    """FT18766 with a second <Calibration> in other units and with another BasicTransform."""
    start, end = FT18766.index("\t<Calibration"), FT18766.index("</Calibration>") + len("</Calibration>")
    second = (FT18766[start:end].replace('ForceUnits="N" TorqueUnits="N-m" DistUnits="m"',
                                         'ForceUnits="lb" TorqueUnits="in-lb" DistUnits="in" AngleUnits="radians"')
              .replace('Dz="0.0191262" Rx="0" Ry="0" Rz="0"', 'Dz="0.753" Rx="0" Ry="0" Rz="0.5"'))
    return FT18766[:end] + "\r\n" + second + FT18766[end:]


def _write(tmp_path: Path, text: str, name: str = "cal.cal") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return path
C_REF = {  # name: (working matrix, [ConvertToFT(r) for r in READINGS])
    "file_units": (
        [
            [-1.81382906e+00, 3.38172197e-01, -2.91168928e+00, -7.19360123e+01, 4.41448498e+00, 6.77394791e+01],
            [2.18676791e-01, 8.06422577e+01, -4.01342392e+00, -4.12412720e+01, -7.72835970e-01, -3.95726318e+01],
            [1.20123016e+02, -4.79486752e+00, 1.20642822e+02, -2.51572156e+00, 1.20421967e+02, -4.53709412e+00],
            [-4.77270410e-03, 1.54284751e+00, -4.28155804e+00, -6.96819246e-01, 4.18740129e+00, -9.16734099e-01],
            [4.75241423e+00, -1.88190877e-01, -2.31436467e+00, 1.42902553e+00, -2.50108218e+00, -1.20479166e+00],
            [-7.30642537e-03, -2.59994698e+00, -1.81326345e-01, -2.70521426e+00, -1.25869721e-01, -2.55018711e+00],
        ],
        [
            [-4.28573036e+00, 1.39738197e+01, -1.29864648e+03, -9.58758235e-01, 5.40201426e-01, -2.18578196e+00],
            [3.92163940e+02, -1.41511826e+02, 4.25684143e+02, -1.03195696e+01, -8.88344955e+00, -4.83630753e+00],
            [-1.02259331e+01, 2.66298938e+00, -3.02412701e+01, 6.20346248e-01, -1.46655130e+00, -4.43265200e-01],
            [1.54683655e+02, -3.15511261e+02, 1.84625549e+03, -1.61067772e+01, 1.35433330e+01, 2.84656315e+01],
        ],
    ),
    "atiiaftt_N": (
        [
            [-1.81382906e+00, 3.38172197e-01, -2.91168928e+00, -7.19360123e+01, 4.41448498e+00, 6.77394791e+01],
            [8.50944214e+01, 5.36322021e+01, 8.24694367e+01, -3.09408665e+01, 8.46047058e+01, -3.11902866e+01],
            [8.47851715e+01, -6.04131699e+01, 8.81452789e+01, 2.73831005e+01, 8.56976624e+01, 2.47738666e+01],
            [-3.99168581e-04, 3.15569258e+00, -4.36182642e+00, -1.52164459e+00, 4.17194462e+00, -1.70818675e+00],
            [3.38094926e+00, -1.97629356e+00, -1.72354257e+00, 1.14927173e-01, -1.91996574e+00, -3.61315179e+00],
            [-3.39128232e+00, -1.70058656e+00, 1.46710837e+00, -3.94067764e+00, 1.74195909e+00, 6.64258003e-03],
        ],
        [
            [-4.28573036e+00, -9.08400635e+02, -9.28162720e+02, -6.79282367e-01, -1.10299170e+00, -1.98817015e+00],
            [3.92163940e+02, 2.00940155e+02, 4.01068085e+02, -1.31498060e+01, -1.52473688e+01, 8.40779591e+00],
            [-1.02259331e+01, -1.95007839e+01, -2.32668209e+01, 6.73606038e-01, -1.20582783e+00, 5.78956187e-01],
            [1.54683655e+02, 1.08239966e+03, 1.52859985e+03, -2.24169979e+01, 2.75172634e+01, 1.27392159e+01],
        ],
    ),
    "atiiaftt_kN": (
        [
            [-1.81382895e-03, 3.38172162e-04, -2.91168899e-03, -7.19360039e-02, 4.41448484e-03, 6.77394718e-02],
            [8.50944147e-02, 5.36321998e-02, 8.24694335e-02, -3.09408642e-02, 8.46047029e-02, -3.11902836e-02],
            [8.47851634e-02, -6.04131669e-02, 8.81452709e-02, 2.73830984e-02, 8.56976584e-02, 2.47738641e-02],
            [-3.99168581e-04, 3.15569258e+00, -4.36182642e+00, -1.52164459e+00, 4.17194462e+00, -1.70818675e+00],
            [3.38094926e+00, -1.97629356e+00, -1.72354257e+00, 1.14927173e-01, -1.91996574e+00, -3.61315179e+00],
            [-3.39128232e+00, -1.70058656e+00, 1.46710837e+00, -3.94067764e+00, 1.74195909e+00, 6.64258003e-03],
        ],
        [
            [-4.28573787e-03, -9.08400655e-01, -9.28162634e-01, -6.79282367e-01, -1.10299170e+00, -1.98817015e+00],
            [3.92163873e-01, 2.00940102e-01, 4.01068032e-01, -1.31498060e+01, -1.52473688e+01, 8.40779591e+00],
            [-1.02259312e-02, -1.95007846e-02, -2.32668221e-02, 6.73606038e-01, -1.20582783e+00, 5.78956187e-01],
            [1.54683649e-01, 1.08239949e+00, 1.52859974e+00, -2.24169979e+01, 2.75172634e+01, 1.27392159e+01],
        ],
    ),
    "lb_inlb_mm_deg": (
        [
            [1.09090042e+01, 6.97984743e+00, 1.03701458e+01, -1.71626015e+01, 1.19858284e+01, 8.35448265e+00],
            [1.82710695e+00, 1.58684187e+01, 1.11197555e+00, -6.01098418e-01, 9.76873815e-01, -1.50508061e+01],
            [2.46389809e+01, -5.41359425e+00, 2.50608540e+01, 7.27266264e+00, 2.42753029e+01, -3.97057366e+00],
            [2.59427719e+01, 1.49461107e+01, -3.14971008e+01, -8.32133579e+00, 2.86749935e+01, -3.62897186e+01],
            [4.43307190e+01, -2.00751286e+01, 7.77495623e+00, 3.48535614e+01, -3.10360241e+01, -1.80452518e+01],
            [-1.47598667e+01, -3.87700768e+01, 1.26788979e+01, -1.73045979e+01, -1.24780302e+01, -6.52594566e+00],
        ],
        [
            [-1.20816185e+02, -1.39938602e+01, -2.65427307e+02, -1.03423943e+02, -6.79796295e+01, 2.92940102e+01],
            [9.85840607e+01, -6.38004341e+01, 6.44462662e+01, -1.68314651e+02, -7.88721848e+01, 2.96944161e+01],
            [-4.45246744e+00, 1.20656466e+00, -5.53016138e+00, -2.84367728e+00, -1.39001865e+01, -1.87868285e+00],
            [1.71941818e+02, -5.43398819e+01, 3.82091431e+02, 9.41540604e+01, 2.97378479e+02, 2.38374054e+02],
        ],
    ),
    "g_kgcm_in_rad": (
        [
            [-2.85391772e+03, -2.12312671e+03, -2.85159131e+03, -5.65520410e+03, -2.23810962e+03, 7.67856201e+03],
            [4.20449188e+02, 7.85681397e+03, -2.27653008e+01, -6.15622510e+03, 5.08822266e+02, -1.87592956e+03],
            [1.19060684e+04, -1.27453723e+03, 1.19777422e+04, -1.29601331e+03, 1.20718662e+04, 1.31596790e+03],
            [-2.48149071e+01, 4.20387745e+00, -4.44861412e+01, 1.05816402e+01, 3.54733009e+01, 3.43530488e+00],
            [5.84872284e+01, -5.11339283e+00, -2.30126686e+01, -4.10595322e+00, 1.74998510e+00, 4.20509625e+00],
            [-7.99874401e+00, -3.67390022e+01, -1.06452122e+01, -2.50626488e+01, 6.95607901e+00, -1.63037186e+01],
        ],
        [
            [2.81139277e+04, -3.65776856e+03, -1.29363258e+05, 1.16568428e+02, -1.37070435e+02, 6.29895639e+00],
            [3.19335781e+04, -6.15013672e+02, 5.16865039e+04, -1.06982681e+02, 3.51821289e+01, -3.10272446e+01],
            [-3.77687622e+02, -1.56262115e+02, -3.24091528e+03, 1.42372150e+01, -1.85866661e+01, -1.77553833e+00],
            [-1.74887363e+04, -1.92450898e+04, 1.89872688e+05, -3.78476044e+02, 3.53164551e+02, 2.51702011e+02],
        ],
    ),
    "klb_ftlb_m_degree": (
        [
            [-5.52130584e-03, -4.13252925e-03, -5.54684643e-03, -1.30212940e-02, -4.14791470e-03, 1.68432258e-02],
            [1.00791536e-03, 1.74926370e-02, 3.03876350e-05, -1.31020155e-02, 1.15209248e-03, -4.75396542e-03],
            [2.64182370e-02, -2.60036252e-03, 2.65716855e-02, -2.56727892e-03, 2.67464425e-02, 2.40731263e-03],
            [-2.74967265e+00, 1.38444960e+00, -4.45351219e+00, 2.57321354e-02, 1.48369896e+00, -1.65337846e-01],
            [3.78207064e+00, -3.36223245e-02, -2.06044054e+00, 5.52848339e-01, -5.74131608e-01, -7.90849268e-01],
            [-7.17896640e-01, -2.28684640e+00, -9.28068221e-01, -2.82259822e+00, 2.87439465e-01, -6.01383686e-01],
        ],
        [
            [5.36874309e-02, -8.71709827e-03, -2.86854863e-01, 2.00749111e+01, -4.26527309e+00, 2.23930454e+00],
            [7.34525174e-02, -4.49368451e-03, 1.11924842e-01, -1.28574619e+01, -5.17865324e+00, 1.04708028e+00],
            [-1.04307698e-03, -2.75498489e-04, -7.12032616e-03, 1.27108359e+00, -1.08879626e+00, -2.17567697e-01],
            [-2.83850879e-02, -4.33077216e-02, 4.19320166e-01, -4.68366966e+01, 1.46947966e+01, 1.64538937e+01],
        ],
    ),
    "kg_kNm_ft_radians": (
        [
            [-1.14836969e+01, 4.68207151e-01, -1.15736666e+01, -2.41895199e+00, -1.12819719e+01, 2.93419957e+00],
            [2.22988259e-02, 8.22322178e+00, -4.09255326e-01, -4.20543909e+00, -7.88073316e-02, -4.03528547e+00],
            [4.26618052e+00, -1.45030916e-01, 4.18104506e+00, -6.92986488e+00, 4.86917496e+00, 6.27041721e+00],
            [1.25003444e-05, 5.71857765e-03, -1.51863124e-03, 8.69515003e-04, 1.60842971e-03, 7.01954181e-04],
            [8.44140630e-03, -3.39492195e-04, 1.40720257e-03, 2.44865124e-03, 1.10210234e-03, -2.37543206e-03],
            [-6.40495273e-06, 7.50681618e-04, -4.06896509e-03, -1.76002446e-03, 3.85476998e-03, -1.90354616e-03],
        ],
        [
            [1.23266998e+02, 1.42493319e+00, -4.83925667e+01, 2.16396479e-03, -3.89772244e-02, -1.64148339e-03],
            [-2.59671326e+01, -1.44301910e+01, 5.30009728e+01, -4.03336808e-03, -1.88517757e-03, -1.18178371e-02],
            [2.49632645e+00, 2.71549404e-01, -2.08930922e+00, 7.28285348e-04, -2.23246193e-03, 4.25980397e-04],
            [-1.69755356e+02, -3.21731911e+01, 8.29208756e+01, -4.30730656e-02, 6.74598068e-02, -5.69429621e-03],
        ],
    ),
    "N_Nmm_cm_degrees": (
        [
            [-5.30857124e+01, -5.82363701e+01, -5.06856499e+01, -3.94771290e+00, -4.93573723e+01, 6.55138321e+01],
            [2.85546226e+01, 3.40132713e+01, 2.59012451e+01, -8.07853317e+01, 3.35938988e+01, 4.03943825e+01],
            [1.03920242e+02, -4.44736061e+01, 1.06486458e+02, 1.84419575e+01, 1.04674904e+02, 1.58570766e+01],
            [-3.43784985e+03, 2.76270508e+03, -2.54225632e+02, -1.67139477e+03, 4.23193359e+03, 2.17518018e+03],
            [5.44824756e+03, 5.13650940e+02, -1.33765369e+03, -1.50366669e+02, 5.86370801e+03, -2.67384131e+03],
            [-3.25156226e+03, -3.17561304e+03, 2.03224533e+02, -1.12506897e+03, 1.63869247e+02, -2.35529346e+03],
        ],
        [
            [5.49707214e+02, -3.22322327e+02, -1.13164783e+03, -1.49813440e+03, -3.76501484e+04, 7.47735498e+03],
            [1.17889206e+02, 3.84768494e+02, 4.39409119e+02, 8.57208008e+03, -5.39368262e+03, -8.61116894e+03],
            [5.98464394e+00, -1.52631264e+01, -2.75211983e+01, 1.43913232e+03, -9.72184692e+02, 7.37446167e+02],
            [-4.85476807e+02, 4.58903442e+02, 1.75665967e+03, -2.88125684e+04, 4.95116406e+04, 5.16969873e+03],
        ],
    ),
}
C_TEMP_COMP = {  # _temp_comp_file(), file units, no tool transform; SetTempComp on / off
    "on": (
        [
            [-1.81382906e+00, 3.38172197e-01, -2.91168928e+00, -7.19360123e+01, 4.41448498e+00, 6.77394791e+01],
            [2.18676791e-01, 8.06422577e+01, -4.01342392e+00, -4.12412720e+01, -7.72835970e-01, -3.95726318e+01],
            [1.20123016e+02, -4.79486752e+00, 1.20642822e+02, -2.51572156e+00, 1.20421967e+02, -4.53709412e+00],
            [-4.77270410e-03, 1.54284751e+00, -4.28155804e+00, -6.96819246e-01, 4.18740129e+00, -9.16734099e-01],
            [4.75241423e+00, -1.88190877e-01, -2.31436467e+00, 1.42902553e+00, -2.50108218e+00, -1.20479166e+00],
            [-7.30642537e-03, -2.59994698e+00, -1.81326345e-01, -2.70521426e+00, -1.25869721e-01, -2.55018711e+00],
        ],
        [
            [-3.95121002e+00, 1.41463375e+01, -1.31989587e+03, -1.01751888e+00, 4.11855876e-01, -2.11829400e+00],
            [3.85839508e+02, -1.40404480e+02, 4.35925507e+02, -1.04100399e+01, -8.73344326e+00, -4.83798456e+00],
            [-1.00409794e+01, 2.66797018e+00, -3.07025871e+01, 6.25162244e-01, -1.50383246e+00, -4.30337548e-01],
            [1.48328552e+02, -3.08588806e+02, 1.89333240e+03, -1.61311455e+01, 1.43874359e+01, 2.77858124e+01],
        ],
    ),
    "off": (
        [
            [-1.81382906e+00, 3.38172197e-01, -2.91168928e+00, -7.19360123e+01, 4.41448498e+00, 6.77394791e+01],
            [2.18676791e-01, 8.06422577e+01, -4.01342392e+00, -4.12412720e+01, -7.72835970e-01, -3.95726318e+01],
            [1.20123016e+02, -4.79486752e+00, 1.20642822e+02, -2.51572156e+00, 1.20421967e+02, -4.53709412e+00],
            [-4.77270410e-03, 1.54284751e+00, -4.28155804e+00, -6.96819246e-01, 4.18740129e+00, -9.16734099e-01],
            [4.75241423e+00, -1.88190877e-01, -2.31436467e+00, 1.42902553e+00, -2.50108218e+00, -1.20479166e+00],
            [-7.30642537e-03, -2.59994698e+00, -1.81326345e-01, -2.70521426e+00, -1.25869721e-01, -2.55018711e+00],
        ],
        [
            [-4.28573036e+00, 1.39738197e+01, -1.29864648e+03, -9.58758235e-01, 5.40201426e-01, -2.18578196e+00],
            [3.92163940e+02, -1.41511826e+02, 4.25684143e+02, -1.03195696e+01, -8.88344955e+00, -4.83630753e+00],
            [-1.02259331e+01, 2.66298938e+00, -3.02412701e+01, 6.20346248e-01, -1.46655130e+00, -4.43265200e-01],
            [1.54683655e+02, -3.15511261e+02, 1.84625549e+03, -1.61067772e+01, 1.35433330e+01, 2.84656315e+01],
        ],
    ),
}
C_INDEX2 = {  # _two_calibrations_file(), createCalibration(file, 2)
    "file_units": (
        [
            [-1.48694551e+00, 3.89587364e+01, -4.47938585e+00, -8.29019089e+01, 3.50355768e+00, 4.04748535e+01],
            [1.06150293e+00, 7.06081162e+01, -2.12617254e+00, -1.70465851e+00, -2.79464436e+00, -6.72042847e+01],
            [1.20123016e+02, -4.79486752e+00, 1.20642822e+02, -2.51572156e+00, 1.20421967e+02, -4.53709412e+00],
            [3.05324960e+00, 5.30811958e+01, -6.42732811e+00, -1.17740703e+00, 4.24791336e-01, -5.07015800e+01],
            [5.26415443e+00, -2.94956284e+01, 3.30894589e+00, 6.24277000e+01, -6.77362251e+00, -3.03212338e+01],
            [-7.30642537e-03, -2.59994698e+00, -1.81326345e-01, -2.70521426e+00, -1.25869721e-01, -2.55018711e+00],
        ],
        [
            [2.93832397e+00, 1.43178768e+01, -1.29864648e+03, 9.92510986e+00, -1.22263432e+00, -2.18578196e+00],
            [2.76311829e+02, -3.12201691e+02, 4.25684143e+02, -2.42431885e+02, -2.05626526e+02, -4.83630753e+00],
            [-7.69739437e+00, 7.23956585e+00, -3.02412701e+01, 5.15423107e+00, 4.06448650e+00, -4.43265200e-01],
            [-1.55164566e+01, -3.51046448e+02, 1.84625549e+03, -2.65265808e+02, 3.09945202e+01, 2.84656315e+01],
        ],
    ),
    "N_Nmm_tool": (
        [
            [-6.61426306e+00, 1.73297089e+02, -1.99253006e+01, -3.68766083e+02, 1.55846014e+01, 1.80041122e+02],
            [3.81169861e+02, 2.07006851e+02, 3.72778442e+02, -1.32746458e+01, 3.69981171e+02, -2.25653000e+02],
            [3.74492218e+02, -2.37170105e+02, 3.86153656e+02, -2.55109143e+00, 3.87561523e+02, 1.97111343e+02],
            [4.39406891e+02, 1.22789805e+04, -9.15344299e+02, -2.84683106e+02, -2.00628983e+02, -1.17073008e+04],
            [5.13521668e+02, -5.01498145e+03, 5.31659119e+02, 9.98650977e+03, -7.71616150e+02, -5.17234033e+03],
            [-5.14689148e+02, 4.59954980e+03, -5.60632324e+02, -1.04187607e+04, 7.51504028e+02, 4.76485986e+03],
        ],
        [
            [1.30702934e+01, -4.03968579e+03, -4.12975537e+03, 2.39516748e+03, -4.57147217e+02, 1.07893921e+02],
            [1.22909631e+03, 3.56943848e+02, 2.32092188e+03, -5.51659727e+04, -3.41964141e+04, 3.34236445e+04],
            [-3.42397194e+01, -7.23488159e+01, -1.17890991e+02, 1.22641382e+03, 7.73530701e+02, -8.44357544e+02],
            [-6.90205841e+01, 4.70298193e+03, 6.91132275e+03, -6.12016562e+04, 5.72650195e+03, -1.17813525e+03],
        ],
    ),
}
# index3: NULL
ATIIAFTT_OUTPUT_N = [-4.285730, -908.400635, -928.162720, -0.679282, -1.102992, -1.988170]
ATIIAFTT_OUTPUT_KN = [-0.004286, -0.908401, -0.928163, -0.679282, -1.102992, -1.98817]


def _within(ours: np.ndarray, ref: np.ndarray, tol: np.ndarray) -> None:
    bad = ~(np.abs(ours - ref) <= tol)
    assert not bad.any(), f"differ at {np.argwhere(bad).tolist()}:\nours {ours[bad]}\nref  {ref[bad]}"


def _assert_matrix_like_c(ours: np.ndarray, ref: list[list[float]]) -> None:
    ref = np.asarray(ref)
    # float32 precision of each row's magnitude: small elements come out of cancellations in TTM·B.
    _within(ours, ref, 2e-6 * np.abs(ref).max(axis=1, keepdims=True))


def _assert_wrench_like_c(cal: FTCalibration, volts: np.ndarray, ours: np.ndarray, ref: list,
                          rounding: float = 0.0) -> None:
    # float32 precision of the terms summed in W·(v - bias), not of the (possibly cancelled) result.
    scale = np.abs(cal.working_matrix) @ np.abs(np.asarray(volts)[..., :6] - np.asarray(BIAS[:6])).T
    _within(ours, np.asarray(ref), 2e-6 * scale.T + rounding)


@pytest.fixture
def ft18766(tmp_path) -> Path:
    return _write(tmp_path, FT18766, "FT18766.cal")


def test_embedded_fixture_is_the_real_file_byte_for_byte():
    assert hashlib.sha256(FT18766.encode("utf-8")).hexdigest() == FT18766_SHA256
    if SHARED_FIXTURE.exists():
        assert SHARED_FIXTURE.read_bytes() == FT18766.encode("utf-8")


def test_reads_every_field(ft18766):
    cal = FTCalibration.from_file(ft18766)
    assert (cal.serial, cal.body_style, cal.family, cal.part_number, cal.cal_date) == (
        "FT18766", "Delta IP60", "DAQ", "SI-660-60", "5/17/2016")
    assert (cal.force_units, cal.torque_units) == ("N", "N-m")
    assert (cal.file_dist_units, cal.file_angle_units) == ("m", "degrees")
    np.testing.assert_array_equal(cal.max_loads, [660, 660, 1980, 60, 60, 60])
    np.testing.assert_array_equal(cal.basic_transform, [0, 0, 0.0191262, 0, 0, 0])
    assert cal.basic_matrix[0, 3] == -35.83695 / 0.498178167356047
    assert cal.user_axis is not None and cal.user_axis[2, 0] == 120.12303
    assert (cal.output_range_V, cal.output_bipolar, cal.gain_multiplier, cal.hw_temp_comp) == (20, True, 1, True)
    assert cal.output_rails_V == (-10.0, 10.0)
    assert not cal.temp_comp_available and not cal.temp_comp
    assert cal.working_matrix.shape == (6, 6)


def test_user_axis_is_the_basic_transform_times_the_basic_matrix(ft18766):
    # ATI writes UserAxis = TTM(BasicTransform)·B rounded to 5 decimals; with file units and no tool
    # transform that is exactly the working matrix (device-notes: within 2.4e-5 on this file).
    cal = FTCalibration.from_file(ft18766)
    assert np.abs(cal.user_axis - cal.working_matrix).max() < 2.4e-5


def test_matches_atiiaftt_published_output(ft18766):
    cal = FTCalibration.from_file(ft18766)
    cal.bias(BIAS)
    cal.set_tool_transform(0, 0, 20, 45, 0, 0, dist_units="mm", angle_units="degrees")
    cal.set_units(force="N", torque="N-m")
    # atiiaftt publishes results rounded to 6 decimals.
    _assert_wrench_like_c(cal, READINGS[0], cal.wrench(READINGS[0]), ATIIAFTT_OUTPUT_N, rounding=5e-7)
    cal.set_units(force="kN", torque="N-m")
    _assert_wrench_like_c(cal, READINGS[0], cal.wrench(READINGS[0]), ATIIAFTT_OUTPUT_KN, rounding=5e-7)


@pytest.mark.parametrize("name", list(CASES))
def test_working_matrix_and_wrench_equal_atis_library(ft18766, name):
    force, torque, tt, dist, angle = CASES[name]
    cal = FTCalibration.from_file(ft18766)
    cal.set_units(force=force, torque=torque)
    cal.set_tool_transform(*tt, dist_units=dist, angle_units=angle)
    cal.bias(BIAS)
    ref_W, ref_FT = C_REF[name]
    _assert_matrix_like_c(cal.working_matrix, ref_W)
    batch = cal.wrench(READINGS)
    assert batch.shape == (len(READINGS), 6)
    _assert_wrench_like_c(cal, READINGS, batch, ref_FT)
    # One reading at a time, 6 or 7 channels, gives the rows of the batch.
    for i, r in enumerate(READINGS):
        np.testing.assert_allclose(cal.wrench(r), batch[i], rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(cal.wrench(r[:6]), cal.wrench(r))


def test_configuration_order_does_not_matter(ft18766):
    a, b = FTCalibration.from_file(ft18766), FTCalibration.from_file(ft18766)
    a.set_units("lb", "in-lb")
    a.set_tool_transform(10, -5, 30, 15, -20, 30)
    b.set_tool_transform(10, -5, 30, 15, -20, 30)
    b.set_units("lb", "in-lb")
    np.testing.assert_array_equal(a.working_matrix, b.working_matrix)


def test_bias_is_the_tare(ft18766):
    cal = FTCalibration.from_file(ft18766)
    raw = cal.wrench(READINGS[1])
    np.testing.assert_allclose(raw, cal.working_matrix @ np.asarray(READINGS[1][:6]), rtol=1e-14)
    cal.bias(BIAS)
    np.testing.assert_array_equal(cal.bias_volts, BIAS[:6])
    np.testing.assert_array_equal(cal.wrench(BIAS), np.zeros(6))
    np.testing.assert_allclose(cal.wrench(READINGS[1]), raw - cal.working_matrix @ np.asarray(BIAS[:6]), rtol=1e-12)
    cal.bias(BIAS[:6])  # the thermistor channel is optional without software temperature compensation
    np.testing.assert_array_equal(cal.wrench(BIAS[:6]), np.zeros(6))
    with pytest.raises(ValueError):
        cal.bias([READINGS[0], READINGS[1]])  # one reading, not a block
    with pytest.raises(ValueError):
        cal.wrench(np.zeros(5))


def test_software_temperature_compensation_equals_atis_library(tmp_path):
    path = _write(tmp_path, _temp_comp_file())
    cal = FTCalibration.from_file(path)
    assert cal.temp_comp_available and cal.temp_comp and not cal.hw_temp_comp
    assert cal.thermistor_V == -3.9
    cal.bias(BIAS)
    for state in ("on", "off"):
        cal.set_temp_comp(state == "on")
        ref_W, ref_FT = C_TEMP_COMP[state]
        _assert_matrix_like_c(cal.working_matrix, ref_W)
        _assert_wrench_like_c(cal, READINGS, cal.wrench(READINGS), ref_FT)
    cal.set_temp_comp(True)
    with pytest.raises(ValueError, match="7 channels"):
        cal.wrench(np.asarray(READINGS)[:, :6])
    cal.bias(BIAS[:6])
    with pytest.raises(ValueError, match="7 channels"):
        cal.wrench(READINGS)


def test_temp_comp_cannot_be_enabled_without_its_data(ft18766):
    cal = FTCalibration.from_file(ft18766)
    with pytest.raises(ValueError, match="temperature compensation"):
        cal.set_temp_comp(True)
    cal.set_temp_comp(False)


def test_second_calibration_of_a_file(tmp_path, ft18766):
    path = _write(tmp_path, _two_calibrations_file())
    first = FTCalibration.from_file(path, index=1)
    np.testing.assert_array_equal(first.working_matrix, FTCalibration.from_file(ft18766).working_matrix)
    cal = FTCalibration.from_file(path, index=2)
    assert (cal.force_units, cal.torque_units, cal.file_dist_units, cal.file_angle_units) == (
        "lb", "in-lb", "in", "radians")
    cal.bias(BIAS)
    _assert_matrix_like_c(cal.working_matrix, C_INDEX2["file_units"][0])
    _assert_wrench_like_c(cal, READINGS, cal.wrench(READINGS), C_INDEX2["file_units"][1])
    cal.set_units("N", "N-mm")
    cal.set_tool_transform(0, 0, 20, 45, 0, 0)
    _assert_matrix_like_c(cal.working_matrix, C_INDEX2["N_Nmm_tool"][0])
    _assert_wrench_like_c(cal, READINGS, cal.wrench(READINGS), C_INDEX2["N_Nmm_tool"][1])


@pytest.mark.parametrize("index", [0, 2, -1])
def test_index_out_of_range(ft18766, index):
    with pytest.raises(CalibrationError, match="index") as exc:
        FTCalibration.from_file(ft18766, index=index)
    assert "<Calibration>" in str(exc.value) and str(ft18766) in str(exc.value)


def test_saturation_flags_near_the_rails(ft18766, tmp_path):
    cal = FTCalibration.from_file(ft18766)
    volts = np.array([[0.0, 9.85, 9.95, -9.95, 10.0, -12.0], [1.0, -1.0, 0.0, 9.0, -9.0, 0.5]])
    np.testing.assert_array_equal(cal.saturated(volts), [[False, False, True, True, True, True], [False] * 6])
    np.testing.assert_array_equal(cal.saturated(volts[0], margin_V=0.2), [False, True, True, True, True, True])
    # A unipolar 0-10 V box saturates at 0 V and at 10 V.
    unipolar = FTCalibration.from_file(_write(tmp_path, FT18766.replace(
        'OutputRange="20"', 'OutputRange="10"').replace('OutputBipolar="True"', 'OutputBipolar="False"')))
    assert unipolar.output_rails_V == (0.0, 10.0)
    np.testing.assert_array_equal(unipolar.saturated([0.0, 0.05, 5.0, 9.95, 10.0, 3.0]),
                                  [True, True, False, True, True, False])


def test_overload_flags_use_the_rated_loads_in_any_units_and_frame(ft18766):
    cal = FTCalibration.from_file(ft18766)
    rated = cal.max_loads
    np.testing.assert_array_equal(cal.overloaded(0.99 * rated), [False] * 6)
    np.testing.assert_array_equal(cal.overloaded(-1.01 * rated), [True] * 6)
    np.testing.assert_array_equal(cal.overloaded(np.diag(1.5 * rated)), np.eye(6, dtype=bool))
    # The same gauge volts are overloaded or not whatever units and tool frame they are read in.
    cal.bias(BIAS)
    volts = np.linalg.solve(cal.working_matrix, np.array([700.0, 10, 10, 1, 1, 1])) + np.asarray(BIAS[:6])
    expected = [True, False, False, False, False, False]
    np.testing.assert_array_equal(cal.overloaded(cal.wrench(volts)), expected)
    cal.set_units("lb", "in-lb")
    # ftconfig.c's tables: 1 lb = 4.44822161526 N, 1 in-lb = 0.112984829028 N-m.
    np.testing.assert_allclose(cal.max_loads, [660 / 4.44822161526] * 2 + [1980 / 4.44822161526]
                               + [60 / 0.112984829028] * 3, rtol=1e-12)
    cal.set_tool_transform(50, 0, 100, 0, 90, 0)
    np.testing.assert_array_equal(cal.overloaded(cal.wrench(volts)), expected)
    np.testing.assert_array_equal(cal.overloaded(cal.wrench(np.stack([volts, BIAS[:6]]))), [expected, [False] * 6])


def test_bad_units_are_rejected_and_change_nothing(ft18766):
    cal = FTCalibration.from_file(ft18766)
    before = cal.working_matrix
    for call in (lambda: cal.set_units("N", "furlong-lb"), lambda: cal.set_units("stone", "N-m"),
                 lambda: cal.set_tool_transform(0, 0, 1, 0, 0, 0, dist_units="yd"),
                 lambda: cal.set_tool_transform(0, 0, 1, 0, 0, 0, angle_units="grad")):
        with pytest.raises(ValueError, match="unknown"):
            call()
    np.testing.assert_array_equal(cal.working_matrix, before)
    assert (cal.force_units, cal.torque_units) == ("N", "N-m")


FY_VALUES = 'values="  0.10894  40.17421  -1.99940 -20.54550  -0.38501 -19.71422 "'
TZ_AXIS_LINE = FT18766_LINES[15] + "\r\n"
# name: (file text, element named, attribute named, line)
MALFORMED = {
    "not_xml": ("this is not an ATI calibration", None, None, 1),
    "empty": ("", None, None, 1),
    "truncated": (FT18766[:1500], None, None, 14),
    "wrong_root": (FT18766.replace("FTSensor", "Sensor"), "Sensor", None, 9),
    "html": ("<html>\n<body>calibration</body>\n</html>\n", "html", None, 1),
    "no_serial": (FT18766.replace(' Serial="FT18766"', ""), "FTSensor", "Serial", 9),
    "empty_body_style": (FT18766.replace('BodyStyle="Delta IP60"', 'BodyStyle=""'), "FTSensor", "BodyStyle", 9),
    "seven_gauges": (FT18766.replace('NumGages="6"', 'NumGages="7"'), "FTSensor", "NumGages", 9),
    "no_force_units": (FT18766.replace(' ForceUnits="N"', ""), "Calibration", "ForceUnits", 10),
    "bad_torque_units": (FT18766.replace('TorqueUnits="N-m"', 'TorqueUnits="Nm-ish"'), "Calibration",
                         "TorqueUnits", 10),
    "bad_dist_units": (FT18766.replace('DistUnits="m"', 'DistUnits="furlong"'), "Calibration", "DistUnits", 10),
    "bad_angle_units": (FT18766.replace('DistUnits="m"', 'DistUnits="m" AngleUnits="grad"'), "Calibration",
                        "AngleUnits", 10),
    "bad_output_range": (FT18766.replace('OutputRange="20"', 'OutputRange="twenty"'), "Calibration",
                         "OutputRange", 10),
    "bad_bipolar": (FT18766.replace('OutputBipolar="True"', 'OutputBipolar="Yes"'), "Calibration",
                    "OutputBipolar", 10),
    "missing_axis": (FT18766.replace(TZ_AXIS_LINE, ""), "Calibration", None, 10),
    "renamed_axis": (FT18766.replace('<Axis Name="Fz"', '<Axis Name="Fq"'), "Calibration", None, 10),
    "five_values": (FT18766.replace(FY_VALUES, FY_VALUES.replace(" -19.71422", "")), 'Axis Name="Fy"', "values", 12),
    "seven_values": (FT18766.replace(FY_VALUES, FY_VALUES.replace(" -19.71422", " -19.71422 1.0")),
                     'Axis Name="Fy"', "values", 12),
    "non_numeric_value": (FT18766.replace("40.17421", "4O.17421"), 'Axis Name="Fy"', "values", 12),
    "no_values": (FT18766.replace(FY_VALUES, ""), 'Axis Name="Fy"', "values", 12),
    "zero_scale": (FT18766.replace('scale="0.164640629289319"', 'scale="0"'), 'Axis Name="Fz"', "scale", 13),
    "bad_scale": (FT18766.replace('scale="0.164640629289319"', 'scale="x"'), 'Axis Name="Fz"', "scale", 13),
    "bad_max": (FT18766.replace('max="1980" scale', 'max="lots" scale'), 'Axis Name="Fz"', "max", 13),
    "bad_basic_transform": (FT18766.replace('Dz="0.0191262"', 'Dz="19 mm"'), "BasicTransform", "Dz", 17),
    "short_user_axis": (FT18766.replace(" -2.55019 ", " "), 'UserAxis Name="Tz"', "values", 23),
    "bad_gain_slope": (_temp_comp_file().replace(" 0.02200 -0.01300 ", " "), "GainSlope", "values", 19),
    "no_thermistor_value": (_temp_comp_file().replace('value="-3.9"', ""), "Thermistor", "value", 20),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_files_raise_one_calibration_error(tmp_path, case):
    text, element, attribute, line = MALFORMED[case]
    path = _write(tmp_path, text, f"{case}.cal")
    with pytest.raises(CalibrationError) as exc:
        FTCalibration.from_file(path)
    err, message = exc.value, str(exc.value)
    assert isinstance(err, ValueError) and err.__cause__ is None  # not ElementTree's or expat's exception
    assert message.startswith(f"{path}, line {line}:")
    if element is not None:
        assert f"<{element}>" in message
    if attribute is not None:
        assert f"'{attribute}'" in message


def test_missing_file_is_a_calibration_error(tmp_path):
    with pytest.raises(CalibrationError, match="cannot read") as exc:
        FTCalibration.from_file(tmp_path / "nope.cal")
    assert "nope.cal" in str(exc.value)
