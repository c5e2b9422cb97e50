// Command vertex-go-client calls the gateway the way a Go user of Vertex AI does: the official
// cloud.google.com/go/aiplatform/apiv1 clients over gRPC (their default transport), changed only in the
// address (option.WithEndpoint), the trust (the gateway's CA instead of the system roots) and the
// credentials (a bearer token, as a Kubernetes ServiceAccount token is one). It reads one JSON request on
// stdin and prints one JSON answer on stdout (test/support/vertex-go-client.ts):
//
//	{"address": "127.0.0.1:8443", "caFile": "/path/ca.crt", "tokenEnv": "GATEWAY_TOKEN",
//	 "calls": [{"method": "Predict", "endpoint": "projects/p/locations/l/endpoints/e", "instances": [[1, 2]]},
//	           {"method": "GetEndpoint", "name": "projects/p/locations/l/endpoints/e"}]}
//
// Each call's answer is the response as protojson (the field names of Google's REST API), or the gRPC
// status: {"code": 16, "message": "...", "details": [...]}.
package main

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"os"
	"time"

	aiplatform "cloud.google.com/go/aiplatform/apiv1"
	"cloud.google.com/go/aiplatform/apiv1/aiplatformpb"
	"golang.org/x/oauth2"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

type call struct {
	// Method is Predict or GetEndpoint.
	Method string `json:"method"`
	// Endpoint is Predict's endpoint resource name; Name is GetEndpoint's.
	Endpoint   string `json:"endpoint,omitempty"`
	Name       string `json:"name,omitempty"`
	Instances  []any  `json:"instances,omitempty"`
	Parameters any    `json:"parameters,omitempty"`
}

type request struct {
	Address  string `json:"address"`
	CAFile   string `json:"caFile"`
	TokenEnv string `json:"tokenEnv"`
	// TimeoutSeconds bounds each call (the client's deadline travels as grpc-timeout); default 30.
	TimeoutSeconds float64 `json:"timeoutSeconds,omitempty"`
	Calls          []call  `json:"calls"`
}

type rpcError struct {
	Code    int32             `json:"code"`
	Message string            `json:"message"`
	Details []json.RawMessage `json:"details,omitempty"`
}

type answer struct {
	Method   string          `json:"method"`
	Response json.RawMessage `json:"response,omitempty"`
	Error    *rpcError       `json:"error,omitempty"`
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "vertex-go-client: "+format+"\n", args...)
	os.Exit(2)
}

func main() {
	var req request
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
		fail("stdin is not a JSON request: %v", err)
	}
	pem, err := os.ReadFile(req.CAFile)
	if err != nil {
		fail("reading the CA: %v", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		fail("%s holds no PEM certificate", req.CAFile)
	}
	token := os.Getenv(req.TokenEnv)
	if token == "" {
		fail("no token in $%s", req.TokenEnv)
	}
	opts := []option.ClientOption{
		option.WithEndpoint(req.Address),
		// The token goes as `authorization: Bearer …` metadata on every call, as Google's own credentials do.
		option.WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: token, TokenType: "Bearer"})),
		// Dial options given here come after the library's own, so this trust replaces the system roots.
		option.WithGRPCDialOption(grpc.WithTransportCredentials(credentials.NewClientTLSFromCert(roots, ""))),
	}
	ctx := context.Background()
	predictions, err := aiplatform.NewPredictionClient(ctx, opts...)
	if err != nil {
		fail("NewPredictionClient: %v", err)
	}
	defer predictions.Close()
	endpoints, err := aiplatform.NewEndpointClient(ctx, opts...)
	if err != nil {
		fail("NewEndpointClient: %v", err)
	}
	defer endpoints.Close()

	timeout := 30 * time.Second
	if req.TimeoutSeconds > 0 {
		timeout = time.Duration(req.TimeoutSeconds * float64(time.Second))
	}
	answers := make([]answer, 0, len(req.Calls))
	for i, c := range req.Calls {
		callCtx, cancel := context.WithTimeout(ctx, timeout)
		var resp proto.Message
		switch c.Method {
		case "Predict":
			var in *aiplatformpb.PredictRequest
			in, err = predictRequest(c)
			if err != nil {
				cancel()
				fail("call %d: %v", i, err)
			}
			resp, err = predictions.Predict(callCtx, in)
		case "GetEndpoint":
			resp, err = endpoints.GetEndpoint(callCtx, &aiplatformpb.GetEndpointRequest{Name: c.Name})
		default:
			cancel()
			fail("call %d: unknown method %q (Predict, GetEndpoint)", i, c.Method)
		}
		cancel()
		answers = append(answers, answerOf(c.Method, resp, err))
	}
	if err := json.NewEncoder(os.Stdout).Encode(answers); err != nil {
		fail("writing the answer: %v", err)
	}
}

func predictRequest(c call) (*aiplatformpb.PredictRequest, error) {
	in := &aiplatformpb.PredictRequest{Endpoint: c.Endpoint}
	for _, instance := range c.Instances {
		v, err := structpb.NewValue(instance)
		if err != nil {
			return nil, fmt.Errorf("instance %v: %w", instance, err)
		}
		in.Instances = append(in.Instances, v)
	}
	if c.Parameters != nil {
		v, err := structpb.NewValue(c.Parameters)
		if err != nil {
			return nil, fmt.Errorf("parameters: %w", err)
		}
		in.Parameters = v
	}
	return in, nil
}

func answerOf(method string, resp proto.Message, err error) answer {
	if err != nil {
		s := status.Convert(err)
		e := &rpcError{Code: int32(s.Code()), Message: s.Message()}
		for _, d := range s.Proto().GetDetails() {
			// A detail whose type this program does not link is still shown, by its type URL.
			if text, merr := protojson.Marshal(d); merr == nil {
				e.Details = append(e.Details, text)
			} else {
				e.Details = append(e.Details, json.RawMessage(fmt.Sprintf(`{"@type":%q}`, d.GetTypeUrl())))
			}
		}
		return answer{Method: method, Error: e}
	}
	text, merr := protojson.Marshal(resp)
	if merr != nil {
		return answer{Method: method, Error: &rpcError{Code: -1, Message: merr.Error()}}
	}
	return answer{Method: method, Response: text}
}
