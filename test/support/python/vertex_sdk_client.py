"""Google's Vertex AI and Service Directory Python SDKs, used as their documentation shows, against the gateway.

Run by test/integration/gateway/python-sdk.test.ts with the gateway's CA trusted the way the README tells users
(GRPC_DEFAULT_SSL_ROOTS_FILE_PATH for gRPC, REQUESTS_CA_BUNDLE for REST) and a bearer token as the credentials.
argv: scenario, then its arguments; prints one JSON document.
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


def high_level(name, transport, instances):
    """The documented path: aiplatform.init(...), then Endpoint(name).predict() and .explain()."""
    from google.cloud import aiplatform

    project, location = name.split("/")[1], name.split("/")[3]
    aiplatform.init(
        project=project, location=location, api_endpoint=API_ENDPOINT, credentials=CREDENTIALS, api_transport=transport
    )
    endpoint = aiplatform.Endpoint(name)
    prediction = endpoint.predict(instances=instances)
    out = {
        "displayName": endpoint.display_name,
        "trafficSplit": dict(endpoint.traffic_split),
        "predictions": [dict(p) if hasattr(p, "items") else p for p in prediction.predictions],
        "deployedModelId": prediction.deployed_model_id,
        "modelVersionId": prediction.model_version_id,
        "model": prediction.model_resource_name,
    }
    try:
        explanation = endpoint.explain(instances=instances)
        out["explanations"] = len(explanation.explanations)
        out["explainedBy"] = explanation.deployed_model_id
    except Exception as err:  # noqa: BLE001 - reported to the test, which decides
        out["explainError"] = error_of(err)
    return out


def predictions(name, transport, instances, calls):
    """Endpoint(name).predict() `calls` times: each answer's deployed model and predictions, as the SDK gives them."""
    from google.cloud import aiplatform

    project, location = name.split("/")[1], name.split("/")[3]
    aiplatform.init(
        project=project, location=location, api_endpoint=API_ENDPOINT, credentials=CREDENTIALS, api_transport=transport
    )
    endpoint = aiplatform.Endpoint(name)
    answers = []
    for _ in range(calls):
        prediction = endpoint.predict(instances=instances)
        answers.append({"deployedModelId": prediction.deployed_model_id, "predictions": list(prediction.predictions)})
    return {"answers": answers}


def default_client(name, instances, calls):
    """PredictionServiceClient() with its defaults (gRPC over TLS); `calls` predictions counted by deployed model."""
    from google.cloud import aiplatform_v1
    from google.protobuf import json_format, struct_pb2

    client = aiplatform_v1.PredictionServiceClient(
        client_options={"api_endpoint": API_ENDPOINT}, credentials=CREDENTIALS
    )
    values = [json_format.ParseDict(i, struct_pb2.Value()) for i in instances]
    counts = {}
    for _ in range(calls):
        answer = client.predict(endpoint=name, instances=values)
        counts[answer.deployed_model_id] = counts.get(answer.deployed_model_id, 0) + 1
    return {"transport": client.transport.kind, "counts": counts}


def endpoint_service(name):
    from google.cloud import aiplatform_v1

    client = aiplatform_v1.EndpointServiceClient(client_options={"api_endpoint": API_ENDPOINT}, credentials=CREDENTIALS)
    got = client.get_endpoint(name=name)
    parent = name[: name.index("/endpoints/")]
    listed = [e.name for e in client.list_endpoints(parent=parent)]
    return {
        "name": got.name,
        "displayName": got.display_name,
        "deployedModels": sorted(m.id for m in got.deployed_models),
        "trafficSplit": dict(got.traffic_split),
        "listed": listed,
    }


def resolve(name):
    from google.cloud import servicedirectory_v1

    client = servicedirectory_v1.LookupServiceClient(
        client_options={"api_endpoint": API_ENDPOINT}, credentials=CREDENTIALS
    )
    answer = client.resolve_service(request={"name": name})
    return {
        "name": answer.service.name,
        "endpoints": [{"name": e.name, "address": e.address, "port": e.port} for e in answer.service.endpoints],
    }


def main():
    scenario, args = sys.argv[1], sys.argv[2:]
    try:
        if scenario == "high-level":
            result = high_level(args[0], args[1], json.loads(args[2]))
        elif scenario == "predictions":
            result = predictions(args[0], args[1], json.loads(args[2]), int(args[3]))
        elif scenario == "default-client":
            result = default_client(args[0], json.loads(args[1]), int(args[2]))
        elif scenario == "endpoint-service":
            result = endpoint_service(args[0])
        elif scenario == "resolve":
            result = resolve(args[0])
        else:
            raise SystemExit(f"unknown scenario {scenario}")
    except Exception as err:  # noqa: BLE001 - the test reads the error's code
        result = error_of(err)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
