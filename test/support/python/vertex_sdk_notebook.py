"""A data scientist's notebook: the documented Vertex AI Python SDK write flow against the gateway, one cell at a time.

Run by test/integration/prediction/sdk-writes-on-real-node.test.ts (through test/support/vertex-sdk.ts) with the
gateway's CA trusted as users trust it and the caller's token as the credentials (GATEWAY_TOKEN). The process is
the notebook's kernel: the SDK is imported once and stays loaded, its connections stay open between cells, and each
cell is aiplatform.init(...) then one step exactly as the SDK's documentation writes it (Model.upload,
Endpoint.create, model.deploy, endpoint.predict, endpoint.undeploy, delete), objects of earlier cells named by their
resource names.

stdin: one JSON object a line, a cell: {"step": ..., "args": {...}} (args always hold project, location, transport).
stdout: for each cell one line `RESULT_PREFIX` + JSON: the step's result as the SDK returns it, or {"error", "code",
"message"} when the SDK raised. Other stdout lines are the SDK's own log (its logger writes to stdout).
"""
import json
import os
import sys

from google.oauth2.credentials import Credentials

API_ENDPOINT = os.environ["GATEWAY_API_ENDPOINT"]  # host:port, as for aiplatform.init(api_endpoint=...)
CREDENTIALS = Credentials(token=os.environ.get("GATEWAY_TOKEN", "unused"))


def error_of(err):
    code = getattr(err, "grpc_status_code", None) or getattr(err, "code", None)
    return {"error": type(err).__name__, "code": getattr(code, "name", str(code)), "message": str(err)}


def model_of(model):
    return {
        "resourceName": model.resource_name,
        "versionId": model.version_id,
        "versionAliases": list(model.version_aliases),
        "artifactUri": model.uri,
        "displayName": model.display_name,
        "imageUri": model.container_spec.image_uri if model.container_spec else None,
    }


def endpoint_of(endpoint):
    endpoint._sync_gca_resource()  # what endpoint.gca_resource says now
    return {
        "resourceName": endpoint.resource_name,
        "displayName": endpoint.display_name,
        "trafficSplit": dict(endpoint.traffic_split),
        "deployedModels": [
            {"id": m.id, "model": m.model, "modelVersionId": m.model_version_id} for m in endpoint.list_models()
        ],
    }


def upload(aiplatform, a):
    model = aiplatform.Model.upload(
        display_name=a["displayName"],
        artifact_uri=a["artifactUri"],
        serving_container_image_uri=a["imageUri"],
        parent_model=a.get("parentModel"),
    )
    return model_of(model)


def create_endpoint(aiplatform, a):
    endpoint = aiplatform.Endpoint.create(display_name=a["displayName"])
    return endpoint_of(endpoint)


def deploy(aiplatform, a):
    model = aiplatform.Model(a["model"], version=a.get("version"))
    endpoint = aiplatform.Endpoint(a["endpoint"])
    traffic = {"traffic_split": a["trafficSplit"]} if "trafficSplit" in a else {"traffic_percentage": 100}
    model.deploy(endpoint=endpoint, machine_type=a["machineType"], min_replica_count=1, **traffic)
    return endpoint_of(endpoint)


def predict(aiplatform, a):
    endpoint = aiplatform.Endpoint(a["endpoint"])
    answers = []
    for _ in range(a["calls"]):
        prediction = endpoint.predict(instances=a["instances"])
        answers.append({"deployedModelId": prediction.deployed_model_id, "predictions": list(prediction.predictions)})
    return {"answers": answers}


def undeploy(aiplatform, a):
    endpoint = aiplatform.Endpoint(a["endpoint"])
    endpoint.undeploy(deployed_model_id=a["deployedModelId"], traffic_split=a.get("trafficSplit"))
    return endpoint_of(endpoint)


def undeploy_all(aiplatform, a):
    endpoint = aiplatform.Endpoint(a["endpoint"])
    endpoint.undeploy_all()
    return endpoint_of(endpoint)


def delete_endpoint(aiplatform, a):
    aiplatform.Endpoint(a["endpoint"]).delete()
    return {"deleted": a["endpoint"]}


def delete_model(aiplatform, a):
    aiplatform.Model(a["model"]).delete()
    return {"deleted": a["model"]}


def get_model(aiplatform, a):
    return model_of(aiplatform.Model(a["model"], version=a.get("version")))


STEPS = {
    "upload": upload,
    "create-endpoint": create_endpoint,
    "deploy": deploy,
    "predict": predict,
    "undeploy": undeploy,
    "undeploy-all": undeploy_all,
    "delete-endpoint": delete_endpoint,
    "delete-model": delete_model,
    "get-model": get_model,
}


RESULT_PREFIX = "notebook-cell-result "


def run_cell(aiplatform, step, args):
    try:
        aiplatform.init(
            project=args["project"],
            location=args["location"],
            api_endpoint=API_ENDPOINT,
            credentials=CREDENTIALS,
            api_transport=args["transport"],
        )
        return STEPS[step](aiplatform, args)
    except Exception as err:  # noqa: BLE001 - the test reads the error's code and message
        return error_of(err)


def main():
    from google.cloud import aiplatform

    for line in sys.stdin:
        cell = json.loads(line)
        result = run_cell(aiplatform, cell["step"], cell["args"])
        print(RESULT_PREFIX + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
