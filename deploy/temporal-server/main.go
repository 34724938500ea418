// Temporal server v1.29.1 with llmgw's authorizer: the server scripts/temporal-server.sh runs when
// started with --authorize. Its flags are the stock server's (--root, --config, --env) plus
// --key-file, the secret that signs the control plane's and the agents' credentials (claims.go).
package main

import (
	"flag"
	"fmt"
	"os"
	"path"
	"strings"

	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/log"
	_ "go.temporal.io/server/common/persistence/sql/sqlplugin/postgresql"
	"go.temporal.io/server/temporal"
)

func main() {
	root := flag.String("root", ".", "root directory of the config")
	configDir := flag.String("config", "config", "config directory, relative to --root")
	env := flag.String("env", "development", "config file's name (its environment)")
	keyFile := flag.String("key-file", "", "file holding the key that signs llmgw's Temporal credentials")
	flag.Parse()
	if err := run(path.Join(*root, *configDir), *env, *keyFile); err != nil {
		fmt.Fprintf(os.Stderr, "llmgw temporal-server: %v\n", err)
		os.Exit(1)
	}
}

func run(configDir, env, keyFile string) error {
	if keyFile == "" {
		return fmt.Errorf("--key-file is required: the server authorizes every call with it")
	}
	key, err := os.ReadFile(keyFile)
	if err != nil {
		return fmt.Errorf("reading --key-file: %w", err)
	}
	secret := []byte(strings.TrimSpace(string(key)))
	if len(secret) < 32 {
		return fmt.Errorf("--key-file holds %d bytes: a key of at least 32 is needed", len(secret))
	}
	cfg, err := config.LoadConfig(env, configDir, "")
	if err != nil {
		return fmt.Errorf("loading the config: %w", err)
	}
	logger := log.NewZapLogger(log.BuildZapLogger(cfg.Log))
	dynamic := dynamicconfig.NewNoopClient()
	if cfg.DynamicConfigClient != nil {
		if dynamic, err = dynamicconfig.NewFileBasedClient(cfg.DynamicConfigClient, logger, temporal.InterruptCh()); err != nil {
			return fmt.Errorf("dynamic config: %w", err)
		}
	}
	services := append([]string{"internal-frontend"}, temporal.DefaultServices...)
	server, err := temporal.NewServer(
		temporal.ForServices(services),
		temporal.WithConfig(cfg),
		temporal.WithDynamicConfigClient(dynamic),
		temporal.WithLogger(logger),
		temporal.InterruptOn(temporal.InterruptCh()),
		temporal.WithAuthorizer(nodeAuthorizer{logger: logger}),
		temporal.WithClaimMapper(func(*config.Config) authorization.ClaimMapper { return credentials{secret: secret} }),
	)
	if err != nil {
		return fmt.Errorf("creating the server: %w", err)
	}
	return server.Start()
}
