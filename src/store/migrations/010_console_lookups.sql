-- Indexes for the console's reads, which would read whole tables without them (the decisions table
-- keeps every model's history): a model's last hour of decisions for its sparkline
-- (store/changes.ts loadHistory), and the replicas changed since the events stream's last look, four
-- times a second while a console is open (replicaChangesAfter).
create index decisions_model_at on decisions (model, at);
create index replicas_updated on replicas (updated_at);
