/**
 * The gRPC side of the API methods (../writes/api-method.ts): each method's rpc, served by the same function its
 * REST routes call, with the request message read as proto3 JSON and the answer written back as the response message.
 */
import type { DescMessage, DescMethodUnary } from '@bufbuild/protobuf';
import type { ConnectRouter, HandlerContext } from '@connectrpc/connect';
import { answerJson, methodOf, type ApiMethod } from '../writes/api-method.js';
import { messageFromJson, messageToJson } from './services.js';

export function apiMethodRoutes(methods: readonly ApiMethod[]): (router: ConnectRouter) => void {
  return (router) => {
    for (const method of methods) {
      const desc = methodOf(method) as DescMethodUnary<DescMessage, DescMessage>;
      router.rpc(desc, (async (req: unknown, ctx: HandlerContext) => {
        const request = messageToJson(desc.input, req) as Record<string, unknown>;
        const answer = await method.call(request, {
          authorization: ctx.requestHeader.get('authorization') ?? undefined,
          signal: ctx.signal,
        });
        return messageFromJson(desc.output, answerJson(desc.output, answer));
      }) as never);
    }
  };
}
