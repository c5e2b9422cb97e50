"""Trains the iris classifier the model-server tests and images serve, and writes it as each server reads it.

Usage: python3 train.py OUT_DIR

The data is the iris set scikit-learn ships (load_iris reads it from the package: no download). Writes:
  OUT_DIR/model.joblib          what Vertex's SklearnPredictor, KServe's sklearn model and MLServer load
  OUT_DIR/model-settings.json   MLServer's description of the model (name "iris", runtime mlserver_sklearn)
LogisticRegression with lbfgs is deterministic: the same scikit-learn version writes the same model.
"""

import json
import os
import sys

import joblib
import sklearn
from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression


def main() -> None:
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    x, y = load_iris(return_X_y=True)
    model = LogisticRegression(max_iter=1000).fit(x, y)
    joblib.dump(model, os.path.join(out, "model.joblib"))
    settings = {
        "name": "iris",
        "implementation": "mlserver_sklearn.SKLearnModel",
        "parameters": {"uri": "./model.joblib", "version": "v1"},
    }
    with open(os.path.join(out, "model-settings.json"), "w", encoding="utf-8") as f:
        json.dump(settings, f, indent=2)
    print(json.dumps({"sklearn": sklearn.__version__, "accuracy": model.score(x, y)}))


if __name__ == "__main__":
    main()
