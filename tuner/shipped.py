"""Where the data shipped with the project is: the openings, the labelled sample and the tuned
parameter files of the top-level `datasets/` folder (data only, never imported).

A wheel installs that folder inside this package, as `tuner/datasets/` (pyproject.toml maps the
package `tuner.datasets` to it), so that site-packages gets no `datasets` directory beside
Hugging Face's `datasets`; a checkout or an editable install keeps it at the top. `DATA_DIR` is
whichever of the two exists.
"""

import os

_TUNER = os.path.dirname(os.path.abspath(__file__))
_INSTALLED = os.path.join(_TUNER, "datasets")
DATA_DIR = (_INSTALLED if os.path.isdir(_INSTALLED)
            else os.path.join(os.path.dirname(_TUNER), "datasets"))
