"""Prints the predictions of a model.joblib for the instances given as JSON, the way the servers compute them.

Usage: python3 predict.py MODEL_DIR '[[5.1, 3.5, 1.4, 0.2], ...]'
The tests compare every server's answer with this: scikit-learn's own predict on the same instances.
"""

import json
import os
import sys

import joblib
import numpy as np


def main() -> None:
    model = joblib.load(os.path.join(sys.argv[1], "model.joblib"))
    instances = np.asarray(json.loads(sys.argv[2]), dtype=np.float64)
    print(json.dumps(model.predict(instances).tolist()))


if __name__ == "__main__":
    main()
