package main

import (
	"context"
	"strings"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/log/tag"
)

// nodeAuthorizer lets the control plane (and the internal frontend, whose no-op claim mapper says
// admin) call everything, and an agent only what running its node's activities takes: polling its
// node's task queue, answering and heartbeating the tasks it was given, and the calls a worker makes
// to start and stop. Everything else an agent asks, listing, describing or signalling workflows,
// polling another queue, is refused.
type nodeAuthorizer struct{ logger log.Logger }

const workflowService = "/temporal.api.workflowservice.v1.WorkflowService/"

// What a worker's credential may call in its namespace, beyond polling (checked by queue below).
// The *ById variants are left out: they name any workflow's activity; a task token is the server's.
var workerCalls = map[string]bool{
	"RespondActivityTaskCompleted": true,
	"RespondActivityTaskFailed":    true,
	"RespondActivityTaskCanceled":  true,
	"RecordActivityTaskHeartbeat":  true,
	"DescribeNamespace":            true,
	"RecordWorkerHeartbeat":        true,
	"ShutdownWorker":               true,
}

func (a nodeAuthorizer) Authorize(_ context.Context, claims *authorization.Claims, target *authorization.CallTarget) (authorization.Result, error) {
	// What any client asks first (the SDKs, on connecting): the server's version and capabilities.
	if authorization.IsHealthCheckAPI(target.APIName) || target.APIName == workflowService+"GetSystemInfo" {
		return allow, nil
	}
	if claims == nil {
		return deny("the call carries no llmgw credential"), nil
	}
	if claims.System&authorization.RoleAdmin != 0 {
		return allow, nil
	}
	node, isNode := strings.CutPrefix(claims.Subject, nodeSubjectPrefix)
	method, isWorkflowService := strings.CutPrefix(target.APIName, workflowService)
	if !isNode || !isWorkflowService {
		return a.refused(claims, target, "an agent calls the workflow service only")
	}
	if claims.Namespaces[target.Namespace] == authorization.RoleUndefined {
		return a.refused(claims, target, "an agent works in its own namespace only")
	}
	if method == "PollActivityTaskQueue" {
		poll, ok := target.Request.(*workflowservice.PollActivityTaskQueueRequest)
		if ok && poll.GetTaskQueue().GetName() == "llmgw-node:"+node {
			return allow, nil
		}
		return a.refused(claims, target, "an agent polls its own node's task queue only")
	}
	if workerCalls[method] {
		return allow, nil
	}
	return a.refused(claims, target, "an agent runs its node's activities only")
}

var allow = authorization.Result{Decision: authorization.DecisionAllow}

func deny(reason string) authorization.Result {
	return authorization.Result{Decision: authorization.DecisionDeny, Reason: reason}
}

// refused logs the refusal (an agent asking beyond its node is worth an operator's look) and says why.
func (a nodeAuthorizer) refused(claims *authorization.Claims, target *authorization.CallTarget, reason string) (authorization.Result, error) {
	a.logger.Warn("llmgw: refused an agent's call",
		tag.NewStringTag("subject", claims.Subject), tag.NewStringTag("api", target.APIName),
		tag.NewStringTag("namespace", target.Namespace), tag.NewStringTag("reason", reason))
	return deny(reason), nil
}
