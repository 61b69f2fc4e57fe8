"""A tuner run whose validation set is given as files (split by game), not drawn at random.

`SplitRun` is `tuner.run.Run` with one change: its training set is the run's data files and its
validation set the files listed in ``valid_data.json`` in the run directory (written by
`SplitRun.create_split`). ``wasp-tune run TRAIN -valid-data VALID`` and ``--resume`` use it.
"""

import json
import os

import numpy as np

from tuner.positions import load_many
from tuner.run import Run

VALID_FILE = "valid_data.json"


class SplitRun(Run):
    """A `Run` with a held-out validation set read from files."""

    @classmethod
    def create_split(cls, run_dir, config, valid_data):
        """Create the run directory (as `Run.create`) and record the validation files."""
        missing = [p for p in valid_data if not os.path.exists(p)]
        if missing:
            raise FileNotFoundError(f"validation file not found: {missing[0]}")
        config.valid = 0.0
        run = cls.create(run_dir, config)
        with open(run.path(VALID_FILE), "w", encoding="utf-8") as f:
            json.dump({"valid_data": [os.path.abspath(p) for p in valid_data]}, f, indent=2)
        return run

    def valid_files(self):
        with open(self.path(VALID_FILE), encoding="utf-8") as f:
            return list(json.load(f)["valid_data"])

    def load_data(self):
        """Training set: the data files (first `limit` positions); validation: the given files."""
        c = self.config
        train = load_many(c.data, skip_bad=c.skip_bad, skip_plies=c.skip_plies)
        if c.limit:
            train = train.subset(np.arange(min(c.limit, len(train))))
        valid = load_many(self.valid_files(), skip_bad=c.skip_bad, skip_plies=c.skip_plies)
        self._train, self._valid = train, valid
        return type(train).concat([train, valid])
