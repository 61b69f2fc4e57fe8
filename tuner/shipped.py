"""Where the data shipped with the project is: the openings, the labelled sample and the tuned
parameter files of the top-level `datasets/` folder (data only, never imported)."""

import os

DATA_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "datasets")
