"""Labelled position sets built from games (`wasp-tune data`), and where the shipped files are.

The shipped files (openings, the sample set, tuned parameters) are the project's top-level
`datasets/` folder, which holds data only. A wheel installs them inside this package, as
`tuner/datasets/`, so that site-packages gets no `datasets` directory beside Hugging Face's
`datasets` package; a checkout (or an editable install) keeps them at the top. `DATA_DIR` is
whichever of the two exists.
"""

import os

_TUNER = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_INSTALLED = os.path.join(_TUNER, "datasets")  # the wheel's place (pyproject.toml's package-dir)
DATA_DIR = (_INSTALLED if os.path.isdir(_INSTALLED)
            else os.path.join(os.path.dirname(_TUNER), "datasets"))
