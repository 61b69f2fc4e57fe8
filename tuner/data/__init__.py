"""Labelled position sets built from games (`wasp-tune data`), and where the shipped files are.

The shipped files (openings, the sample set, tuned parameters) sit in the project's top-level
`datasets/` folder, which holds data only: it is installed beside the packages and found on disk
(`DATA_DIR`), never imported, so Hugging Face's `datasets` package can be installed beside it.
"""

import os

DATA_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "datasets")
