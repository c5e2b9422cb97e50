-- Health of an endpoint-operator resource, read from its kstatus conditions (sigs.k8s.io/cli-utils
-- pkg/kstatus) and generations, never from a list of condition types, so a condition added later
-- cannot change the answer. Only the base and table libraries are used (what Argo CD opens for a
-- script from argocd-cm).
--   deletionTimestamp set                     -> Progressing (being deleted)
--   generation not yet observed               -> Progressing (the operator has not seen the spec yet)
--   Stalled=True                              -> Degraded    (a person must change something)
--   Reconciling=True, or Ready False/Unknown  -> Progressing (waiting for something that will come)
--   Ready=True                                -> Healthy
--   no Ready condition yet                    -> Progressing
local function said(condition)
  if condition.message ~= nil and condition.message ~= "" then
    return condition.reason .. ": " .. condition.message
  end
  return condition.reason
end

local generation = obj.metadata.generation
local status = obj.status or {}
local conditions = {}
if status.conditions ~= nil then
  for _, condition in ipairs(status.conditions) do
    conditions[condition.type] = condition
  end
end
local ready = conditions["Ready"]

if obj.metadata.deletionTimestamp ~= nil then
  if ready ~= nil and ready.status ~= "True" then
    return { status = "Progressing", message = "Being deleted: " .. said(ready) }
  end
  return { status = "Progressing", message = "Being deleted" }
end

if generation ~= nil and status.observedGeneration ~= generation then
  return { status = "Progressing", message = "Waiting for the operator to observe generation " .. generation }
end

local function current(condition)
  return condition ~= nil and condition.status == "True"
    and (generation == nil or condition.observedGeneration == nil or condition.observedGeneration == generation)
end

if current(conditions["Stalled"]) then
  return { status = "Degraded", message = said(conditions["Stalled"]) }
end
if current(conditions["Reconciling"]) then
  return { status = "Progressing", message = said(conditions["Reconciling"]) }
end
if ready == nil then
  return { status = "Progressing", message = "Waiting for the operator to report Ready" }
end
if generation ~= nil and ready.observedGeneration ~= nil and ready.observedGeneration ~= generation then
  return { status = "Progressing", message = "Waiting for the operator to report Ready for generation " .. generation }
end
if ready.status == "True" then
  return { status = "Healthy", message = said(ready) }
end
return { status = "Progressing", message = said(ready) }
