/**
 * A finished span as plain data, so that it crosses to the export worker (src/runtime/worker-span-exporter.ts)
 * by structured clone, and back into a `ReadableSpan` there for the SDK's own OTLP exporter. A
 * ReadableSpan is a class instance with a `spanContext()` method, a `TraceState` object and a shared
 * `Resource`, none of which survive `postMessage`: the trace state travels as its W3C header form,
 * the resource once per worker (the OTLP transformer groups spans by resource identity, so every
 * rebuilt span must share one object).
 */
import { createTraceState, type Attributes, type HrTime, type Link, type SpanContext, type SpanKind, type SpanStatus } from '@opentelemetry/api';
import type { InstrumentationScope } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace-base';

/** A SpanContext with its trace state serialized (`tracestate` header form). */
export interface SpanContextData {
  readonly traceId: string;
  readonly spanId: string;
  readonly traceFlags: number;
  readonly isRemote?: boolean;
  readonly traceState?: string;
}

export interface LinkData {
  readonly context: SpanContextData;
  readonly attributes?: Attributes;
  readonly droppedAttributesCount?: number;
}

export interface SpanData {
  readonly name: string;
  readonly kind: SpanKind;
  readonly spanContext: SpanContextData;
  readonly parentSpanContext?: SpanContextData;
  readonly startTime: HrTime;
  readonly endTime: HrTime;
  readonly duration: HrTime;
  readonly status: SpanStatus;
  readonly attributes: Attributes;
  readonly links: LinkData[];
  readonly events: TimedEvent[];
  readonly droppedAttributesCount: number;
  readonly droppedEventsCount: number;
  readonly droppedLinksCount: number;
  readonly instrumentationScope: InstrumentationScope;
}

function contextToData(context: SpanContext): SpanContextData {
  const data: { -readonly [K in keyof SpanContextData]: SpanContextData[K] } = { traceId: context.traceId, spanId: context.spanId, traceFlags: context.traceFlags };
  if (context.isRemote !== undefined) data.isRemote = context.isRemote;
  const traceState = context.traceState?.serialize();
  if (traceState !== undefined) data.traceState = traceState;
  return data;
}

function contextFromData(data: SpanContextData): SpanContext {
  const { traceState, ...rest } = data;
  return traceState === undefined ? rest : { ...rest, traceState: createTraceState(traceState) };
}

function scopeToData(scope: InstrumentationScope): InstrumentationScope {
  return { name: scope.name, ...(scope.version === undefined ? {} : { version: scope.version }), ...(scope.schemaUrl === undefined ? {} : { schemaUrl: scope.schemaUrl }) };
}

/** The span as structured-clonable data (attribute values are primitives or arrays of them, which clone as they are). */
export function spanToData(span: ReadableSpan): SpanData {
  const data: SpanData = {
    name: span.name,
    kind: span.kind,
    spanContext: contextToData(span.spanContext()),
    startTime: span.startTime,
    endTime: span.endTime,
    duration: span.duration,
    status: span.status.message === undefined ? { code: span.status.code } : { code: span.status.code, message: span.status.message },
    attributes: span.attributes,
    links: span.links.map((l: Link) => ({ context: contextToData(l.context), ...(l.attributes === undefined ? {} : { attributes: l.attributes }), ...(l.droppedAttributesCount === undefined ? {} : { droppedAttributesCount: l.droppedAttributesCount }) })),
    events: span.events.map((e) => ({ ...e })),
    droppedAttributesCount: span.droppedAttributesCount,
    droppedEventsCount: span.droppedEventsCount,
    droppedLinksCount: span.droppedLinksCount,
    instrumentationScope: scopeToData(span.instrumentationScope),
  };
  return span.parentSpanContext === undefined ? data : { ...data, parentSpanContext: contextToData(span.parentSpanContext) };
}

/** The ReadableSpan the SDK's exporters take, for data made by spanToData. */
export function spanFromData(data: SpanData, resource: Resource): ReadableSpan {
  const spanContext = contextFromData(data.spanContext);
  const span: ReadableSpan = {
    name: data.name,
    kind: data.kind,
    spanContext: () => spanContext,
    startTime: data.startTime,
    endTime: data.endTime,
    duration: data.duration,
    ended: true,
    status: data.status,
    attributes: data.attributes,
    links: data.links.map((l) => ({ ...l, context: contextFromData(l.context) })),
    events: data.events,
    resource,
    instrumentationScope: data.instrumentationScope,
    droppedAttributesCount: data.droppedAttributesCount,
    droppedEventsCount: data.droppedEventsCount,
    droppedLinksCount: data.droppedLinksCount,
  };
  return data.parentSpanContext === undefined ? span : { ...span, parentSpanContext: contextFromData(data.parentSpanContext) };
}
