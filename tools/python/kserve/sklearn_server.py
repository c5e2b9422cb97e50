"""KServe's model server serving a scikit-learn model.joblib (V1 and Open Inference V2 REST).

Usage: python3 sklearn_server.py --model_dir DIR --model_name NAME [KServe's ModelServer flags: --http_port ...]

PyPI has no package of KServe's sklearnserver, so this is the part of it the tests need: a kserve.Model whose
predict runs the estimator's predict on the request's instances. Everything else, the HTTP server, both
protocols' routes, parsing, health and errors, is KServe's own ModelServer.
"""

import argparse
import os

import joblib
from kserve import Model, ModelServer, model_server
from kserve.utils.utils import get_predict_input, get_predict_response


class SklearnModel(Model):
    def __init__(self, name: str, model_dir: str):
        super().__init__(name)
        self.model_dir = model_dir
        self.load()

    def load(self) -> bool:
        self._model = joblib.load(os.path.join(self.model_dir, "model.joblib"))
        self.ready = True
        return self.ready

    def predict(self, payload, headers=None):
        instances = get_predict_input(payload)
        return get_predict_response(payload, self._model.predict(instances), self.name)


def main() -> None:
    parser = argparse.ArgumentParser(parents=[model_server.parser])
    # KServe's own parser has --model_name (and --http_port, --grpc_port, ...); the model directory is ours.
    parser.add_argument("--model_dir", required=True)
    args, _ = parser.parse_known_args()
    ModelServer().start([SklearnModel(args.model_name, args.model_dir)])


if __name__ == "__main__":
    main()
