package main

import (
	"fmt"
	"strings"

	"github.com/golang-jwt/jwt/v4"
	"go.temporal.io/server/common/authorization"
)

// credentials maps the bearer token of a call to whom it speaks for. A token is an HS256 JWT signed
// with the shared key: {"sub":"control-plane"} is the control plane's (every API), {"sub":"node:NAME",
// "ns":NAMESPACE,"exp":...} one agent's (its node's work in that namespace: authorizer.go). Calls
// without a token get no claims and are refused, but for the internal frontend's, whose claim mapper
// is the server's no-op one (the server's own workers reach it, agents must not: see
// docs/architecture.md).
type credentials struct{ secret []byte }

type tokenClaims struct {
	Namespace string `json:"ns,omitempty"`
	jwt.RegisteredClaims
}

const nodeSubjectPrefix = "node:"

func (c credentials) GetClaims(info *authorization.AuthInfo) (*authorization.Claims, error) {
	raw, found := strings.CutPrefix(info.AuthToken, "Bearer ")
	if !found {
		return nil, fmt.Errorf("the authorization header is not a bearer token")
	}
	var claims tokenClaims
	parser := jwt.NewParser(jwt.WithValidMethods([]string{"HS256"}))
	if _, err := parser.ParseWithClaims(raw, &claims, func(*jwt.Token) (any, error) { return c.secret, nil }); err != nil {
		return nil, fmt.Errorf("the bearer token is not a valid llmgw credential: %w", err)
	}
	switch {
	case claims.Subject == "control-plane":
		return &authorization.Claims{Subject: claims.Subject, System: authorization.RoleAdmin}, nil
	case strings.HasPrefix(claims.Subject, nodeSubjectPrefix) && claims.Namespace != "" && claims.ExpiresAt != nil:
		return &authorization.Claims{
			Subject:    claims.Subject,
			Namespaces: map[string]authorization.Role{claims.Namespace: authorization.RoleWorker},
		}, nil
	default:
		return nil, fmt.Errorf("the credential's subject %q is neither the control plane nor a node with a namespace and an expiry", claims.Subject)
	}
}
